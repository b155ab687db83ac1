"""Pure, vectorised analysis: steps, windows, percentiles, Little's law, knee, SLO, capacity.

Definitions follow docs/design.md ("Definitions the Go and Python sides share"):
a step's duration is max(offset + response-time) - min(offset) over its rows,
throughput is all its rows (successes and failures) over that duration, and a
row is an error when status-code is 0 or >= 400 or the error column is not empty.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

PERCENTILES = (50, 90, 95, 99)
# A step is judged steady or drifting only when its requests start over at least STEADY_MIN_SPAN_S and
# each half holds at least STEADY_MIN_HALF of them (results.SteadyMinSpanS, results.SteadyMinHalf in Go).
STEADY_MIN_SPAN_S = 2.0
STEADY_MIN_HALF = 20


def percentiles(values: np.ndarray, qs) -> np.ndarray:
    """Exact nearest-rank percentiles: the smallest value with at least q% of values at or below it."""
    if len(values) == 0:
        return np.full(len(qs), np.nan)
    v = np.asarray(values)
    n = len(v)
    ranks = np.clip(np.ceil(np.asarray(qs, dtype=np.float64) / 100.0 * n).astype(np.int64) - 1, 0, n - 1)
    part = np.partition(v, np.unique(ranks))
    return part[ranks].astype(np.float64)


def assign_steps(segment: np.ndarray, concurrency: np.ndarray | None, rate: np.ndarray | None,
                 offset: np.ndarray) -> np.ndarray:
    """Step index per row: runs of equal (header block, concurrency, rate).

    When the runs in file order interleave (a straggler of one step after the
    first rows of the next), the runs are taken in start (offset) order
    instead, where a step's rows are contiguous. The CSV reader refuses such
    a credhub-perf file, as the Go reader does (docs/csv-format.md); rows
    built otherwise still get their steps.
    """
    n = len(segment)
    if n == 0:
        return np.empty(0, dtype=np.int32)

    def runs(seg, conc, rt):
        ch = np.diff(seg) != 0
        if conc is not None:
            ch |= np.diff(conc) != 0
        if rt is not None:
            ch |= np.diff(rt) != 0
        out = np.empty(len(seg), dtype=np.int32)
        out[0] = 0
        np.cumsum(ch, out=out[1:])
        return out

    ids = runs(segment, concurrency, rate)
    nruns = int(ids[-1]) + 1
    if nruns == 1:
        return ids
    # Distinct keys among run starts; more runs than keys means interleaving (or a revisited step).
    starts = np.concatenate(([0], np.flatnonzero(np.diff(ids)) + 1))
    keys = {(int(segment[i]), int(concurrency[i]) if concurrency is not None else 0,
             float(rate[i]) if rate is not None else 0.0) for i in starts}
    if len(keys) == nruns:
        return ids
    order = np.argsort(offset, kind="stable")
    sorted_ids = runs(segment[order], None if concurrency is None else concurrency[order],
                      None if rate is None else rate[order])
    out = np.empty(n, dtype=np.int32)
    out[order] = sorted_ids
    return out


def time_axis(t0: np.ndarray, t1: np.ndarray, offset: np.ndarray, latency: np.ndarray) -> tuple[float, float, str]:
    """The time axis of the plots, (start, end, note): the steps' spans [t0, t1], unless requests that
    only end late would take most of it.

    A step's span ends with its slowest request, so one 9999 s request stretches an axis whose
    requests all started within seconds: everything else is squeezed into a sliver at its left.
    When what follows the last request's start is longer than the time over which requests
    started, the axis ends a little after that last start, and the note (for the plots and the
    warnings) says how many requests end past it and when the last one does ("" when not cut)."""
    lo, hi = float(np.min(t0)), float(np.max(t1))
    last = float(offset.max())
    starts = last - lo
    if hi - last <= max(starts, 1.0):
        return lo, hi, ""
    cut = last + max(0.05 * starts, 1.0)
    late = int(np.count_nonzero(offset + latency > cut))
    return lo, cut, (f"time axis cut at {cut - lo:,.4g} s: {late:,} request(s) end after it, the last at "
                     f"{hi - lo:,.6g} s")


# Windows per step at most: a step stretched by one very slow request (a 9999 s response, a
# hostile offset) would otherwise get millions of windows and their arrays; beyond it they widen.
MAX_WINDOWS = 100_000


def windows(offset: np.ndarray, t0: float, t1: float, width: float) -> tuple[np.ndarray, int, float]:
    """Window index (0..k-1) of each row of ONE step, by start offset.

    The step's span [t0, t1] is cut into k = max(1, floor(span / width))
    equal windows (at most MAX_WINDOWS), so no window straddles two steps and a step shorter than
    the width is one window of its own (never merged into a neighbour).
    """
    span = max(t1 - t0, 1e-9)
    k = max(1, min(MAX_WINDOWS, int(math.floor(span / width + 1e-9))))
    w = span / k
    idx = np.floor((offset - t0) / w).astype(np.int32)
    np.clip(idx, 0, k - 1, out=idx)
    return idx, k, w


@dataclass
class Step:
    index: int
    concurrency: int | None
    rate: float | None
    requests: int
    errors: int
    duration_s: float
    throughput: float
    mean_s: float
    p50_s: float
    p90_s: float
    p95_s: float
    p99_s: float
    max_s: float
    slo_s: float                       # the SLO percentile's value
    t0: float
    t1: float
    in_flight: float                   # Little's law: throughput x mean latency
    littles_residual: float | None     # (concurrency - in_flight) / concurrency, closed loop only
    sched_lag_p99_s: float | None = None
    # From credhub-perf's summary.json (None: not recorded, e.g. an older run or a bare CSV).
    steady: bool | None = None
    tester_bound: bool | None = None
    flag_note: str = ""                # why the step is flagged, for the report
    tester_bound_reason: str = ""      # summary.json's, e.g. "host CPU 97 % busy on the tester's core(s)"
    # What to do about it, one item a kind of bound: credhub-perf's (summary.json's, or summary --json's).
    tester_bound_advice: list[str] = field(default_factory=list)
    tester_cpu: float | None = None
    host_cpu: float | None = None
    # summary.json's `incomplete`: some tester did not load the step for its whole slot (several testers).
    incomplete: bool | None = None
    incomplete_reason: str = ""
    # Steadiness not judged (summary.json `steady` null, or by the rule of results.Steadiness when there is
    # no verdict): "too short" (requests started within less than STEADY_MIN_SPAN_S) or "too few requests".
    unjudged: str = ""
    start_span_s: float = 0.0         # how long the step's requests kept starting
    # Whether an unjudged step may count: only after a run warm-up judged steady (runs.load sets it).
    counts_unjudged: bool = False

    @property
    def unjudged_left_out(self) -> bool:
        """Too short to judge steady and, without a steady run warm-up, not counted."""
        return bool(self.unjudged) and not self.counts_unjudged

    def usable(self) -> bool:
        """May count as capacity apart from the error rate: not judged unsteady, not tester-bound, not
        incomplete, and when too short to judge, after a run warm-up judged steady (docs/design.md)."""
        return (self.steady is not False and self.tester_bound is not True and self.incomplete is not True
                and (not self.unjudged or self.counts_unjudged))

    def counts(self, max_error_rate: float) -> bool:
        """May count as capacity: within the error limit and usable()."""
        return self.error_rate <= max_error_rate and self.usable()

    @property
    def error_rate(self) -> float:
        return self.errors / self.requests if self.requests else 0.0

    @property
    def closed(self) -> bool:
        return not self.rate

    def summary(self) -> dict:
        return {"concurrency": self.concurrency, "rate": self.rate, "requests": self.requests,
                "errors": self.errors, "duration_s": self.duration_s, "throughput": self.throughput,
                "mean_s": self.mean_s, "p50_s": self.p50_s, "p90_s": self.p90_s, "p95_s": self.p95_s,
                "p99_s": self.p99_s, "max_s": self.max_s}


def step_stats(index: int, lat: np.ndarray, off: np.ndarray, err: np.ndarray, concurrency: int | None,
               rate: float | None, slo_percentile: float, sched_lag: np.ndarray | None = None) -> Step:
    n = len(lat)
    t0 = float(off.min())
    t1 = float((off + lat).max())
    dur = max(t1 - t0, 1e-9)
    qs = list(PERCENTILES) + [slo_percentile]
    p = percentiles(lat, qs)
    mean = float(lat.mean())
    tput = n / dur
    in_flight = tput * mean
    resid = None
    if not rate and concurrency:
        resid = (concurrency - in_flight) / concurrency
    lag = None
    if sched_lag is not None and rate:
        lag = float(percentiles(sched_lag, [99])[0])
    return Step(index=index, concurrency=concurrency, rate=rate, requests=n, errors=int(err.sum()),
                duration_s=dur, throughput=tput, mean_s=mean, p50_s=p[0], p90_s=p[1], p95_s=p[2], p99_s=p[3],
                max_s=float(lat.max()), slo_s=p[4], t0=t0, t1=t1, in_flight=in_flight,
                littles_residual=resid, sched_lag_p99_s=lag, start_span_s=float(off.max() - t0))


def unjudged_by_rule(s: Step) -> str:
    """Why a step without a verdict could not be judged steady ("" when it could), by results.Steadiness's
    rule: its requests must start over at least STEADY_MIN_SPAN_S, at least 2 x STEADY_MIN_HALF of them."""
    if s.start_span_s < STEADY_MIN_SPAN_S:
        return "too short"
    if s.requests < 2 * STEADY_MIN_HALF:
        return "too few requests"
    return ""


def not_judged_text(steps: list[Step]) -> str:
    """How many steps could not be judged steady, why and what to do (results.NotJudgedText in Go); ""
    when every step was judged."""
    un = [s for s in steps if s.unjudged and s.requests]
    if not un:
        return ""
    short = [s for s in un if s.unjudged == "too short"]
    why = []
    if short:
        why.append(f"steps of {max(s.duration_s for s in short):.3g} s are too short to judge (their requests "
                   f"must start over at least {STEADY_MIN_SPAN_S:g} s): use steps.duration of "
                   f"{STEADY_MIN_SPAN_S + 1:g} s or more")
    if len(un) > len(short):
        why.append(f"{len(un) - len(short)} had too few requests to judge (at least {STEADY_MIN_HALF} in each half)")
    return f"{len(un)} of {len(steps)} steps could not be judged steady: " + "; ".join(why)


# ---------------------------------------------------------------- knee

@dataclass
class Knee:
    """Fitted latency = a + b * (xmax / (xmax - x))**p, and the knee on that curve.

    The knee is the throughput where the curve's elasticity d ln(latency) /
    d ln(throughput) reaches `elasticity`: past it, each 1 % more throughput
    costs more than `elasticity` % more latency.
    """

    a: float
    b: float
    xmax: float
    p: float
    elasticity: float
    throughput: float | None           # knee inside the measured range, else None
    estimate: float | None             # where the fit puts it, even beyond the measured range
    measured_max: float
    points: int

    def curve(self, x):
        x = np.asarray(x, dtype=np.float64)
        return self.a + self.b * (self.xmax / (self.xmax - x)) ** self.p

    def elasticity_at(self, x: float) -> float:
        m, p = self.xmax, self.p
        slope = self.b * p * m ** p * (m - x) ** (-p - 1)
        return float(x * slope / self.curve(x))


MAX_KNEE_POINTS = 64

# The last throughputs fit_knee saw and their grid: the bootstrap fits the same steps' throughputs a
# hundred times with other latencies, and the grid's powers, most of a fit's cost, depend only on them.
_knee_grid_cache: list = [None, None]


# The grid's shape, the same for every fit: xmax's steps above the largest throughput, and the powers.
_KNEE_MSTEPS = np.geomspace(1e-4, 50.0, 300)
_KNEE_PGRID = np.geomspace(0.25, 8.0, 41)


def _knee_grid(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The (xmax, p) grid of fit_knee for throughputs x, flattened, (xmax / (xmax - x))**p for
    every grid point (rows) and step (columns), and its square."""
    key = x.tobytes()
    if _knee_grid_cache[0] == key:
        return _knee_grid_cache[1]
    xm = float(x.max())
    mgrid = xm + xm * _KNEE_MSTEPS
    pgrid = _KNEE_PGRID
    mm, pp = (g.ravel() for g in np.meshgrid(mgrid, pgrid))
    # xmax / (xmax - x) once per xmax (not per grid point), then each power: grid point i is
    # (pgrid[i // 300], mgrid[i % 300]), as meshgrid lays them out
    ratio = mgrid[:, None] / (mgrid[:, None] - x[None, :])
    u = (ratio[None, :, :] ** pgrid[:, None, None]).reshape(len(mm), len(x))
    u2 = u * u
    u.flags.writeable = u2.flags.writeable = False
    _knee_grid_cache[:] = [key, (mm, pp, u, u2)]
    return mm, pp, u, u2


def fit_knee(x: np.ndarray, r: np.ndarray, elasticity: float = 1.0) -> Knee | None:
    """Fit the queueing-shaped curve to per-step (throughput, mean latency) and find the knee.

    latency = a + b (xmax / (xmax - x))**p is M/M/1 for p = 1 (a = fixed
    delay, b = service time, xmax = capacity); p < 1 follows closed-loop
    (MVA) ramps that pile up at the capacity, p > 1 the flat-then-sudden
    curves of many servers (M/M/c).  For every (xmax, p) on a grid - xmax
    geometrically just above the largest measured throughput, p from 0.25
    to 8 - (a, b) >= 0 come from weighted least squares on relative errors
    (weight 1/latency, so light-load steps count as much as saturated
    ones); the grid point with the smallest error wins.  All of it is one
    vectorised numpy pass.
    """
    x = np.asarray(x, dtype=np.float64)
    r = np.asarray(r, dtype=np.float64)
    keep = np.isfinite(x) & np.isfinite(r) & (x > 0) & (r > 0)
    x, r = x[keep], r[keep]
    if len(x) < 3:
        return None
    if len(x) > MAX_KNEE_POINTS:
        # The grid below costs (grid points x steps) per fit, and the bootstrap fits a hundred times:
        # thousands of steps took gigabytes and minutes. A ramp has tens; beyond MAX_KNEE_POINTS the
        # curve is fitted to an even subset in throughput order, which keeps both ends.
        pick = np.argsort(x, kind="stable")[np.unique(np.linspace(0, len(x) - 1, MAX_KNEE_POINTS).round()
                                                     .astype(np.int64))]
        x, r = x[pick], r[pick]
    xm = float(x.max())
    w = 1.0 / r
    y = r * w  # = 1
    mm, pp, u, u2 = _knee_grid(x)
    # The columns are w and c2 = u * w (y = 1): every sum below is a product of the cached powers
    # with a vector, so a fit touches the grid a few times and makes no grid-sized temporary.
    w2 = w * w
    s11 = float(w @ w)
    t1 = float(w @ y)
    s12 = u @ w2
    s22 = u2 @ w2
    t2 = u @ w
    det = s11 * s22 - s12 ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        a = (s22 * t1 - s12 * t2) / det
        b = (s11 * t2 - s12 * t1) / det
        neg_a = ~(a >= 0)
        a = np.where(neg_a, 0.0, a)
        b = np.where(neg_a, t2 / s22, b)
        neg_b = ~(b >= 0)
        b = np.where(neg_b, 0.0, b)
        a = np.where(neg_b, t1 / s11, a)
        # Sum of squares from the sums: n - 2a t1 - 2b t2 + a^2 s11 + 2ab s12 + b^2 s22. It cancels
        # near a perfect fit, so the few best grid points by it are compared again on their residuals.
        sse = len(x) - 2 * a * t1 - 2 * b * t2 + a * a * s11 + 2 * a * b * s12 + b * b * s22
    sse = np.where(np.isfinite(sse), sse, np.inf)
    best = np.argpartition(sse, 16)[:16] if len(sse) > 16 else np.arange(len(sse))
    with np.errstate(invalid="ignore", over="ignore"):
        resid = y[None, :] - a[best, None] * w[None, :] - b[best, None] * (u[best] * w[None, :])
        exact = np.einsum("ij,ij->i", resid, resid)
    exact = np.where(np.isfinite(exact) & np.isfinite(sse[best]), exact, np.inf)
    i = int(best[np.lexsort((best, exact))[0]])
    k = Knee(a=float(a[i]), b=float(b[i]), xmax=float(mm[i]), p=float(pp[i]), elasticity=elasticity,
             throughput=None, estimate=None, measured_max=xm, points=len(x))
    if k.b <= 0:
        return k
    k.estimate = hi = _knee_bisect(k, elasticity)
    if hi <= xm * 1.0001:
        k.throughput = hi
    return k


def _knee_bisect(k: Knee, elasticity: float) -> float:
    """The throughput where k's elasticity reaches `elasticity`, by bisection (it rises monotonically
    towards xmax). Knee.elasticity_at in plain floats, the same operations in the same order (so the
    same bits), and stopped once an iteration leaves (lo, hi) as it was: every further one would too,
    so the answer is that of the full 100 iterations. The bootstrap runs this a hundred times a run."""
    a, b, m, p = k.a, k.b, k.xmax, k.p
    lo, hi = 0.0, m * (1 - 1e-12)
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        slope = b * p * m ** p * (m - mid) ** (-p - 1)
        if mid * slope / (a + b * (m / (m - mid)) ** p) >= elasticity:
            if hi == mid:
                break
            hi = mid
        else:
            if lo == mid:
                break
            lo = mid
    return hi


# ---------------------------------------------------------------- SLO

def slo_ratio(step_slo_s, bound_s: float, by_request: list[dict], max_error_rate: float) -> np.ndarray:
    """Per step, the worst ratio of an SLO-percentile latency to its bound: the step's own over bound_s,
    and each of its request types' (by_request rows: step, slo_s, slo_bound_s, error_rate) over the type's
    bound; inf when a type is over the error limit (no latency makes that step pass). <= 1: every bound
    holds."""
    r = np.asarray(step_slo_s, dtype=float) / bound_s
    for f in by_request:
        k = f["step"]
        if not 0 <= k < len(r):
            continue
        t = np.inf if f["error_rate"] > max_error_rate else f["slo_s"] / f["slo_bound_s"]
        r[k] = max(r[k], t)
    return r


def max_throughput_at_slo(x: np.ndarray, p: np.ndarray, ok: np.ndarray, bound: float) -> tuple[float | None, str]:
    """Highest throughput whose SLO percentile stays within bound, interpolated between steps.

    Steps are in load order.  Each step that meets the bound counts with its
    own throughput; between a step that meets it and the next one that does
    not, the crossing is interpolated linearly in (throughput, latency).
    Steps over the error-rate limit (ok False) never count and are never
    interpolated into.  None when no step meets the bound ("never met"), or
    when no step counts at all ("no usable step": every one over the error
    limit, or left out by the caller as tester-bound or unsteady), which is
    not a statement about the SLO.
    """
    best, how = None, "never met"
    if len(x) and not np.any(ok):
        return None, "no usable step"
    if len(x) and not any(ok[i] and p[i] > bound for i in range(len(x))) and any(ok):
        # never crossed: the SLO would hold further out, this is only a floor
        return float(max(x[i] for i in range(len(x)) if ok[i])), "lower bound"
    for i in range(len(x)):
        if not ok[i] or p[i] > bound:
            continue
        if best is None or x[i] > best:
            best, how = float(x[i]), "measured"
        if i + 1 < len(x) and ok[i + 1] and p[i + 1] > bound and p[i + 1] > p[i] and np.isfinite(p[i + 1]):
            cross = x[i] + (bound - p[i]) * (x[i + 1] - x[i]) / (p[i + 1] - p[i])
            if cross > best:
                best, how = float(cross), "interpolated"
    return best, how


# ---------------------------------------------------------------- capacity

@dataclass
class CapacityRow:
    scenario: str
    group: str                 # instance count as text, or the label when instances is null
    instances: int | None
    runs: int
    max_tput: float | None     # median over the group's runs
    knee: float | None
    efficiency: float | None   # vs the smallest instance count measured
    labels: list[str] = field(default_factory=list)
    lower_bound: bool = False  # the SLO was never crossed: capacity is at least max_tput
    # Some run's steps at a higher load met the SLO but were not counted (tester-bound, not steady, not
    # judged steady, incomplete): capacity is at least max_tput; lower_bound_reason says why.
    capacity_is_lower_bound: bool = False
    lower_bound_reason: str = ""
    unusable: bool = False     # no run of the group had a step that counts: nothing known about the SLO
    why_none: str = ""         # why the group has no capacity though steps met the SLO (runs.no_capacity_reason)
    # 95 % intervals and the bootstrap replicates behind them (headroom_plot.study fills these in)
    max_tput_ci: tuple | None = None
    knee_ci: tuple | None = None
    max_tput_reps: np.ndarray | None = None
    knee_reps: np.ndarray | None = None
    # The open-loop confirmation (credhub-perf's verdict, openloop.py): what open arrivals hold (median
    # over the group's runs that had one), the capacity to size with and which figure it is ("open loop"
    # when open arrivals hold the SLO only lower, else "closed loop"), and the runs' headlines.
    open_loop: float | None = None
    size_with: float | None = None
    sized_by: str = "closed loop"
    headlines: list[str] = field(default_factory=list)
    # Why there is no figure to size with when open arrivals gave none (openloop.Confirmation.why_no_figure).
    no_figure: str = ""
    # The figure to size with is only a lower bound of what open arrivals hold (credhub-perf's open_loop
    # capacity_is_lower_bound: rates above it met the SLO but did not count): never fitted as a value.
    open_lower_bound: bool = False
    # credhub-perf's cold-target labels of the group's runs (warm-up off, steps not showing it warm).
    capacity_labels: list[str] = field(default_factory=list)


def _size_with(c: CapacityRow, rs: list[dict]) -> None:
    """The row's open-loop figures from its runs' (runs without a confirmation size with their own)."""
    opens = [r["open_loop"] for r in rs if r.get("open_loop") is not None]
    c.open_loop = float(np.median(opens)) if opens else None
    c.headlines = [r["headline"] for r in rs if r.get("headline")]
    c.capacity_labels = list(dict.fromkeys(r["capacity_label"] for r in rs if r.get("capacity_label")))
    if not any(r.get("sized_by") == "open loop" for r in rs):
        c.size_with = c.max_tput
        return
    c.sized_by = "open loop"
    sized = [r["size_with"] if r.get("sized_by") == "open loop" else r["max_tput"] for r in rs]
    c.size_with = float(np.median(sized)) if all(v is not None for v in sized) else None
    c.open_lower_bound = any(r.get("open_lower_bound") for r in rs if r.get("sized_by") == "open loop")
    if c.size_with is None:
        c.no_figure = next((r["no_figure"] for r in rs if r.get("no_figure")), "")


def capacity_table(rows: list[dict]) -> list[CapacityRow]:
    """rows: {scenario, instances, label, max_tput, knee} per run -> one row per (scenario, group)."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        key = (r["scenario"], r["instances"] if r["instances"] is not None else "label:" + r["label"])
        groups.setdefault(key, []).append(r)
    out = []
    for (scen, g), rs in groups.items():
        vals = [r["max_tput"] for r in rs if r["max_tput"] is not None]
        knees = [r["knee"] for r in rs if r["knee"] is not None]
        inst = rs[0]["instances"]
        out.append(CapacityRow(scenario=scen, group=str(inst) if inst is not None else rs[0]["label"],
                               instances=inst, runs=len(rs),
                               max_tput=float(np.median(vals)) if vals else None,
                               knee=float(np.median(knees)) if knees else None, efficiency=None,
                               labels=[r["label"] for r in rs],
                               lower_bound=any(r.get("how") == "lower bound" for r in rs),
                               capacity_is_lower_bound=any(r.get("lower_bound_reason") for r in rs if
                                                           r["max_tput"] is not None),
                               lower_bound_reason="; ".join(dict.fromkeys(
                                   f"{r['label']}: {r['lower_bound_reason']}" if len(rs) > 1 else
                                   r["lower_bound_reason"] for r in rs
                                   if r.get("lower_bound_reason") and r["max_tput"] is not None)),
                               unusable=all(r.get("how") == "no usable step" for r in rs),
                               why_none="" if vals else "; ".join(dict.fromkeys(r["why"] for r in rs if r.get("why")))))
        _size_with(out[-1], rs)
    out.sort(key=lambda c: (c.scenario, c.instances is None, c.instances or 0, c.group))
    for scen in {c.scenario for c in out}:
        counted = [c for c in out if c.scenario == scen and c.instances and c.max_tput]
        if not counted:
            continue
        base = min(counted, key=lambda c: c.instances)
        per = base.max_tput / base.instances
        for c in counted:
            c.efficiency = c.max_tput / (c.instances * per)
    return out
