#!/usr/bin/env python3
"""Where headroom-plot's time goes, stage by stage, for one or two versions of the package.

The machine is shared, so a single figure says little: each round runs every version once, in a
fresh process (imports and first-call costs included, as in a real run), alternating the order
(ABBA...), and the table gives each stage's median and minimum over the rounds. Stages run one
after another in one process (no render fork), so their sum is the CPU work of a run, not the wall
time of the real, two-process render.

    python stages.py RUN_DIR                                  # this checkout
    git archive REV plotting/headroom_plot | tar -x -C /tmp/before
    python stages.py --before /tmp/before/plotting RUN_DIR     # old and new interleaved

Stages: import (matplotlib and the plot modules), read (read_csv), analyse (the rest of load_run),
intervals (study.build: bootstrap and the scalability fit), and per figure its drawing and each
saved format, then the report. Wall and CPU seconds (CPU counts the reader's two threads).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _child(pkg_dir: str, run_dir: str, formats: str) -> None:
    sys.path.insert(0, pkg_dir)
    times: dict[str, list[float]] = {}
    order: list[str] = []

    class timed:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            self.t = (time.perf_counter(), time.process_time())

        def __exit__(self, *exc):
            w, c = time.perf_counter() - self.t[0], time.process_time() - self.t[1]
            if self.name not in times:
                order.append(self.name)
                times[self.name] = [0.0, 0.0]
            times[self.name][0] += w
            times[self.name][1] += c

    def wrap(mod, attr, name):
        f = getattr(mod, attr)

        def inner(*a, **k):
            with timed(name() if callable(name) else name):
                return f(*a, **k)
        setattr(mod, attr, inner)

    with timed("import"):
        from headroom_plot import plots, report, runs  # noqa: F401
        import matplotlib.figure
    from headroom_plot import analysis, cli
    try:
        from headroom_plot import study
    except ImportError:  # a --before package older than the study module
        study = None

    current = ["?"]
    wrap(runs, "read_csv", "read")
    for name in ("headroom", "latency_over_time", "overlay"):
        f = getattr(plots, name)

        def fig(*a, _f=f, _n=name, **k):
            current[0] = _n
            t0 = (time.perf_counter(), time.process_time())
            n0 = {key: list(v) for key, v in times.items()}
            out = _f(*a, **k)
            w, c = time.perf_counter() - t0[0], time.process_time() - t0[1]
            saved = [(times[key][0] - n0.get(key, [0, 0])[0], times[key][1] - n0.get(key, [0, 0])[1])
                     for key in times if key.startswith(_n + " save")]
            key = _n + " draw"
            if key not in times:
                order.append(key)
                times[key] = [0.0, 0.0]
            times[key][0] += w - sum(s[0] for s in saved)
            times[key][1] += c - sum(s[1] for s in saved)
            return out
        setattr(plots, name, fig)
    savefig = matplotlib.figure.Figure.savefig

    def save(self, fname, *a, **k):
        with timed(f"{current[0]} save {k.get('format', '?')}"):
            return savefig(self, fname, *a, **k)
    matplotlib.figure.Figure.savefig = save
    if study is not None:
        wrap(study, "build", "intervals")
    wrap(report, "write", "report")
    load = runs.load_run

    def load_run(*a, **k):
        t0 = (time.perf_counter(), time.process_time())
        n0 = list(times.get("read", [0.0, 0.0]))
        out = load(*a, **k)
        w, c = time.perf_counter() - t0[0], time.process_time() - t0[1]
        r = times["read"]
        times["analyse"] = [w - (r[0] - n0[0]), c - (r[1] - n0[1])]
        order.append("analyse")
        return out
    runs.load_run = load_run
    del analysis
    os.environ["HEADROOM_PLOT_NO_FORK"] = "1"
    out = tempfile.mkdtemp(prefix="stages-")
    t0 = (time.perf_counter(), time.process_time())
    code = cli.main([run_dir, "--out", out, "--quiet", "--format", formats])
    total = (time.perf_counter() - t0[0], time.process_time() - t0[1])
    if code != 0:
        sys.exit(code)
    sizes = {f: os.path.getsize(os.path.join(out, f)) for f in sorted(os.listdir(out))}
    times["total (no fork)"] = list(total)
    order.append("total (no fork)")
    print(json.dumps({"order": order, "times": times, "sizes": sizes, "out": out}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run", help="run directory (gen_csv.py --meta-dir writes one)")
    ap.add_argument("--before", help="directory holding an older headroom_plot package to compare")
    ap.add_argument("--after", default=os.path.dirname(HERE), help="default: this checkout's package")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--format", default="png,svg")
    ap.add_argument("--child", nargs=1, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        _child(a.child[0], a.run, a.format)
        return 0
    versions = {"after": os.path.abspath(a.after)}
    if a.before:
        versions = {"before": os.path.abspath(a.before), **versions}
    got: dict[str, list[dict]] = {k: [] for k in versions}
    for r in range(a.rounds):
        for k in (list(versions) if r % 2 == 0 else list(versions)[::-1]):
            p = subprocess.run([sys.executable, __file__, a.run, "--format", a.format, "--child", versions[k]],
                               check=True, capture_output=True, text=True)
            res = json.loads(p.stdout.strip().splitlines()[-1])
            got[k].append(res)
            import shutil
            shutil.rmtree(res["out"], ignore_errors=True)
    print(f"{a.run}, {a.rounds} rounds, load average {os.getloadavg()[0]:.1f} at the end; seconds, "
          "median (min) of the rounds")
    stages: list[str] = []
    for k in versions:
        for res in got[k]:
            for s in res["order"]:
                if s not in stages:
                    stages.append(s)
    stages.sort(key=lambda s: s == "total (no fork)")
    head = f"{'stage':28s}" + "".join(f"{k + ' wall':>18s}{k + ' CPU':>18s}" for k in versions)
    print(head)
    for s in stages:
        line = f"{s:28s}"
        for k in versions:
            for i in (0, 1):
                v = [res["times"][s][i] for res in got[k] if s in res["times"]]
                line += f"{statistics.median(v):>11.2f} ({min(v):4.2f})" if v else f"{'-':>18s}"
        print(line)
    for k in versions:
        print(f"{k} files:", ", ".join(f"{f} {n // 1024} kB" for f, n in got[k][-1]["sizes"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
