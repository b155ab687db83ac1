"""What both command lines (headroom-plot and headroom-plot compare) share: the parser whose usage errors are
one line, the numeric flags' ranges, the title's length, the SLO's defaults from meta.json, and the guard that
runs a command under the stop-signal handlers and turns every failure into one line.

cli.py (the plots and the capacity report) and comparecli.py (a comparison) import this module; neither
imports the other's helpers, so the two command lines form no import circle (cli.main hands `compare` to
comparecli, the only arrow between them).
"""
from __future__ import annotations

import argparse
import math
import os
import re
import signal
import sys


class Interrupted(BaseException):
    """A stop signal arrived; BaseException so no `except Exception` along the way swallows it."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


# The stop signals received since main() began. A handler's Interrupted can reach main as
# another exception: raised while a C extension initialises (matplotlib imports its PDF and
# SVG backends on first use, mid-render), CPython replaces it with "ImportError:
# initialization failed". main() reads this list to still say "stopped by ...".
received: list[int] = []


def on_signal(signum, _frame):
    received.append(signum)
    raise Interrupted(signum)


def raise_if_stopped() -> None:
    """Raise the Interrupted a stop signal's handler raised, if code we do not own swallowed it.

    A handler runs wherever the main thread is; inside a C extension's module init (numpy's
    Cython modules register their ABCs while `np.random` is first imported) the exception can
    be cleared, and the program would go on as if no signal had come."""
    if received:
        raise Interrupted(received[0])


def set_stop_handlers(handler) -> None:
    for sig in STOP_SIGNALS:
        signal.signal(sig, handler)


# Every numeric flag's range. The upper bounds keep each figure drawable and each loop bounded:
# 10000 s is the longest latency a results file can hold, 1e9 req/s its largest rate; a window
# under 1 ms would cut a step into more windows than it has requests.
LIMITS = {
    # flag: (type, low, low included, high, unit and hint)
    "--slo-percentile": (float, 0.0, False, 100.0, "(a percentile, e.g. 95 or 99.9)"),
    "--slo-ms": (float, 0.001, True, 1e7, "milliseconds (at most 10000 s, the longest latency a results file holds)"),
    "--target-rps": (float, 0.001, True, 1e9, "req/s"),
    "--max-error-rate": (float, 0.0, True, 1.0, "(a fraction: 0.01 = 1%)"),
    "--window": (float, 0.001, True, 1e7, "seconds"),
    "--knee-elasticity": (float, 0.0, False, 100.0, "(1 = the default knee)"),
    "--littles-tolerance": (float, 0.0, False, 100.0, "(a fraction: 0.10 = 10%)"),
    "--replicates": (int, 0, True, 100_000, "(0 turns intervals off)"),
}


def bounded(flag: str):
    """argparse type for `flag`: a finite number within LIMITS[flag], else one line naming the flag,
    the range and what was given (float() alone takes nan, inf and 1e999)."""
    kind, lo, lo_in, hi, unit = LIMITS[flag]
    shown_lo, shown_hi = (f"{x:g}".replace("e+0", "e").replace("e+", "e") for x in (lo, hi))
    rng = f"{'[' if lo_in else '('}{shown_lo}, {shown_hi}]"
    what = "an integer" if kind is int else "a finite number"

    def conv(v: str):
        try:
            x = kind(v.strip())
        except ValueError:
            x = None
        ok = x is not None and math.isfinite(x) and (x >= lo if lo_in else x > lo) and x <= hi
        if not ok:
            raise argparse.ArgumentTypeError(f"{flag} must be {what} in {rng} {unit} "
                                             f"(got {v[:40]!r})")
        return x
    return conv


MAX_TITLE = 200  # characters: a title is one line on a 12-inch plot; 100000 took minutes and gigabytes


def title(v: str) -> str:
    if len(v) > MAX_TITLE:
        raise argparse.ArgumentTypeError(f"--title must be at most {MAX_TITLE} characters (got {len(v)})")
    return v


class Parser(argparse.ArgumentParser):
    def error(self, message):
        """Usage errors as one line (argparse prints the usage first), exit status 2."""
        message = re.sub(r"^argument [^:]+: (?=--)", "", message)
        say(f"headroom-plot: error: {message}; see headroom-plot --help")
        raise SystemExit(2)


def slo_defaults(args, runs_meta: list[dict]) -> tuple[float, float]:
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


def guarded(make_parser, body, argv: list[str]) -> int:
    """Parse argv with make_parser() and run body(args) under the stop-signal handlers; any failure is one line."""
    for stream in (sys.stdout, sys.stderr):
        try:  # paths with bytes that are not UTF-8 print as those bytes, never raise
            stream.reconfigure(errors="surrogateescape" if stream is sys.stdout else "backslashreplace")
        except (AttributeError, ValueError):
            pass
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    received.clear()
    set_stop_handlers(on_signal)
    from .output import OutputError, sweep
    out_dir = None
    try:
        try:
            args = make_parser().parse_args(argv)
        except SystemExit as exc:  # --help, --version, or a usage error already said in one line
            return exc.code if isinstance(exc.code, int) else 2
        out_dir = args.out
        code = body(args)
        raise_if_stopped()
        return code
    except Interrupted as exc:
        return _stopped(exc.signum, out_dir, sweep)
    except OutputError as exc:
        sweep(out_dir)
        say(f"headroom-plot: error: {exc}")
        return 1
    except BrokenPipeError:
        # stdout closed early (| head): nothing more to say, and nothing to say it on
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except OSError:
            pass
        return 1
    except MemoryError:
        say("headroom-plot: error: out of memory; plot fewer or smaller runs at once")
        return 1
    except Exception as exc:  # a bug: one line, the traceback on request
        if received:  # not a bug: a stop signal's Interrupted, replaced on its way up
            return _stopped(received[0], out_dir, sweep)
        if out_dir:
            sweep(out_dir)
        if os.environ.get("HEADROOM_PLOT_DEBUG"):
            raise
        where = exc.__traceback__
        while where and where.tb_next:
            where = where.tb_next
        at = f" at {os.path.basename(where.tb_frame.f_code.co_filename)}:{where.tb_lineno}" if where else ""
        say(f"headroom-plot: internal error: {type(exc).__name__}: {str(exc)[:200]}{at}; "
            "HEADROOM_PLOT_DEBUG=1 shows the traceback; please report it")
        return 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


def _stopped(signum: int, out_dir, sweep) -> int:
    set_stop_handlers(signal.SIG_IGN)  # a second Ctrl-C must not interrupt the cleanup
    if out_dir:
        sweep(out_dir)
    name = signal.Signals(signum).name
    say(f"headroom-plot: stopped by {name}; files not complete were removed from {out_dir}"
        if out_dir else f"headroom-plot: stopped by {name}")
    return 128 + signum


def say(line: str) -> None:
    try:
        print(line.replace("\n", " "), file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
