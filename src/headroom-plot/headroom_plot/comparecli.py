"""headroom-plot compare: the command line of a comparison of two set-ups (numbers in compare.py).

`headroom-plot compare A B --out DIR` or `headroom-plot compare --a 'before/*/' --b 'after/*/' --out DIR`.
cli.main hands it every argument after `compare` unless the working directory holds a run named
`compare` (a results CSV, or a directory with one): then `headroom-plot compare ...` keeps its older
meaning (that run, plotted), and `python -m headroom_plot.comparecli ...` compares.
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import sys

from . import __version__, command

EPILOG = """\
sides:
  A, B      a run directory, a results CSV, a directory whose subdirectories are run
            directories (a group of repeats), or a quoted glob ('before/*/'). --a and --b
            (each repeatable) take the same and may be used instead of A and B.
            Repeats of one side are combined, as the capacity table combines runs.

outputs (in --out, which must not hold a headroom report of its own):
  comparison-<scenario>[-<A group>-vs-<B group>].<fmt>   both headroom curves with 95 % bands,
                                  the capacity difference and every difference's interval
  comparison.json                 the figures (docs/csv-format.md)
  report.md, report.html          the comparison's report (report.html has the images inlined)
  and the comparison table on stdout, then the paths written.

exit status: 0 ok (whatever the verdict), 2 bad input or a comparison that means nothing
  (different SLOs, no scenario in common, closed against open loop, a side empty, a run cut
  short), 1 an output file could not be written or an internal error, 130/143/129 stopped.
"""

MAX_LABEL = 60


def parser() -> argparse.ArgumentParser:
    p = command.Parser(
        prog="headroom-plot compare", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
        description="Compare two set-ups A and B: capacity at the SLO (B - A and B / A with 95 % intervals and a "
                    "verdict), latency at throughputs both reached, the knee and the scalability fit.")
    p.add_argument("sides", nargs="*", metavar="A B", help="side A and side B (or use --a and --b)")
    p.add_argument("--a", action="append", default=[], metavar="RUNS", help="side A: a run, a group or a glob")
    p.add_argument("--b", action="append", default=[], metavar="RUNS", help="side B: a run, a group or a glob")
    p.add_argument("--label", default=None, metavar="A=NAME,B=NAME",
                   help="names of the sides in the table, the plot and the report (default: the runs' own "
                        "label when a side's runs share one, else A and B)")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for the comparison (created)")
    for flag in ("--slo-percentile", "--slo-ms"):
        p.add_argument(flag, type=command.bounded(flag), default=None,
                       metavar="P" if flag == "--slo-percentile" else "L",
                       help="judge both sides by this SLO (default: the runs' meta.json SLO, which must agree)")
    p.add_argument("--max-error-rate", type=command.bounded("--max-error-rate"), default=0.01, metavar="R",
                   help="steps with a larger failed fraction do not count (default 0.01)")
    p.add_argument("--window", type=command.bounded("--window"), default=1.0, metavar="SECONDS",
                   help="the bootstrap's time slices are at most this long (default 1)")
    p.add_argument("--knee-elasticity", type=command.bounded("--knee-elasticity"), default=1.0, metavar="E",
                   help="as for headroom-plot (default 1)")
    p.add_argument("--replicates", type=command.bounded("--replicates"), default=400, metavar="B",
                   help="bootstrap replicates behind every interval (default 400; 0: no intervals, no verdict)")
    p.add_argument("--format", default="png,svg", metavar="LIST", help="image formats: png, svg, pdf")
    p.add_argument("--title", type=command.title, default=None, help="title of the report")
    p.add_argument("--quiet", action="store_true", help="do not print warnings")
    p.add_argument("--version", action="version", version=f"headroom-plot {__version__}")
    return p


def parse_labels(text: str | None) -> dict:
    """--label A=before,B=after (either order, either alone) -> {"A": ..., "B": ...}; InputError otherwise."""
    from .csvread import InputError
    if text is None:
        return {}
    m = re.fullmatch(r"\s*([AB])=(.*?),\s*([AB])=(.*)", text) or re.fullmatch(r"\s*([AB])=(.*)", text)
    if not m:
        raise InputError(f"--label {text[:60]!r}: write A=NAME,B=NAME (e.g. --label A=2.15.19,B=2.15.20)")
    g = m.groups()
    out = dict(zip(g[0::2], (v.strip() for v in g[1::2])))
    if len(out) != len(g) // 2:
        raise InputError(f"--label {text[:60]!r}: names A or B twice; write A=NAME,B=NAME")
    for k, v in out.items():
        if not v or len(v) > MAX_LABEL or any(ord(ch) < 32 for ch in v):
            raise InputError(f"--label: {k}'s name must be 1 to {MAX_LABEL} printable characters (got {v[:70]!r})")
    return out


def is_run(path: str) -> bool:
    """A results CSV, or a directory holding one: what headroom-plot plots."""
    return os.path.isfile(path) or bool(glob.glob(os.path.join(glob.escape(path), "results*.csv")))


def expand(side: str, specs: list[str]) -> list[str]:
    """A side's run paths: each spec a path or a glob; a directory that is no run but holds run directories
    stands for them (a group of repeats). InputError when the side is empty."""
    from .csvread import InputError
    out = []
    for spec in specs:
        paths = sorted(glob.glob(spec)) if glob.has_magic(spec) else [spec]
        if not paths:
            raise InputError(f"side {side}: {spec} matches no file or directory; check the pattern (quote it so "
                             "the shell does not expand it)")
        for p in paths:
            if os.path.isdir(p) and not is_run(p):
                kids = sorted(os.path.join(p, k) for k in os.listdir(p) if os.path.isdir(os.path.join(p, k))
                              and is_run(os.path.join(p, k)))
                if not kids:
                    raise InputError(f"side {side}: {p} holds no results CSV and no run directory: the side is "
                                     "empty; pass run directories written by credhub-perf")
                out += kids
            else:
                out.append(p)
    if not out:
        raise InputError(f"side {side} is empty: pass a run directory, a group of them, or --{side.lower()} GLOB")
    return list(dict.fromkeys(out))


def default_names(a_runs, b_runs, given: dict) -> dict:
    """The sides' names: --label's, else the runs' own label when each side's runs share one and the two
    differ, else A and B."""
    names = {}
    la, lb = {r.label for r in a_runs}, {r.label for r in b_runs}
    own = len(la) == 1 and len(lb) == 1 and la != lb
    for side, ls in (("A", la), ("B", lb)):
        names[side] = given.get(side) or (next(iter(ls))[:MAX_LABEL] if own else side)
    if names["A"] == names["B"]:
        names = {"A": names["A"] + " (A)", "B": names["B"] + " (B)"}
    return names


def main(argv: list[str] | None = None) -> int:
    """The comparison, under the same guard as headroom-plot: one line for any failure, never a traceback."""
    return command.guarded(parser, run, argv)


def run(args) -> int:
    from . import compare, comparereport, output
    from .csvread import InputError
    from .runs import Options, load_run, resolve

    formats = [f.strip().lower() for f in args.format.split(",") if f.strip()]
    if not formats or any(f not in ("png", "svg", "pdf") for f in formats):
        print(f"headroom-plot compare: error: --format {args.format!r}: use png, svg or pdf, comma-separated",
              file=sys.stderr)
        return 2
    try:
        if args.sides and (args.a or args.b):
            raise InputError("give the sides either as A B or with --a and --b, not both")
        if not args.a and not args.b and len(args.sides) != 2:
            raise InputError(f"{len(args.sides)} side(s) given: pass two, A and B (or --a RUNS --b RUNS)")
        specs = {"A": args.a or args.sides[:1], "B": args.b or args.sides[1:]}
        for side in ("A", "B"):
            if not specs[side]:
                raise InputError(f"side {side} is empty: pass --{side.lower()} RUNS as well")
        given = parse_labels(args.label)
        paths = {side: expand(side, specs[side]) for side in ("A", "B")}
        metas = {side: [resolve(p)[1] for p in paths[side]] for side in ("A", "B")}
        if args.slo_percentile is None and args.slo_ms is None:
            compare.check_slos(metas["A"], metas["B"])
        pct, ms = command.slo_defaults(args, metas["A"] + metas["B"])
        opts = Options(slo_percentile=pct, slo_s=ms / 1000.0, max_error_rate=args.max_error_rate,
                       window_s=args.window, knee_elasticity=args.knee_elasticity)
        runs = {side: [load_run(p, opts) for p in paths[side]] for side in ("A", "B")}
        for side in ("A", "B"):
            compare.check_runs(side, runs[side])
        compare.check_sides(runs["A"], runs["B"])
        names = default_names(runs["A"], runs["B"], given)
        if os.path.exists(os.path.join(args.out, "capacity.json")):
            raise InputError(f"--out {args.out} holds a headroom report (capacity.json), whose report.html this "
                             "would replace; choose another directory for the comparison")
    except InputError as exc:
        print(f"headroom-plot compare: error: {exc}", file=sys.stderr)
        return 2
    try:
        output.prepare(args.out)
    except output.OutputError as exc:
        print(f"headroom-plot compare: error: {exc}", file=sys.stderr)
        return 2
    try:
        result = compare.build(runs["A"], runs["B"], opts, args.replicates, names)
    except InputError as exc:
        print(f"headroom-plot compare: error: {exc}", file=sys.stderr)
        return 2
    command.raise_if_stopped()
    from . import compareplot
    images = {}
    written = []
    for item in result.items:
        paths_ = compareplot.draw(item, result, opts, args.out, formats)
        images[id(item)] = paths_
        written += paths_
        command.raise_if_stopped()
    written += comparereport.write(args.out, result, opts, images, args.title)
    warnings = result.warnings + [w for side in ("A", "B") for r in runs[side] for w in r.warnings]
    from . import credhubperf
    note = credhubperf.note([x for side in ("A", "B") for r in runs[side] for x in r.not_added])
    if note:  # once, as headroom-plot says it: what credhub-perf would have added
        print(f"note: {note}", file=sys.stderr)
    if not args.quiet:
        for w in warnings:
            print(f"warning: {w}", file=sys.stderr)
    print(comparereport.text_table(result, opts))
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
