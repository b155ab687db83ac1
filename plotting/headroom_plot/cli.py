"""headroom-plot: headroom plots and the capacity report from credhub-perf runs."""
from __future__ import annotations

import argparse
import os
import re
import sys
import threading

from . import __version__

EPILOG = """\
inputs:
  RUN_DIR   a credhub-perf run directory: meta.json, results.csv or several
            results-<tester>.csv (merged on time: throughput adds up), summary.json
            (cross-checked). Runs are grouped by meta.json's scenario and
            instances (its label when instances is null).
  CSV       a results CSV on its own: the credhub-perf format, upstream hey's
            (-o csv) or the old hey fork's (start-time,response-time[,...]),
            one header repeated per concatenated step. A meta.json beside it is used.

outputs (in --out):
  headroom-<scenario>-<label>.<fmt>            one per run
  latency-over-time-<scenario>-<label>.png     one per run (in --format's other
                                               formats only when png is not asked for)
  overlay-<scenario>.<fmt>                     when 2 or more runs share a scenario
  report.md, report.html                       tables, recommendation, warnings
                                               (report.html has the images inlined)

exit status: 0 ok, 2 bad input or usage (one line on stderr naming file and line).
"""


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "run"


def _positive(kind):
    def conv(v):
        try:
            x = kind(v)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{v!r} is not a number") from None
        if x <= 0:
            raise argparse.ArgumentTypeError(f"{v!r} must be greater than 0")
        return x
    return conv


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="headroom-plot", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
        description="Draw headroom plots (latency vs throughput, with the knee and the SLO) and write a "
                    "capacity report: how many CredHub instances serve T req/s within the latency SLO.")
    p.add_argument("inputs", nargs="+", metavar="RUN_DIR|CSV", help="run directories or results CSV files")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for plots and reports (created)")
    p.add_argument("--slo-percentile", type=_positive(float), default=None, metavar="P",
                   help="latency percentile the SLO bounds (default: meta.json's slo, else 95)")
    p.add_argument("--slo-ms", type=_positive(float), default=None, metavar="L",
                   help="SLO latency bound in milliseconds (default: meta.json's slo, else 100)")
    p.add_argument("--target-rps", type=_positive(float), default=None, metavar="T",
                   help="recommend the instance count that serves T req/s within the SLO "
                        "(marked extrapolated beyond the largest measured count)")
    p.add_argument("--max-error-rate", type=float, default=0.01, metavar="R",
                   help="steps with a larger failed fraction do not count as capacity (default 0.01)")
    p.add_argument("--window", type=_positive(float), default=1.0, metavar="SECONDS",
                   help="throughput window for the scatter; windows never straddle steps (default 1)")
    p.add_argument("--knee-elasticity", type=_positive(float), default=1.0, metavar="E",
                   help="the knee is where 1%% more throughput costs E%% more latency on the fitted curve "
                        "(default 1)")
    p.add_argument("--littles-tolerance", type=_positive(float), default=0.10, metavar="F",
                   help="warn when a closed-loop step's Little's law residual exceeds F (default 0.10)")
    p.add_argument("--format", default="png,svg", metavar="LIST",
                   help="comma-separated image formats: png, svg, pdf (default png,svg)")
    p.add_argument("--title", default=None, help="title for the report and the overlay plot")
    p.add_argument("--no-report", action="store_true", help="write only the images")
    p.add_argument("--quiet", action="store_true", help="do not print warnings (paths are still printed)")
    p.add_argument("--version", action="version", version=f"headroom-plot {__version__}")
    return p


def _slo_defaults(args, runs_meta: list[dict]) -> tuple[float, float]:
    """CLI values win; else the runs' meta.json slo when they all agree; else p95 <= 100 ms."""
    slos = {json_key((m.get("slo") or {}).get("percentile"), (m.get("slo") or {}).get("latency_s"))
            for m in runs_meta if isinstance(m.get("slo"), dict)}
    meta_pct, meta_lat = slos.pop() if len(slos) == 1 else (None, None)
    pct = args.slo_percentile
    if pct is None:
        pct = meta_pct if isinstance(meta_pct, (int, float)) and 0 < meta_pct <= 100 else 95.0
    ms = args.slo_ms
    if ms is None:
        ms = meta_lat * 1000 if isinstance(meta_lat, (int, float)) and meta_lat > 0 else 100.0
    return float(pct), float(ms)


def json_key(*values):
    return tuple(v if isinstance(v, (int, float)) and not isinstance(v, bool) else None for v in values)


def _import_plots() -> None:
    try:
        from . import plots  # noqa: F401
    except Exception:  # the main thread imports it again and reports any error
        pass


def _render(jobs):
    """Run render jobs, half of them in a forked child when the platform allows.

    Rendering is CPU-bound Python; a second process uses the second core (and, on a shared
    machine, a second share of the CPU).  The child only writes image files; the parent
    waits for it and renders anything the child did not finish itself.
    """
    if len(jobs) < 2 or not hasattr(os, "fork") or os.environ.get("HEADROOM_PLOT_NO_FORK"):
        return [(key, job()) for key, job in jobs]
    mine, theirs = jobs[0::2], jobs[1::2]
    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # child
        code = 1
        try:
            os.close(r)
            out = []
            for _key, job in theirs:
                out.append(job())
            os.write(w, ("\n".join("\t".join(p) for p in out) + "\n").encode())
            code = 0
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    results = [(key, job()) for key, job in mine]
    with os.fdopen(r) as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    lines = data.split("\n")
    if os.waitstatus_to_exitcode(status) == 0 and len(lines) >= len(theirs):
        results += [(key, [p for p in line.split("\t") if p]) for (key, _), line in zip(theirs, lines)]
    else:
        results += [(key, job()) for key, job in theirs]
    order = {id(job): i for i, (_, job) in enumerate(jobs)}
    keyed = list(zip(mine + theirs, results[: len(mine)] + results[len(mine):]))
    keyed.sort(key=lambda pair: order[id(pair[0][1])])
    return [res for _, res in keyed]


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    formats = [f.strip().lower() for f in args.format.split(",") if f.strip()]
    bad = [f for f in formats if f not in ("png", "svg", "pdf")]
    if bad or not formats:
        print(f"headroom-plot: error: --format {args.format!r}: use png, svg or pdf, comma-separated",
              file=sys.stderr)
        return 2
    if not 0 <= args.max_error_rate <= 1:
        print("headroom-plot: error: --max-error-rate must be between 0 and 1 (0.01 = 1%)", file=sys.stderr)
        return 2
    if args.slo_percentile is not None and args.slo_percentile > 100:
        print("headroom-plot: error: --slo-percentile must be at most 100", file=sys.stderr)
        return 2

    # matplotlib's import is mostly Python bytecode: do it in a thread while the CSV parse
    # (numpy loops that release the GIL) runs.
    warm = threading.Thread(target=_import_plots, daemon=True)
    warm.start()

    from .analysis import capacity_table, recommend
    from .csvread import InputError
    from .runs import Options, load_run, resolve

    try:
        metas = [resolve(a)[1] for a in args.inputs]
        pct, ms = _slo_defaults(args, metas)
        opts = Options(slo_percentile=pct, slo_s=ms / 1000.0, max_error_rate=args.max_error_rate,
                       window_s=args.window, knee_elasticity=args.knee_elasticity,
                       littles_tolerance=args.littles_tolerance)
        runs = [load_run(a, opts) for a in args.inputs]
    except InputError as exc:
        print(f"headroom-plot: error: {exc}", file=sys.stderr)
        return 2
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as exc:
        print(f"headroom-plot: error: --out {args.out}: cannot create: {exc.strerror}", file=sys.stderr)
        return 2

    warm.join()
    from . import plots, report

    seen: dict[str, int] = {}
    for r in runs:
        base = _slug(f"{r.scenario}-{r.label}")
        seen[base] = seen.get(base, 0) + 1
        r.slug = base if seen[base] == 1 else f"{base}-{seen[base]}"

    # latency-over-time is a PNG (a time series of samples gains nothing as SVG) unless only
    # vector formats were asked for
    lot = ["png"] if "png" in formats else formats
    by_scen: dict[str, list] = {}
    for r in runs:
        by_scen.setdefault(r.scenario, []).append(r)
    jobs = []  # (key, render); every render returns the paths it wrote
    for r in runs:
        jobs.append((("run", r.slug), lambda r=r: plots.headroom(r, opts, args.out, formats)))
        jobs.append((("run", r.slug), lambda r=r: plots.latency_over_time(r, opts, args.out, lot)))
    for scen, rs in sorted(by_scen.items()):
        if len(rs) >= 2:
            jobs.append((("overlay", scen), lambda rs=rs, scen=scen: plots.overlay(rs, opts, args.out, formats, scen,
                                                                                  args.title)))
    results = _render(jobs)
    written: list[str] = []
    images: dict[str, list[str]] = {}
    overlays: dict[str, list[str]] = {}
    for (kind, key), paths in results:
        (images if kind == "run" else overlays).setdefault(key, []).extend(paths)
        written += paths

    table = capacity_table([{"scenario": r.scenario, "instances": r.instances, "label": r.label,
                             "max_tput": r.max_tput, "how": r.max_tput_how, "knee": r.knee.throughput if r.knee else None}
                            for r in runs])
    recs = [recommend(table, scen, args.target_rps) for scen in sorted(by_scen)] if args.target_rps else []
    warnings = [w for r in runs for w in r.warnings]
    if not args.no_report:
        written += report.write(args.out, runs, table, recs, images, overlays, warnings, opts, args.title)
    if not args.quiet:
        for w in warnings:
            print(f"warning: {w}", file=sys.stderr)
    for rec in recs:
        print(f"recommendation: {rec.text}", file=sys.stderr)
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
