"""Comparing two set-ups, A and B: is B's capacity at the SLO different, by how much, how sure.

Each side is one run or a group of repeats. Per scenario both sides ran
(and per instance count both measured, when both are scaling studies):

- capacity at the SLO: B - A and B / A with 95 % intervals. Each side's
  replicates come from the time-preserving block bootstrap of its own runs
  (headroom_plot.bootstrap, exactly as for the capacity table; repeats of one
  side combined by resampling runs, bootstrap.combine), and the two sides are
  resampled independently, so the k-th replicate of B - A is the k-th of B
  less the k-th of A. The verdict is "lower" or "higher" when the interval of
  B - A leaves out 0, else "no difference the data can show", with the
  smallest difference these runs would have shown four times in five
  (detectable()). A side whose capacity is a lower bound or unknown turns the
  verdict into "at least ..." or "cannot compare", with the reason
  credhub-perf gave for that side (Run.lower_bound_reason, no_capacity_why).
  These are closed-loop capacities; beside them each side's figure to size
  with after its open-loop confirmation, credhub-perf's, is shown and not
  compared (comparesizing.py), and the verdict names it when open arrivals
  hold the SLO lower on either side.
- latency at matched throughput: p50, p95 and p99 of both sides at
  throughputs both reached, each interpolated on its own side's steps, with
  intervals from the same block bootstrap (every step's replicates are
  interpolated replicate by replicate).
- the knee of each side, and the Universal Scalability Law's parameters when
  both sides measured at least two instance counts.

check() refuses comparisons that mean nothing (different SLOs, no scenario in
common, closed against open loop, a run cut short) with one line naming the
fix. Everything here is numbers; compareplot draws, comparereport writes.
"""
from __future__ import annotations

import math
import os
import zlib
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from . import analysis, bootstrap, comparesizing, openloop, scalability, study
from .comparesizing import poss
from .csvread import InputError
from .runs import Options, Run

SCHEMA = 1
LATENCY_PERCENTILES = (50, 95, 99)
# Where latency is compared: these shares of the smaller side's capacity (or of the most throughput both
# sides reached, without one), those at or above the least throughput both reached.
MATCH_FRACTIONS = (0.25, 0.5, 0.75, 0.9)   # not 1: at its capacity a closed loop's curve turns vertical
POWER = 0.80                   # the power behind the smallest detectable difference
LOWER, HIGHER, SAME, CANNOT = "lower", "higher", "no difference the data can show", "cannot compare"
BAND_POINTS = 60               # throughputs along each side's curve for the plot's band


@dataclass
class Estimate:
    value: float | None
    interval: tuple | None = None      # (lo, hi), or None without enough replicates


@dataclass
class Difference:
    """B - A and B / A of one figure, with intervals, and the smallest difference these runs could show."""
    a: Estimate
    b: Estimate
    diff: Estimate
    ratio: Estimate
    detectable: float | None = None    # a fraction of A (0.08 = 8 %)

    @property
    def shows(self) -> str:
        """lower / higher when the interval of B - A leaves out 0, else SAME (CANNOT without an interval)."""
        ci = self.diff.interval
        if ci is None:
            return CANNOT
        return LOWER if ci[1] < 0 else HIGHER if ci[0] > 0 else SAME


@dataclass
class Curve:
    """One run's latency percentiles against throughput on its counted steps (in load order, each step
    above every earlier one's throughput, so the curve is a function of throughput) and their replicates."""
    x: np.ndarray                              # steps
    p: dict                                    # percentile -> steps (seconds)
    xr: np.ndarray                             # steps x replicates
    pr: dict                                   # percentile -> steps x replicates


@dataclass
class Group:
    """One side's runs of one scenario and instance count (or label, without a count)."""
    side: str                                  # "A" or "B"
    scenario: str
    key: object                                # instances, or "label:<label>"
    runs: list[Run]
    row: analysis.CapacityRow
    cap_reps: np.ndarray
    knee_reps: np.ndarray
    curves: list[Curve] = field(default_factory=list)

    @property
    def what(self) -> str:
        """The group in text: "2 instances", or its label without an instance count."""
        n = self.row.instances
        return f"{n} instance{'s' if n != 1 else ''}" if n is not None else f"label {self.row.group}"

    def unknown_reason(self) -> str:
        """Why the group has no capacity at the SLO ("" when it has one): credhub-perf's reason when it gave
        one, else what the steps show."""
        r = self.row
        if r.max_tput is not None:
            return ""
        if r.why_none:
            return r.why_none
        if r.unusable:
            return "no step counts (every one over the error limit, tester-bound, not steady or incomplete)"
        return "no step met the SLO: its capacity is below the lightest step's load"

    def lower_bound_reason(self) -> str:
        """Why the capacity is only a lower bound ("" when it is not): credhub-perf's reason for steps left
        out, or the SLO never crossed."""
        r = self.row
        if r.max_tput is None:
            return ""
        if r.capacity_is_lower_bound:
            return "steps at a higher load met the SLO but were not counted (" + r.lower_bound_reason + ")"
        if r.lower_bound:
            return "the SLO was never crossed: the ramp stopped before latency reached it"
        return ""


@dataclass
class LatencyPoint:
    throughput: float
    percentile: int
    d: Difference


@dataclass
class Item:
    """A and B compared on one scenario (and instance count)."""
    scenario: str
    a: Group
    b: Group
    capacity: Difference
    verdict: str
    text: str
    at_least: bool = False
    latency: list[LatencyPoint] = field(default_factory=list)
    knee: Difference | None = None
    # Each side's figure to size with after its open-loop confirmation, credhub-perf's (comparesizing.py).
    sizing: dict = field(default_factory=dict)     # "A"/"B" -> comparesizing.Sizing


@dataclass
class UslCompare:
    scenario: str
    a: scalability.Fit
    b: scalability.Fit
    lam: Difference
    sigma: Difference
    kappa: Difference


@dataclass
class Comparison:
    names: dict                                # "A"/"B" -> label
    paths: dict                                # "A"/"B" -> run paths
    items: list[Item]
    usl: dict[str, UslCompare]
    replicates: int
    warnings: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- intervals of differences

def detectable(lo: float, hi: float, level: float = bootstrap.LEVEL, power: float = POWER) -> float:
    """The smallest true difference an interval of this width would show (leave 0 out) with probability
    `power`: (z of the level + z of the power) standard errors, the standard error read off the interval
    as for a normal one. Half the interval's width is the difference shown half the time."""
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return (z + NormalDist().inv_cdf(power)) * (hi - lo) / (2 * z)


def difference(a: float | None, a_reps: np.ndarray, b: float | None, b_reps: np.ndarray) -> Difference:
    """B - A and B / A with their intervals; the sides' replicates are independent, paired by index."""
    ea = Estimate(a, _ci(a_reps, a))
    eb = Estimate(b, _ci(b_reps, b))
    if a is None or b is None:
        return Difference(ea, eb, Estimate(None), Estimate(None))
    n = min(len(a_reps), len(b_reps))
    da, db = np.asarray(a_reps[:n], dtype=np.float64), np.asarray(b_reps[:n], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(da > 0, db / da, np.nan)
        d = Estimate(b - a, _ci(db - da, b - a))
        r = Estimate(b / a if a > 0 else None, _ci(ratio, b / a) if a > 0 else None)
    det = None
    if r.interval is not None:
        det = detectable(*r.interval)
    return Difference(ea, eb, d, r, det)


def _ci(reps: np.ndarray, point: float | None) -> tuple | None:
    if point is None or not len(reps):
        return None
    lo, hi = bootstrap.interval(np.asarray(reps, dtype=np.float64), point=point)
    return None if lo is None else (lo, hi)


# ---------------------------------------------------------------- the verdict

def pct(v: float) -> str:
    """A fraction as a rounded percentage: 0.312 -> "31 %", 0.004 -> "0.4 %"."""
    v = abs(v) * 100
    return f"{v:.0f} %" if v >= 9.5 else f"{v:.1f} %" if v >= 0.095 else f"{v:.2f} %"


def verdict(a: str, b: str, d: Difference, a_unknown: str = "", b_unknown: str = "",
            a_floor: str = "", b_floor: str = "") -> tuple[str, str, bool]:
    """(word, sentence, whether it is an "at least") for B's capacity against A's.

    a, b: the sides' names; *_unknown: why a side has no capacity; *_floor: why a side's capacity is only a
    lower bound (its true capacity may be higher). A floor on B can still show B higher ("at least"), one on
    A can still show B lower; the other way round the data cannot tell."""
    for name, why in ((a, a_unknown), (b, b_unknown)):
        if why:
            return CANNOT, f"cannot compare: {poss(name)} capacity is unknown because {why}", False
    if d.ratio.interval is None or d.diff.interval is None:
        return CANNOT, ("cannot compare: no interval for B - A (--replicates 0, a mix, or too few replicates "
                        "met the SLO)").replace("B - A", f"{b} - {a}"), False
    (rlo, rhi), value = d.ratio.interval, d.ratio.value
    word = d.shows
    if a_floor and b_floor:
        return CANNOT, (f"cannot compare: both capacities are lower bounds ({a}: {a_floor}; {b}: {b_floor})"), False
    if b_floor:
        if word == HIGHER:
            return HIGHER, (f"{b} is at least {pct(rlo - 1)} higher than {a} (95 % interval's lower end; "
                            f"{poss(b)} capacity is a lower bound: {b_floor})"), True
        return CANNOT, (f"cannot compare: {poss(b)} capacity is only a lower bound ({b_floor}) and that bound is not "
                        f"above {poss(a)}: {b} may carry more than measured"), False
    if a_floor:
        if word == LOWER:
            return LOWER, (f"{b} is at least {pct(1 - rhi)} lower than {a} (95 % interval's upper end; "
                           f"{poss(a)} capacity is a lower bound: {a_floor})"), True
        return CANNOT, (f"cannot compare: {poss(a)} capacity is only a lower bound ({a_floor}) and {poss(b)} is "
                        f"not below it: {a} may carry more than measured"), False
    if word == LOWER:
        return LOWER, (f"lower: {b} carries {pct(value - 1)} less than {a} (95 % interval {pct(1 - rhi)} to "
                       f"{pct(1 - rlo)} less)"), False
    if word == HIGHER:
        return HIGHER, (f"higher: {b} carries {pct(value - 1)} more than {a} (95 % interval {pct(rlo - 1)} to "
                        f"{pct(rhi - 1)} more)"), False
    return SAME, (f"no difference the data can show: {b} - {a} = {(value - 1) * 100:+.1f} % (95 % interval "
                  f"{(rlo - 1) * 100:+.1f} % to {(rhi - 1) * 100:+.1f} %); these runs could show a difference of "
                  f"about {pct(d.detectable)} or more"), False


# ---------------------------------------------------------------- latency at matched throughput

def step_order(steps: list) -> list[int]:
    """Step indices in load order (concurrency, then rate), as credhub-perf orders a capacity search."""
    return sorted(range(len(steps)), key=lambda i: (steps[i].concurrency or 0, steps[i].rate or 0.0, i))


def rising(x: np.ndarray) -> np.ndarray:
    """Indices (in the given order) of the points above every earlier one: past saturation a closed loop's
    throughput only wobbles while latency climbs, and latency at a throughput is the first step's there."""
    keep, top = [], -math.inf
    for i, v in enumerate(x):
        if v > top:
            keep.append(i)
            top = v
    return np.array(keep, dtype=np.int64)


def curve_percentiles(opts: Options) -> tuple:
    """The percentiles a curve carries: LATENCY_PERCENTILES and the SLO's."""
    return tuple(sorted(set(LATENCY_PERCENTILES) | {opts.slo_percentile}))


def run_curve(run: Run, opts: Options, reps: int, seed: int) -> Curve | None:
    """The run's counted steps' throughput and latency percentiles, with their block-bootstrap replicates
    (one set of block weights per step, shared by every percentile, so a replicate is one resampled run)."""
    bounds = np.concatenate(([0], np.flatnonzero(np.diff(run.step)) + 1, [len(run.step)])) if len(run.step) else []
    spans = {int(run.step[a]): (a, b) for a, b in zip(bounds[:-1], bounds[1:])}
    order = [i for i in step_order(run.steps) if run.steps[i].counts(opts.max_error_rate) and i in spans]
    if not order:
        return None
    xs = np.array([run.steps[i].throughput for i in order])
    keep = [order[j] for j in rising(xs)]
    x = np.array([run.steps[i].throughput for i in keep])
    percentiles = curve_percentiles(opts)
    own = {50: "p50_s", 90: "p90_s", 95: "p95_s", 99: "p99_s", opts.slo_percentile: "slo_s"}
    p = {q: np.array([getattr(run.steps[i], own[q]) for i in keep]) for q in percentiles}
    xr = np.empty((len(keep), max(reps, 0)))
    pr = {q: np.empty((len(keep), max(reps, 0))) for q in percentiles}
    if reps > 0:
        for j, i in enumerate(keep):
            a, b = spans[i]
            for q in percentiles:
                rng = np.random.default_rng((seed + 7919 * i) & 0xFFFFFFFF)   # the same blocks for each q
                r = bootstrap.step_replicates(run.latency[a:b], run.offset[a:b], run.error[a:b], q, opts.window_s,
                                              reps, rng)
                xr[j], pr[q][j] = r["throughput"], r["pct"]
    return Curve(x=x, p=p, xr=xr, pr=pr)


def interpolate(x: np.ndarray, y: np.ndarray, at: np.ndarray) -> np.ndarray:
    """y at the throughputs `at` on steps in load order, linear between the first step that reaches each
    throughput and the one before it (interpolate_columns); NaN outside the steps' range."""
    return interpolate_columns(np.asarray(x, dtype=np.float64)[:, None], np.asarray(y, dtype=np.float64)[:, None],
                               np.asarray(at, dtype=np.float64))[0]


def interpolate_columns(x: np.ndarray, y: np.ndarray, at: np.ndarray) -> np.ndarray:
    """interpolate() for every column of (steps x replicates) x and y at once: (replicates x len(at)).

    Steps stay in load order, each at the most throughput reached so far: a replicate of a closed loop's
    plateau puts a saturated step's throughput a little below an earlier one's, and sorting by throughput
    would then draw the curve through the saturated step's latency far below the knee."""
    k, reps = x.shape
    if reps == 0 or k == 0:
        return np.full((reps, len(at)), np.nan)
    xs, ys = np.maximum.accumulate(x, axis=0).T, y.T                             # replicates x steps
    if k == 1:
        return np.where(xs == at[None, :], ys, np.nan)
    j = np.clip((xs[:, :, None] < at[None, None, :]).sum(axis=1), 1, k - 1)     # replicates x len(at)
    x0, x1 = np.take_along_axis(xs, j - 1, 1), np.take_along_axis(xs, j, 1)
    y0, y1 = np.take_along_axis(ys, j - 1, 1), np.take_along_axis(ys, j, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(x1 > x0, (at[None, :] - x0) / (x1 - x0), 0.0)
    out = y0 + w * (y1 - y0)
    inside = (at[None, :] >= xs[:, :1]) & (at[None, :] <= xs[:, -1:])
    return np.where(inside, out, np.nan)


def curve_at(c: Curve, q: int, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The run's percentile q at throughputs `at`: (point, replicates x len(at))."""
    return interpolate(c.x, c.p[q], at), interpolate_columns(c.xr, c.pr[q], at)


def combine_columns(per_run: list[np.ndarray], seed: int) -> np.ndarray:
    """bootstrap.combine for every column at once: (replicates x columns) of the median over runs drawn with
    replacement, one replicate of each; NaN where every drawn run lacks the column."""
    if len(per_run) == 1:
        return per_run[0]
    rng = np.random.default_rng(seed)
    n = min(len(r) for r in per_run)
    stack = np.stack([r[:n] for r in per_run])           # runs x reps x columns
    pick_run = rng.integers(0, len(per_run), size=(n, len(per_run)))
    pick_rep = rng.integers(0, n, size=(n, len(per_run)))
    with np.errstate(all="ignore"), _no_nan_warning():
        return np.nanmedian(stack[pick_run, pick_rep], axis=1)


class _no_nan_warning:
    """nanmedian of an all-NaN column is NaN (a throughput a drawn run did not reach): not worth a warning."""

    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        return self._w.__exit__(*exc)


def group_at(g: Group, q: int, at: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The side's percentile q at throughputs `at`: median over its runs, and combined replicates."""
    pts, reps = [], []
    for c in g.curves:
        p, r = curve_at(c, q, at)
        pts.append(p)
        reps.append(r)
    if not pts:
        return np.full(len(at), np.nan), np.empty((0, len(at)))
    with _no_nan_warning():
        point = np.nanmedian(np.stack(pts), axis=0)
    return point, combine_columns(reps, seed)


def match_points(a: Group, b: Group) -> list[float]:
    """Throughputs to compare latency at: MATCH_FRACTIONS of the smaller capacity (or of the most both
    reached), rounded to two significant digits, within the range both sides' curves cover."""
    def span(g):
        xs = [c.x for c in g.curves if len(c.x)]
        return (min(float(x.min()) for x in xs), max(float(x.max()) for x in xs)) if xs else None
    sa, sb = span(a), span(b)
    if sa is None or sb is None:
        return []
    lo, hi = max(sa[0], sb[0]), min(sa[1], sb[1])
    if hi < lo:
        return []
    caps = [g.row.max_tput for g in (a, b) if g.row.max_tput is not None]
    top = min([hi] + caps)
    out = []
    for f in MATCH_FRACTIONS:
        t = f * top
        if t > 0:
            nice = round(t, 1 - int(math.floor(math.log10(t))))
            t = nice if lo <= nice <= hi else t
        if lo <= t <= hi and (not out or t > out[-1] * 1.0001):
            out.append(t)
    return out or [hi]


def latency_points(a: Group, b: Group, seed: int) -> list[LatencyPoint]:
    at = np.array(match_points(a, b))
    if not len(at):
        return []
    out = []
    for q in LATENCY_PERCENTILES:
        pa, ra = group_at(a, q, at, seed + q)
        pb, rb = group_at(b, q, at, seed + 1000 + q)
        for j, t in enumerate(at):
            va = float(pa[j]) if np.isfinite(pa[j]) else None
            vb = float(pb[j]) if np.isfinite(pb[j]) else None
            out.append(LatencyPoint(float(t), q, difference(va, ra[:, j] if len(ra) else np.empty(0), vb,
                                                            rb[:, j] if len(rb) else np.empty(0))))
    return out


def band(g: Group, q: int, seed: int, points: int = BAND_POINTS) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                           np.ndarray] | None:
    """The side's curve of percentile q along its own throughput range, with its 95 % band: (x, y, lo, hi)."""
    xs = [c.x for c in g.curves if len(c.x) >= 2]
    if not xs:
        return None
    at = np.linspace(min(float(x.min()) for x in xs), max(float(x.max()) for x in xs), points)
    y, reps = group_at(g, q, at, seed)
    lo, hi = np.full(points, np.nan), np.full(points, np.nan)
    if len(reps) >= 10:
        with _no_nan_warning():
            lo, hi = np.nanpercentile(reps, [50 * (1 - bootstrap.LEVEL), 50 * (1 + bootstrap.LEVEL)], axis=0)
        lo, hi = np.fmin(lo, y), np.fmax(hi, y)
    return at, y, lo, hi


# ---------------------------------------------------------------- sides, groups and the comparison

def _gkey(r: Run):
    return r.instances if r.instances is not None else "label:" + r.label


def side_groups(side: str, runs: list[Run], opts: Options, reps: int) -> dict[tuple, Group]:
    """(scenario, instances or label) -> Group, with the capacity table's row (median of the runs, its flags)
    and the side's combined replicates (seeded by the side and the group, so A and B never share draws)."""
    table = analysis.capacity_table([{"scenario": r.scenario, "instances": r.instances, "label": r.label,
                                      "max_tput": r.max_tput, "how": r.max_tput_how, "why": r.no_capacity_why,
                                      "lower_bound_reason": r.lower_bound_reason if r.capacity_is_lower_bound
                                      else "", "knee": r.knee.throughput if r.knee else None,
                                      **openloop.row_figures(r)} for r in runs])
    out = {}
    for row in table:
        key = row.instances if row.instances is not None else "label:" + row.group
        rs = [r for r in runs if r.scenario == row.scenario and _gkey(r) == key]
        per = [study.run_replicates(r, opts, reps) for r in rs]
        seed = zlib.crc32(f"{side}|{row.scenario}|{key}".encode("utf-8", "backslashreplace"))
        caps = [c for c, _ in per if len(c)]
        knees = [k for _, k in per if len(k)]
        g = Group(side, row.scenario, key, rs, row,
                  bootstrap.combine(caps, seed) if len(caps) == len(rs) and caps else np.empty(0),
                  bootstrap.combine(knees, seed + 1) if knees else np.empty(0))
        for r in rs:
            c = run_curve(r, opts, reps, study.run_seed(r))
            if c is not None:
                g.curves.append(c)
        out[(row.scenario, key)] = g
    return out


def pairs(ga: dict, gb: dict) -> tuple[list[tuple[Group, Group]], list[str]]:
    """The groups to compare, and warnings for what is left out. Per scenario in both: when each side has
    one group, those two (2 instances against 4 is a comparison); else each instance count both measured."""
    out, warnings = [], []
    for side, mine, theirs in (("A", ga, gb), ("B", gb, ga)):
        alone = sorted({s for s, _ in mine} - {s for s, _ in theirs})
        if alone:
            warnings.append(f"only {side} ran {', '.join(alone)}: not compared")
    for scen in sorted({s for s, _ in ga} & {s for s, _ in gb}):
        a = [g for (s, _), g in ga.items() if s == scen]
        b = [g for (s, _), g in gb.items() if s == scen]
        if len(a) == 1 and len(b) == 1:
            out.append((a[0], b[0]))
            continue
        common = sorted({g.key for g in a} & {g.key for g in b}, key=str)
        if not common:
            warnings.append(f"{scen}: A measured {', '.join(g.what for g in a)}, B {', '.join(g.what for g in b)}: "
                            "no instance count in common, not compared")
        for k in common:
            out.append((next(g for g in a if g.key == k), next(g for g in b if g.key == k)))
        for side, gs in (("A", a), ("B", b)):
            alone = [g.what for g in gs if g.key not in common]
            if alone and common:
                warnings.append(f"{scen}: only {side} measured {', '.join(alone)}: not compared")
    return out, warnings


def compare_groups(a: Group, b: Group, names: dict) -> Item:
    d = difference(a.row.max_tput, a.cap_reps, b.row.max_tput, b.cap_reps)
    na, nb = names["A"], names["B"]
    word, text, at_least = verdict(na, nb, d, a.unknown_reason(), b.unknown_reason(), a.lower_bound_reason(),
                                   b.lower_bound_reason())
    sizing = {"A": comparesizing.sizing(a.row, a.runs), "B": comparesizing.sizing(b.row, b.runs)}
    text = comparesizing.verdict_text(text, na, nb, sizing["A"], sizing["B"])
    item = Item(a.scenario, a, b, d, word, text, at_least, sizing=sizing)
    seed = zlib.crc32(f"latency|{a.scenario}|{a.key}|{b.key}".encode("utf-8", "backslashreplace"))
    item.latency = latency_points(a, b, seed)
    if a.row.knee is not None and b.row.knee is not None:
        item.knee = difference(a.row.knee, a.knee_reps, b.row.knee, b.knee_reps)
    return item


def usl_compare(scen: str, ga: list[Group], gb: list[Group]) -> UslCompare | None:
    """Both sides' USL fits and the differences of their parameters, when each measured two or more counts."""
    fits = []
    for gs in (ga, gb):
        pts = [scalability.Point(instances=g.row.instances, capacity=g.row.max_tput, replicates=g.cap_reps,
                                 runs=g.row.runs, lower_bound=bool(g.lower_bound_reason()))
               for g in gs if g.row.instances and g.row.max_tput]
        fits.append(scalability.fit(pts))
    fa, fb = fits
    if fa is None or fb is None:
        return None
    diffs = [difference(float(getattr(fa, k)), fa.replicates[:, i], float(getattr(fb, k)), fb.replicates[:, i])
             for i, k in enumerate(("lam", "sigma", "kappa"))]
    return UslCompare(scen, fa, fb, *diffs)


def build(a_runs: list[Run], b_runs: list[Run], opts: Options, reps: int, names: dict) -> Comparison:
    ga = side_groups("A", a_runs, opts, reps)
    gb = side_groups("B", b_runs, opts, reps)
    todo, warnings = pairs(ga, gb)
    if not todo:
        raise InputError("A and B have no scenario and instance count in common (" + "; ".join(warnings) +
                         "): pass runs of the same scenario to both sides")
    items = [compare_groups(a, b, names) for a, b in todo]
    usl = {}
    for scen in sorted({i.scenario for i in items}):
        a = [g for (s, _), g in ga.items() if s == scen]
        b = [g for (s, _), g in gb.items() if s == scen]
        u = usl_compare(scen, a, b)
        if u is not None:
            usl[scen] = u
    return Comparison(names=names, paths={"A": [r.path for r in a_runs], "B": [r.path for r in b_runs]},
                      items=items, usl=usl, replicates=reps, warnings=warnings)


# ---------------------------------------------------------------- refusals

def _shape(runs: list[Run]) -> str:
    kinds = {"open loop (a fixed rate per step)" if s.rate else "closed loop (a fixed number of clients per step)"
             for r in runs for s in r.steps if s.requests}
    return " and ".join(sorted(kinds))


def _slo_text(key) -> str:
    p, lat = key
    return f"p{p:g} \u2264 {lat * 1000:g} ms" if p is not None and lat is not None else "no SLO recorded"


def slo_of(meta: dict) -> tuple | None:
    slo = meta.get("slo") if isinstance(meta, dict) else None
    if not isinstance(slo, dict):
        return None
    key = tuple(v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
                for v in (slo.get("percentile"), slo.get("latency_s")))
    return None if key == (None, None) else key


def check_slos(a_metas: list[dict], b_metas: list[dict]) -> None:
    """InputError when the runs were planned against different SLOs (the caller skips this when the SLO is
    given on the command line, which re-judges both sides by it)."""
    sides = {}
    for side, metas in (("A", a_metas), ("B", b_metas)):
        sides[side] = {k for k in (slo_of(m) for m in metas) if k is not None}
        if len(sides[side]) > 1:
            raise InputError(f"{side}'s runs were judged against different SLOs ("
                             + ", ".join(sorted(_slo_text(k) for k in sides[side])) + "): pass --slo-percentile "
                             "and --slo-ms to judge every run by one SLO")
    if sides["A"] and sides["B"] and sides["A"] != sides["B"]:
        raise InputError(f"A's runs were judged at {_slo_text(next(iter(sides['A'])))}, B's at "
                         f"{_slo_text(next(iter(sides['B'])))}: pass --slo-percentile and --slo-ms to judge both "
                         "sides by one SLO")


def truncated(path: str) -> bool:
    """The file's last line has no line end: its writer was killed mid-row (the reader skips that line)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() == 0:
                return False
            f.seek(-1, os.SEEK_END)
            return f.read(1) != b"\n"
    except OSError:
        return False


def check_runs(side: str, runs: list[Run]) -> None:
    """InputError for a run cut short: a CSV whose writer was killed mid-row, or a run summary.json says
    stopped before its plan ended (interrupted, failed, a tester lost), whose curve ends early and whose
    capacity is not the set-up's. A ramp the abort policy ended past the SLO is complete: credhub-perf's
    stopped_reason for it begins "abort policy"."""
    for r in runs:
        for c in r.csvs:
            if truncated(c):
                raise InputError(f"{c}: its last line has no line end: the run was killed mid-write, so {side}'s "
                                 "curve ends early; re-run it, or leave that run out of the comparison")
        stopped = r.summary.get("stopped") if isinstance(r.summary, dict) else None
        why = r.summary.get("stopped_reason") if isinstance(r.summary, dict) else None
        if isinstance(stopped, str) and stopped.strip() and not (isinstance(why, str)
                                                                 and why.startswith("abort policy")):
            raise InputError(f"{r.path}: the run {stopped.strip()[:200]}: a ramp cut short is not comparable; "
                             f"re-run it, or leave it out of {side}")


def check_sides(a_runs: list[Run], b_runs: list[Run]) -> None:
    """InputError for sides that share a run (its replicates would be the same draws on both sides, and
    every difference zero), share no scenario, or whose steps differ in shape (closed against open loop)."""
    seen = {os.path.realpath(r.path): r.path for r in a_runs}
    ids = {study.run_identity(r): r.path for r in a_runs if isinstance(r.meta, dict) and r.meta.get("run_id")}
    for r in b_runs:
        other = seen.get(os.path.realpath(r.path)) or ids.get(study.run_identity(r))
        if other is not None:
            raise InputError(f"{r.path} is on both sides (A has {other}, the same run): compare two different "
                             "sets of runs")
    sa, sb = {r.scenario for r in a_runs}, {r.scenario for r in b_runs}
    common = sa & sb
    if not common:
        raise InputError(f"A ran {', '.join(sorted(sa))}, B ran {', '.join(sorted(sb))}: no scenario in common; "
                         "pass runs of the same scenario to both sides")
    for scen in sorted(common):
        ka = _shape([r for r in a_runs if r.scenario == scen])
        kb = _shape([r for r in b_runs if r.scenario == scen])
        if ka and kb and ka != kb:
            raise InputError(f"{scen}: A's steps are {ka}, B's {kb}: latency against throughput differs between "
                             "the two shapes; compare runs of the same step shape (steps.rate set on both or "
                             "neither)")


# ---------------------------------------------------------------- comparison.json

def _num(v):
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def _est(e: Estimate) -> dict:
    return {"value": _num(e.value), "interval": None if e.interval is None else [_num(e.interval[0]),
                                                                                 _num(e.interval[1])]}


def _diff(d: Difference) -> dict:
    return {"a": _est(d.a), "b": _est(d.b), "difference": _est(d.diff), "ratio": _est(d.ratio),
            "shows": d.shows, "smallest_detectable_difference": _num(d.detectable)}


def _side(g: Group) -> dict:
    return {"group": g.row.group, "instances": g.row.instances, "runs": [r.path for r in g.runs],
            "labels": [r.label for r in g.runs], "lower_bound_reason": g.lower_bound_reason() or None,
            "unknown_reason": g.unknown_reason() or None}


def to_json(c: Comparison, opts: Options) -> dict:
    items = []
    for i in c.items:
        items.append({
            "scenario": i.scenario, "a": dict(_side(i.a), **comparesizing.to_json(i.sizing["A"])),
            "b": dict(_side(i.b), **comparesizing.to_json(i.sizing["B"])),
            "capacity": dict(_diff(i.capacity), verdict=i.verdict, at_least=i.at_least, text=i.text,
                             compares="closed-loop capacities",
                             open_loop_gap=i.sizing["A"].gap or i.sizing["B"].gap),
            "latency": [dict(_diff(p.d), throughput_rps=p.throughput, percentile=p.percentile) for p in i.latency],
            "knee": None if i.knee is None else _diff(i.knee)})
    usl = {}
    for scen, u in c.usl.items():
        usl[scen] = {"a_instance_counts": u.a.counts, "b_instance_counts": u.b.counts,
                     "kappa_fitted": u.a.kappa_free and u.b.kappa_free,
                     "lambda": _diff(u.lam), "sigma": _diff(u.sigma), "kappa": _diff(u.kappa)}
    return {"schema": SCHEMA,
            "sides": {s: {"label": c.names[s], "runs": c.paths[s]} for s in ("A", "B")},
            "slo": {"percentile": opts.slo_percentile, "latency_s": opts.slo_s, "max_error_rate": opts.max_error_rate},
            "interval": {"level": bootstrap.LEVEL, "replicates": c.replicates, "power": POWER,
                         "method": "circular block bootstrap of each step's time slices, each side on its own; "
                                   "repeats of a side combined by resampling runs (docs/design.md)"},
            "comparisons": items, "usl": usl, "warnings": c.warnings}
