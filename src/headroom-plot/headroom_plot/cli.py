"""headroom-plot: headroom plots and the capacity report from credhub-perf runs."""
from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import threading

from . import __version__
from .command import (MAX_TITLE, STOP_SIGNALS, Interrupted, Parser, bounded, guarded, on_signal, raise_if_stopped,
                      say, set_stop_handlers, slo_defaults, title)

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
  scalability-<scenario>.<fmt>                 when 2 or more instance counts have a capacity:
                                               the USL fit, its 95 % band, measured intervals
  capacity.json                                capacity, intervals, USL fit, recommendation
                                               (with --workload: the headroom against its peak)
  workload-arrivals.<fmt>                      --workload with workload-arrivals.csv beside it:
                                               production's arrivals over time by type
  report.md, report.html                       tables, recommendation, warnings
                                               (report.html has the images inlined)

Every file is written to a hidden temporary name and renamed when complete: a full disk,
Ctrl-C or SIGTERM never leaves a truncated file in --out.

compare two set-ups: headroom-plot compare A B --out DIR (see headroom-plot compare --help)

exit status: 0 ok, 2 bad input or usage (one line on stderr naming file and line),
  1 an output file could not be written (disk full, permissions) or an internal error,
  130 interrupted (SIGINT, Ctrl-C), 143 terminated (SIGTERM), 129 hung up (SIGHUP).
"""


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "run"


def _growth(v: str) -> float:
    from .workload import parse_growth
    try:
        return parse_growth(v)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="headroom-plot", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
        description="Draw headroom plots (latency vs throughput, with the knee and the SLO) and write a "
                    "capacity report: how many CredHub instances serve T req/s within the latency SLO.")
    p.add_argument("inputs", nargs="+", metavar="RUN_DIR|CSV", help="run directories or results CSV files")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for plots and reports (created)")
    p.add_argument("--slo-percentile", type=bounded("--slo-percentile"), default=None, metavar="P",
                   help="latency percentile the SLO bounds, in (0, 100] (default: meta.json's slo, else 95)")
    p.add_argument("--slo-ms", type=bounded("--slo-ms"), default=None, metavar="L",
                   help="SLO latency bound in milliseconds, in [0.001, 1e7] (default: meta.json's slo, else 100)")
    p.add_argument("--target-rps", type=bounded("--target-rps"), default=None, metavar="T",
                   help="recommend the instance count that serves T req/s within the SLO, T in [0.001, 1e9] "
                        "(marked extrapolated beyond the largest measured count)")
    p.add_argument("--workload", default=None, metavar="FILE",
                   help="workload.json of `credhub-perf workload`: its production peak is marked on the headroom "
                        "and utilisation plots, the report gives the headroom (capacity to size with / peak), "
                        "the recommendation sizes for peak x (1 + --growth); workload-arrivals.csv beside it is "
                        "drawn. Not with --target-rps")
    p.add_argument("--growth", type=_growth, default=None, metavar="RATE",
                   help="yearly growth of the production peak, e.g. 40%%/yr or 40%% (needs --workload): the "
                        "headroom in years, and the recommendation's target")
    p.add_argument("--max-error-rate", type=bounded("--max-error-rate"), default=0.01, metavar="R",
                   help="steps with a larger failed fraction do not count as capacity; in [0, 1] (default 0.01)")
    p.add_argument("--window", type=bounded("--window"), default=1.0, metavar="SECONDS",
                   help="throughput window for the scatter, in [0.001, 1e7]; windows never straddle steps (default 1)")
    p.add_argument("--knee-elasticity", type=bounded("--knee-elasticity"), default=1.0, metavar="E",
                   help="the knee is where 1%% more throughput costs E%% more latency on the fitted curve; "
                        "in (0, 100] (default 1)")
    p.add_argument("--littles-tolerance", type=bounded("--littles-tolerance"), default=0.10, metavar="F",
                   help="warn when a closed-loop step's Little's law residual exceeds F; in (0, 100] (default 0.10)")
    p.add_argument("--replicates", type=bounded("--replicates"), default=400, metavar="B",
                   help="bootstrap replicates behind the 95 %% intervals, in [0, 100000] (default 400; 0 turns "
                        "intervals off)")
    p.add_argument("--format", default="png,svg", metavar="LIST",
                   help="comma-separated image formats: png, svg, pdf (default png,svg)")
    p.add_argument("--title", type=title, default=None,
                   help=f"title for the report and the overlay plot (at most {MAX_TITLE} characters)")
    p.add_argument("--no-report", action="store_true", help="write only the images")
    p.add_argument("--quiet", action="store_true", help="do not print warnings (paths are still printed)")
    p.add_argument("--version", action="version", version=f"headroom-plot {__version__}")
    return p


def _import_plots() -> None:
    try:
        from . import plots  # noqa: F401
    except Exception:  # the main thread imports it again and reports any error
        pass


def _render(jobs, more=None):
    """Run render jobs, half of them in a forked child when the platform allows.

    Rendering is CPU-bound Python; a second process uses the second core (and, on a shared
    machine, a second share of the CPU).  The child only writes image files; the parent
    waits for it and renders anything the child did not finish itself.

    more(), when given, is the parent's work while the child renders: the bootstrap intervals,
    which no per-run plot needs. It returns (value, further jobs that need it); those render in
    the parent. The child then takes jobs 0, 2, 4... (each run's headroom plot, the largest),
    else jobs 1, 3, 5.... Returns (results in the order of jobs and then more's jobs, value).
    """
    serial = not hasattr(os, "fork") or os.environ.get("HEADROOM_PLOT_NO_FORK")
    if serial or not jobs or (more is None and len(jobs) < 2):
        value, later = more() if more is not None else (None, [])
        results = []
        for key, job in jobs + later:
            raise_if_stopped()
            results.append((key, job()))
        raise_if_stopped()
        return results, value
    theirs, mine = (jobs[0::2], jobs[1::2]) if more is not None else (jobs[1::2], jobs[0::2])
    r, w = os.pipe()
    # The child's read end sees EOF when the parent is gone, however it ended (even SIGKILL):
    # only the parent holds the write end, and the kernel closes it when the parent dies.
    alive_r, alive_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    # No stop signal between the fork and the child's own handlers: a signal now waits.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    pid = os.fork()
    if pid == 0:  # child
        code = 1
        try:
            os.close(r)
            os.close(alive_w)
            # A stop signal (Ctrl-C reaches the whole process group; the parent forwards
            # SIGTERM, and the watch below sends SIGTERM when the parent dies) unwinds the
            # render: output.write removes its temporary file.
            set_stop_handlers(on_signal)
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            _die_with_parent(alive_r)
            out = []
            for _key, job in theirs:
                out.append(job())
                raise_if_stopped()
            os.write(w, ("\n".join("\t".join(p) for p in out) + "\n").encode("utf-8", "surrogateescape"))
            code = 0
        except BaseException as exc:
            if not isinstance(exc, Interrupted):  # why it failed, for the parent's one line
                _write_reason(w, exc)
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    os.close(alive_r)
    reaped = False
    try:
        # Unblocked inside the try: a stop signal that came during the fork (the child was
        # already there) is raised here, where the child is stopped and reaped before we exit.
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        value, later = more() if more is not None else (None, [])
        raise_if_stopped()
        mine = mine + later
        results = []
        for key, job in mine:
            results.append((key, job()))
            raise_if_stopped()
        with os.fdopen(r, encoding="utf-8", errors="surrogateescape") as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
        reaped = True
    finally:
        if not reaped:  # interrupted or failed: stop the child before the caller cleans up
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            _reap(pid)
        os.close(alive_w)
    lines = data.split("\n")
    code = os.waitstatus_to_exitcode(status)
    if code == 0 and len(lines) >= len(theirs):
        results += [(key, [p for p in line.split("\t") if p]) for (key, _), line in zip(theirs, lines)]
    else:
        reason = (data[len(_FAILED):].strip() if data.startswith(_FAILED)
                  else f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}")
        results += [(key, job()) for key, job in theirs]
        # Said after the plots are drawn: had they failed here too, the error is the one line.
        say(f"headroom-plot: warning: the second render process failed ({reason[:200]}); "
             "its plots were drawn in this one, on one core")
    order = {id(job): i for i, (_, job) in enumerate(jobs + later)}
    keyed = list(zip(mine + theirs, results))
    keyed.sort(key=lambda pair: order[id(pair[0][1])])
    return [res for _, res in keyed], value


# What the render child writes on its result pipe, before the reason, when it fails.
_FAILED = "\0failed: "


def _write_reason(w: int, exc: BaseException) -> None:
    try:
        os.write(w, f"{_FAILED}{type(exc).__name__}: {exc}".replace("\n", " ").encode("utf-8", "backslashreplace"))
    except OSError:
        pass


def _die_with_parent(alive_r: int) -> None:
    """Send this (render child) process SIGTERM once the parent is gone.

    A thread waits on the pipe whose only writer is the parent: EOF comes when the parent
    exits or is killed, and also at once if it died before this call. No ctypes (for Linux's
    prctl(PR_SET_PDEATHSIG)): CPython on a BOSH stemcell is built without libffi, so the
    module is not there, and the pipe works on every POSIX system."""
    def watch():
        while True:
            try:
                if not os.read(alive_r, 1):
                    break
            except InterruptedError:
                continue
            except OSError:
                break
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="headroom-plot-parent-watch", daemon=True).start()


def _reap(pid: int) -> None:
    """Wait for the stopped child, ignoring further stop signals while doing so."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        while True:
            try:
                os.waitpid(pid, 0)
                return
            except ChildProcessError:
                return
            except InterruptedError:
                continue
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def main(argv: list[str] | None = None) -> int:
    """The whole program: one line on stderr for any failure or signal, never a traceback."""
    # One OpenBLAS thread, unless the caller chose otherwise (read when numpy loads, so before): the
    # program runs its own parallelism, a render child beside the parent and two reader threads, and
    # OpenBLAS's extra thread only spun on the bootstrap's small products: it doubled their CPU for
    # no gain in time and took the core the render child needed (1 s of 10 million rows' 8).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["compare"]:
        from . import comparecli
        if not comparecli.is_run("compare"):  # a run named compare keeps its meaning
            return comparecli.main(argv[1:])
    return guarded(parser, _main, argv)


def _open_loop(r) -> dict:
    """A run's open-loop confirmation for the capacity table (openloop.py)."""
    from . import openloop
    return openloop.row_figures(r)


def _render_jobs(runs, opts, args, formats: list[str]) -> list:
    """Every per-run and per-scenario image as (key, render); each render returns the paths it wrote.
    Gives each run its file-name slug first."""
    from . import plots, timeview, utilisation, utilplot

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
        util = utilisation.from_summary(r.summary, os.path.join(r.path, "summary.json"))
        r.warnings += util.warnings
        jobs.append((("run", r.slug),
                     lambda r=r, u=util: utilplot.draw_run(r, u, args.out, formats, peak=opts.peak_rps)))
        if r.confirmation is not None:
            jobs.append((("run", r.slug), lambda r=r: timeview.draw(r, opts, args.out, lot)))
    for scen, rs in sorted(by_scen.items()):
        if len(rs) >= 2:
            jobs.append((("overlay", scen), lambda rs=rs, scen=scen: plots.overlay(rs, opts, args.out, formats, scen,
                                                                                  args.title)))
    return jobs


def _workload(args):
    """--workload's production peak (workload.py), checked against the flags it replaces or needs."""
    from . import workload
    from .csvread import InputError
    if args.workload is None:
        if args.growth is not None:
            raise InputError("--growth needs --workload (the production peak it grows from)")
        return None
    if args.target_rps is not None:
        raise InputError("--workload sets the target (its peak x (1 + --growth)): give --workload or "
                         "--target-rps, not both")
    wl = workload.load(args.workload)
    args.target_rps = workload.target(wl.peak, args.growth)
    return wl


def _workload_figures(wl, table, runs, args, formats):
    """The headroom rows for the report and capacity.json, and the arrivals' render job."""
    from . import plots, workload
    if wl is None:
        return None, []
    rows = workload.rows(table, wl, args.growth, runs)
    doc = {"file": wl.path, "sha256": wl.sha256, "peak_rps": wl.peak, "peak_at": wl.peak_at,
           "p99_second_rps": wl.p99_second, "growth_per_year": args.growth, "target_rps": args.target_rps,
           "headroom": rows}
    jobs = []
    if wl.arrivals is not None:
        jobs.append((("workload", "arrivals"), lambda: plots.arrivals(wl.arrivals, wl.peak, args.out, formats)))
    return doc, jobs


def _main(args) -> int:
    formats = [f.strip().lower() for f in args.format.split(",") if f.strip()]
    bad = [f for f in formats if f not in ("png", "svg", "pdf")]
    if bad or not formats:
        print(f"headroom-plot: error: --format {args.format!r}: use png, svg or pdf, comma-separated",
              file=sys.stderr)
        return 2

    # matplotlib's import is mostly Python bytecode: do it in a thread while the CSV parse
    # (numpy loops that release the GIL) runs.
    warm = threading.Thread(target=_import_plots, daemon=True)
    warm.start()

    from . import credhubperf, output
    from .analysis import capacity_table
    from .csvread import InputError
    from .runs import Options, load_run, resolve

    try:
        metas = [resolve(a)[1] for a in args.inputs]
        pct, ms = slo_defaults(args, metas)
        opts = Options(slo_percentile=pct, slo_s=ms / 1000.0, max_error_rate=args.max_error_rate,
                       window_s=args.window, knee_elasticity=args.knee_elasticity,
                       littles_tolerance=args.littles_tolerance)
        wl = _workload(args)
        opts.peak_rps = wl.peak if wl else None
        runs = [load_run(a, opts) for a in args.inputs]
    except InputError as exc:
        print(f"headroom-plot: error: {exc}", file=sys.stderr)
        return 2
    try:
        output.prepare(args.out)
    except output.OutputError as exc:
        print(f"headroom-plot: error: {exc}", file=sys.stderr)
        return 2

    table = capacity_table([{"scenario": r.scenario, "instances": r.instances, "label": r.label,
                             "max_tput": r.max_tput, "how": r.max_tput_how, "why": r.no_capacity_why,
                             "lower_bound_reason": r.lower_bound_reason if r.capacity_is_lower_bound else "",
                             "knee": r.knee.throughput if r.knee else None, **_open_loop(r)}
                            for r in runs])
    from . import study as studies

    warm.join()
    from . import report, scaleplot, utilplot

    jobs = _render_jobs(runs, opts, args, formats)
    wl_doc, wl_jobs = _workload_figures(wl, table, runs, args, formats)
    jobs += wl_jobs

    def intervals():
        # the bootstrap intervals and the scalability fit, while the child draws the headroom plots
        study = studies.build(runs, table, opts, args.target_rps, args.replicates)
        return study, ([(("overlay", scen), lambda s=s: scaleplot.draw(s, opts, args.out, formats, args.target_rps))
                        for scen, s in sorted(study.scenarios.items()) if s.fit is not None]
                       + [(("overlay", scen), lambda s=s, scen=scen: utilplot.draw_study(
                           scen, [(n, cap, u) for n, cap, u in s.utils if n is not None], s.ceiling, args.out,
                           formats, peak=opts.peak_rps)) for scen, s in sorted(study.scenarios.items())])

    results, study = _render(jobs, intervals)
    written: list[str] = []
    images: dict[str, list[str]] = {}
    overlays: dict[str, list[str]] = {}
    for (kind, key), paths in results:
        # the arrivals' picture goes with the overlays, under a key no scenario has
        (images if kind == "run" else overlays).setdefault("(workload)" if kind == "workload" else key, []).extend(paths)
        written += paths
    study.workload = wl_doc

    recs = [s.advice for _, s in sorted(study.scenarios.items()) if s.advice is not None]
    warnings = [w for r in runs for w in r.warnings]
    if not args.no_report:
        written += report.write(args.out, runs, table, recs, images, overlays, warnings, opts, args.title,
                                study=study)
        written.append(studies.write_json(args.out, study, opts))
    note = credhubperf.note([x for r in runs for x in r.not_added])
    if note:  # said once for all runs, --quiet or not: what this output lacks, and the fix
        print(f"note: {note}", file=sys.stderr)
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
