"""Headroom against production: the production peak of a workload.json, the growth it can take.

`credhub-perf workload` reads CredHub's audit log into workload.json (its format: the `workload`
command's documentation) and the per-second arrivals by type into workload-arrivals.csv beside it
(header `second,type,requests`, `second` in integer Unix seconds). This module reads both, strictly
(one-line errors naming the file, and line, and the fix), and does the arithmetic:

- the operating point is the production peak, `rates.peak_second.requests` (the busiest second's
  requests: Cockcroft's headroom is the capacity left above the load carried, and the load a cluster
  must carry is its peak, not its mean);
- headroom = the capacity to size with / the peak, as a growth factor, and as time at a growth rate g
  per year: ln(factor) / ln(1 + g) years (compound growth, as traffic grows);
- the scaling study's target is the peak a year of growth from now: peak x (1 + g) (the peak itself
  without --growth), so its recommendation sizes for that.

Numbers only, numpy and the standard library: plots.arrivals draws the arrivals, report.py writes the
headroom section, study.py carries it to capacity.json.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
from dataclasses import dataclass, field

import numpy as np

from .csvread import InputError

FORMAT = "credhub-perf-workload/1"
MAX_JSON_BYTES = 16 << 20          # a workload.json holds counts, a few kilobytes
MAX_ARRIVAL_ROWS = 20_000_000       # a month of seconds by 7 types; more is not a workload's file
ARRIVALS_NAME = "workload-arrivals.csv"
ARRIVALS_HEADER = ("time", "unix_s", "requests")  # then a column per request type
MAX_GROWTH = 10.0                   # 1000 %/yr: beyond it the years are meaningless
_GROWTH = re.compile(r"\A\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*(?:/\s*(?:yr|year))?\s*\Z")
_TYPE = re.compile(r"\A[a-z][a-z0-9_]{0,63}\Z")


@dataclass
class Workload:
    path: str
    sha256: str
    peak: float                      # requests in the busiest second (req/s)
    peak_at: str | None = None
    p99_second: float | None = None  # the 99th percentile of per-second counts
    requests: int | None = None
    arrivals: "Arrivals | None" = None


@dataclass
class Arrivals:
    path: str
    seconds: np.ndarray              # sorted unique Unix seconds
    types: list[str]                 # most requests first
    counts: np.ndarray               # (len(types), len(seconds)) requests per type per second
    total: np.ndarray = field(default_factory=lambda: np.empty(0))


def parse_growth(text: str) -> float:
    """'40%/yr' or '40%' (also '40 %/year') -> 0.4 a year; anything else raises ValueError (one line)."""
    m = _GROWTH.match(text or "")
    g = float(m.group(1)) / 100 if m else None
    if g is None or not (0 < g <= MAX_GROWTH):
        raise ValueError(f"--growth must be a yearly growth like 40%/yr or 40%, above 0 and at most "
                         f"{MAX_GROWTH * 100:.0f}%/yr (got {str(text)[:40]!r})")
    return g


def headroom(capacity: float, peak: float, growth: float | None) -> tuple[float, float | None]:
    """(factor, years): capacity / peak, and how long growth a year takes the peak to the capacity
    (0 when the capacity is below the peak already; None without a growth rate)."""
    factor = capacity / peak
    if growth is None:
        return factor, None
    return factor, (math.log(factor) / math.log1p(growth) if factor > 1 else 0.0)


def target(peak: float, growth: float | None) -> float:
    """The scaling study's target: the peak after a year of growth (the peak itself without one)."""
    return peak * (1 + (growth or 0.0))


def headroom_text(factor: float, years: float | None, growth: float | None) -> str:
    """'3.0x headroom: 3.3 years at 40 %/yr'."""
    head = f"{factor:.1f}x headroom"
    if factor < 1:
        return f"{factor:.2f}x: below the production peak now (no headroom)"
    if years is None:
        return head + " (give --growth 40%/yr for the time it lasts)"
    return f"{head}: {years:.1f} years at {growth * 100:g} %/yr"


def rows(table, wl: Workload, growth: float | None, runs) -> list[dict]:
    """One headroom row per capacity row with a figure to size with: the factor, the years, and whether
    its runs replayed this very workload (meta.json's workload.sha256: a flag-chosen mix is not
    production's, so its headroom is the mix's, not production's)."""
    replayed = {(r.scenario, r.instances if r.instances is not None else r.label) for r in runs
                if isinstance((r.meta or {}).get("workload"), dict) and r.meta["workload"].get("sha256") == wl.sha256}
    out = []
    for c in table:
        if not c.size_with:
            continue
        factor, years = headroom(c.size_with, wl.peak, growth)
        key = (c.scenario, c.instances if c.instances is not None else c.group)
        out.append({"scenario": c.scenario, "instances": c.instances, "group": c.group,
                    "size_with_rps": float(c.size_with), "factor": factor, "years": years,
                    "replays_workload": key in replayed, "text": headroom_text(factor, years, growth)})
    return out


def _fail(path: str, what: str) -> InputError:
    return InputError(f"--workload {path}: {what}")


def _read_bounded(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_JSON_BYTES + 1)
    except FileNotFoundError:
        raise _fail(path, "no such file: give the workload.json `credhub-perf workload LOG...` wrote") from None
    except IsADirectoryError:
        raise _fail(path, "is a directory: give the workload.json file") from None
    except OSError as exc:
        raise _fail(path, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_JSON_BYTES:
        raise _fail(path, f"larger than {MAX_JSON_BYTES >> 20} MiB: not a workload.json")
    return data


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def load(path: str) -> Workload:
    """workload.json's operating point, and workload-arrivals.csv beside it when it is there."""
    data = _read_bounded(path)
    try:
        doc = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise _fail(path, f"not valid JSON ({str(exc)[:80]}): give the workload.json "
                          "`credhub-perf workload` wrote") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else None
        raise _fail(path, f"format is {str(got)[:40]!r}, want {FORMAT!r}: give a workload.json of "
                          "credhub-perf's `workload` command")
    rates = doc.get("rates")
    peak = rates.get("peak_second") if isinstance(rates, dict) else None
    n = peak.get("requests") if isinstance(peak, dict) else None
    if not _number(n) or n <= 0:
        raise _fail(path, "rates.peak_second.requests is missing or not above 0: the log has no peak to "
                          "size against")
    p99 = rates.get("p99_second")
    at = peak.get("at")
    wl = Workload(path=path, sha256=hashlib.sha256(data).hexdigest(), peak=float(n),
                  peak_at=at if isinstance(at, str) else None,
                  p99_second=float(p99) if _number(p99) and 0 <= p99 <= n else None,
                  requests=doc["requests"] if isinstance(doc.get("requests"), int) else None)
    beside = os.path.join(os.path.dirname(path) or ".", ARRIVALS_NAME)
    if os.path.exists(beside):
        wl.arrivals = read_arrivals(beside)
    return wl


def read_arrivals(path: str) -> Arrivals:
    """workload-arrivals.csv as `credhub-perf workload` writes it: `time,unix_s,requests,<type>...`, one row
    per second with at least one request (a missing second had none), each second once, a type's column
    its requests in that second, `requests` their sum."""
    try:
        f = open(path, encoding="utf-8", newline="")
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    rows: list[list[int]] = []
    with f:
        try:
            types = _arrivals_header(path, f.readline(4096).rstrip("\r\n"))
            for line_no, line in enumerate(f, start=2):
                if line_no > MAX_ARRIVAL_ROWS + 1:
                    raise InputError(f"{path}: more than {MAX_ARRIVAL_ROWS:,} rows: not a workload's arrivals")
                rows.append(_arrival_row(path, line_no, line, len(types)))
        except UnicodeDecodeError:
            raise InputError(f"{path}: not UTF-8 text: give the {ARRIVALS_NAME} `credhub-perf workload` "
                             "wrote") from None
    return _arrival_matrix(path, np.array(rows, dtype=np.int64).reshape(-1, len(types) + 2), types)


def _arrivals_header(path: str, header: str) -> list[str]:
    cols = header.split(",")
    types = cols[3:]
    if cols[:3] != list(ARRIVALS_HEADER) or not types or not all(_TYPE.match(t) for t in types) \
            or len(set(types)) != len(types):
        raise InputError(f"{path}:1: header {header[:60]!r}, want {','.join(ARRIVALS_HEADER)!r} and a column "
                         f"per request type: give the {ARRIVALS_NAME} `credhub-perf workload` wrote")
    return types


def _arrival_row(path: str, line_no: int, line: str, ntypes: int) -> list[int]:
    """[unix_s, requests, count per type]; the time column is the same second in RFC 3339 and not read."""
    parts = line.rstrip("\r\n").split(",")
    nums = parts[1:]
    ok = len(parts) == ntypes + 3 and all(p.isascii() and p.isdigit() and len(p) <= 12 for p in nums)
    if not ok:
        raise InputError(f"{path}:{line_no}: {line.strip()[:60]!r} is not `time,unix_s,requests` and "
                         f"{ntypes} counts (integers)")
    vals = [int(p) for p in nums]
    if vals[1] != sum(vals[2:]):
        raise InputError(f"{path}:{line_no}: requests {vals[1]} is not the sum of the types' counts "
                         f"{sum(vals[2:])}: the file was changed or cut")
    return vals


def _arrival_matrix(path: str, rows: np.ndarray, names: list[str]) -> Arrivals:
    if not len(rows):
        raise InputError(f"{path}: no rows: the log had no request, or the file was cut")
    seconds, first = np.unique(rows[:, 0], return_index=True)
    if len(seconds) != len(rows):
        dup = rows[np.setdiff1d(np.arange(len(rows)), first)[0], 0]
        raise InputError(f"{path}: second {dup} is listed twice: give each second once")
    counts = rows[first, 2:].T
    order = np.argsort(-counts.sum(axis=1), kind="stable")
    keep = order[counts[order].sum(axis=1) > 0]  # a type no second had is not drawn
    counts = counts[keep]
    return Arrivals(path=path, seconds=seconds, types=[names[i] for i in keep], counts=counts,
                    total=rows[first, 1])


_WIDTHS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


def binned(a: Arrivals, max_bins: int = 1500) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(bin starts in Unix seconds, mean req/s per type per bin, the busiest second of each bin, bin width s):
    at most max_bins bins of a round width over the interval, seconds without a row counting as 0, so a day
    draws as one picture; the busiest second per bin keeps a burst the means average away."""
    span = int(a.seconds[-1] - a.seconds[0]) + 1
    width = next((w for w in _WIDTHS if span / w <= max_bins), None) or math.ceil(span / max_bins)
    nb = math.ceil(span / width)
    idx = (a.seconds - a.seconds[0]) // width
    out = np.zeros((len(a.types), nb))
    for i in range(len(a.types)):
        out[i] = np.bincount(idx, weights=a.counts[i], minlength=nb) / width
    busiest = np.zeros(nb)
    np.maximum.at(busiest, idx, a.total)
    return a.seconds[0] + width * np.arange(nb), out, busiest, width
