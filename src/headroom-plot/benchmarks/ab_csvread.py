#!/usr/bin/env python3
"""Before/after timing of headroom-plot's CSV reader (or all of headroom-plot) on one file.

On a shared machine two separate benchmark runs are minutes apart under different loads, so
this runs both versions in one session, interleaved (ABBA...), and prints each one's spread.
BEFORE and AFTER are directories holding a headroom_plot package, e.g. an older commit's:

    git archive REV plotting/headroom_plot | tar -x -C /tmp/before
    python ab_csvread.py --before /tmp/before/plotting RUN_DIR/results.csv
    python ab_csvread.py --before /tmp/before/plotting --end-to-end RUN_DIR   # PNG+SVG, report

read_csv is timed in this process (wall and CPU); --end-to-end runs headroom-plot once per
round in a child process (wall and the child's user+sys CPU).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _reader(name: str, pkg_dir: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(pkg_dir, "headroom_plot", "csvread.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _plot_once(pkg_dir: str, run: str) -> tuple[float, float]:
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from headroom_plot.cli import main; "
            "sys.exit(main(sys.argv[2:]))")
    out = tempfile.mkdtemp(prefix="ab-csvread-")
    try:
        r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        subprocess.run([sys.executable, "-c", code, pkg_dir, run, "--out", out, "--quiet"],
                       check=True, stdout=subprocess.DEVNULL)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.perf_counter() - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("path", help="results CSV (or run directory with --end-to-end)")
    ap.add_argument("--before", required=True, help="directory holding the old headroom_plot package")
    ap.add_argument("--after", default=os.path.dirname(HERE), help="directory holding the new one (default: this checkout's)")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--end-to-end", action="store_true", help="time all of headroom-plot, not only read_csv")
    a = ap.parse_args()
    dirs = {"before": os.path.abspath(a.before), "after": os.path.abspath(a.after)}
    if a.end_to_end:
        run = {k: (lambda d=d: _plot_once(d, a.path)) for k, d in dirs.items()}
    else:
        mods = {k: _reader(f"csvread_{k}", d) for k, d in dirs.items()}

        def timed(mod):
            t0, c0 = time.perf_counter(), time.process_time()
            mod.read_csv(a.path)
            return time.perf_counter() - t0, time.process_time() - c0

        run = {k: (lambda m=m: timed(m)) for k, m in mods.items()}
        for m in mods.values():
            m.read_csv(a.path)  # page cache and first-call costs out of the figures
    wall: dict[str, list[float]] = {k: [] for k in dirs}
    cpu: dict[str, list[float]] = {k: [] for k in dirs}
    for r in range(a.rounds):
        for k in (list(dirs) if r % 2 == 0 else list(dirs)[::-1]):
            w, c = run[k]()
            wall[k].append(w)
            cpu[k].append(c)
    print(f"{'end to end' if a.end_to_end else 'read_csv'} on {a.path}, {a.rounds} rounds interleaved, "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    for k in dirs:
        w, c = wall[k], cpu[k]
        print(f"{k:6s} wall min {min(w):.2f} median {statistics.median(w):.2f} max {max(w):.2f} s; "
              f"CPU min {min(c):.2f} median {statistics.median(c):.2f} max {max(c):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
