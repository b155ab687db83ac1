"""Intervals for a run's capacity at the SLO and its knee: a moving-block bootstrap over time slices.

Requests of one step are not independent: a GC pause, a slow disk or a
noisy neighbour slows a stretch of consecutive requests, and an iid
bootstrap of rows would treat a 2-second stall as scattered noise and give
intervals far too narrow. So each step is cut into equal time slices (the
plot's windows, but at least SLICES_PER_STEP per step, so short steps still
have something to resample) and the bootstrap draws *blocks of consecutive
slices* (circular block bootstrap, blocks of a third of the step) until it has
as many slices as the step; each statistic's spread is then widened by
sqrt(k / (k - L)), the block bootstrap's known shortfall for L-slice blocks. Each replicate recomputes every step's
throughput (its rows over its slices' time), error rate, mean latency and
SLO percentile, then the capacity at the SLO and the knee exactly as for the
run itself (analysis.max_throughput_at_slo, analysis.fit_knee); the interval
is the replicates' 2.5th-97.5th percentiles, after the capacity replicates
are spread by t/z about the run's capacity (studentize()).

The SLO percentile of a replicate comes from per-slice histograms with
log-spaced bins (0.4 % wide) summed with the replicate's slice weights: a
bisection over the bins of the weighted cumulative histograms (bins_below),
so a replicate's cost depends on neither the row count nor, much, the bins.
The histogram's rounding is removed by scaling with the ratio of the exact
percentile to the histogram's over the original step.

Several runs of the same scenario and instance count are combined by a
two-level bootstrap: each combined replicate draws runs with replacement and
one replicate of each, and takes their median (the point estimate is the
median of the runs), so run-to-run spread widens the interval.

tests/test_bootstrap.py checks on synthetic steps with autocorrelated load
and latency and a known true capacity that 95 % intervals cover it in about
95 % of seeded repetitions (92 % on 15 s steps, within the test's binomial
tolerance).
"""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from . import analysis

REPLICATES = 400
KNEE_REPLICATES = 100          # the knee fit is a grid search: fewer replicates
SLICES_PER_STEP = 8
BIN_WIDTH = 0.004              # relative width of the latency bins
MAX_BINS = 4000
MAX_CELLS = 1 << 22           # slices x bins, slices x replicates of one step (32 MB as float64)
LEVEL = 0.95


def block_length(k: int) -> int:
    """Slices per block: a third of the step, so a block spans seconds (stalls and bursts last that long).

    Shorter blocks cut the correlation between neighbouring slices and give
    intervals too narrow on load that stays correlated for a second or more
    (tests/test_bootstrap.py measured: sqrt(k)-slice blocks covered 85 %, k/3
    89 %, on 20 s steps correlated over about a second)."""
    return max(1, min(k // 2, int(round(k / 3))))


def block_weights(k: int, reps: int, rng: np.random.Generator) -> np.ndarray:
    """(reps x k) how often each of k consecutive slices is drawn by a circular block bootstrap.

    Circular, so every slice is equally likely to be drawn and a replicate's
    expected value is the step's own (a moving block bootstrap under-draws the
    first and last slices).
    """
    length = block_length(k)
    if k == 1:
        return np.ones((reps, 1))
    nblocks = math.ceil(k / length)
    starts = rng.integers(0, k, size=(reps, nblocks))
    idx = ((starts[:, :, None] + np.arange(length)) % k).reshape(reps, -1)[:, :k]
    flat = (np.arange(reps)[:, None] * k + idx).ravel()
    return np.bincount(flat, minlength=reps * k).reshape(reps, k).astype(np.float64)


def step_replicates(lat: np.ndarray, off: np.ndarray, err: np.ndarray, percentile: float, width: float,
                    reps: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Replicates of one step's throughput, error rate, mean latency and SLO percentile (each length reps)."""
    t0 = float(off.min())
    t1 = float((off + lat).max())
    span = max(t1 - t0, 1e-9)
    lo = max(float(lat.min()), 1e-7)
    hi = max(float(lat.max()), lo * (1 + BIN_WIDTH))
    nb = int(min(MAX_BINS, math.ceil(math.log(hi / lo) / BIN_WIDTH) + 1))
    # Slices x bins is the histogram's size and slices x replicates the weights': a step stretched by
    # one very slow request has many slices and many bins at once (10000 x 4000 took 700 MB, 100000
    # slices x 400 replicates 1.4 GB), so past MAX_CELLS the slices widen.
    most = max(SLICES_PER_STEP, MAX_CELLS // max(nb, reps))
    width = max(min(width, span / SLICES_PER_STEP), span / most)
    idx, k, w = analysis.windows(off, t0, t1, width)
    counts = np.bincount(idx, minlength=k).astype(np.float64)
    errs = np.bincount(idx, weights=err.astype(np.float64), minlength=k)
    sums = np.bincount(idx, weights=lat, minlength=k)
    step = math.log(hi / lo) / nb
    b = np.clip((np.log(np.maximum(lat, lo) / lo) / step).astype(np.int64), 0, nb - 1)
    hist = np.bincount(idx.astype(np.int64) * nb + b, minlength=k * nb).reshape(k, nb).astype(np.float64)
    W = block_weights(k, reps, rng)
    n = W @ counts
    rank = np.maximum(np.ceil(percentile / 100.0 * n), 1)
    pos = np.minimum(bins_below(W, np.cumsum(hist, axis=1), rank), nb - 1)
    mids = lo * np.exp((np.arange(nb) + 0.5) * step)
    # remove the bins' rounding: ratio of the exact percentile to the histogram's, on the step itself
    all_cum = np.cumsum(hist.sum(axis=0))
    all_pos = min(int((all_cum < max(math.ceil(percentile / 100.0 * len(lat)), 1)).sum()), nb - 1)
    exact = analysis.percentiles(lat, [percentile])[0]
    pct = mids[pos] * (exact / mids[all_pos])
    with np.errstate(divide="ignore", invalid="ignore"):
        out = {"throughput": n / (k * w), "error_rate": np.where(n > 0, (W @ errs) / n, 0.0),
               "mean": np.where(n > 0, (W @ sums) / n, np.nan), "pct": pct}
    # Drawing blocks of L out of k slices makes a replicate's spread too small by the factor 1 - L/k
    # even for independent slices (the same bias as a variance divided by n instead of n - 1):
    # widen each statistic's deviations from the step's own value to undo it.
    length = block_length(k)
    if k > 1:
        scale = math.sqrt(k / (k - length))
        own = {"throughput": len(lat) / (k * w), "error_rate": float(err.mean()),
               "mean": float(lat.mean()), "pct": exact}
        for key, v in own.items():
            out[key] = v + (out[key] - v) * scale
        out["error_rate"] = np.clip(out["error_rate"], 0.0, 1.0)
    out["own"] = {"throughput": len(lat) / (k * w), "error_rate": float(err.mean()), "pct": exact}
    out["blocks"] = k / length
    return out


def bins_below(W: np.ndarray, cum: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Per replicate r, how many bins j have (W @ cum)[r, j] < rank[r]: the bin holding its rank-th latency.

    cum: (slices x bins) each slice's cumulative histogram. W @ cum is a replicate's cumulative
    histogram (nondecreasing along the bins), so a bisection over the bins finds the count from about
    log2(bins) columns instead of the whole (replicates x bins) product, the step's largest cost. The
    weights and counts are whole numbers, so every sum is exact in float64 and the answer is the
    whole product's, to the bit.
    """
    reps, nb = len(W), cum.shape[1]
    lo = np.zeros(reps, dtype=np.int64)   # the answer lies in [lo, hi]
    hi = np.full(reps, nb, dtype=np.int64)
    while True:
        open_ = lo < hi
        if not open_.any():
            return lo
        mid = np.where(open_, (lo + hi) // 2, 0)  # a bin index (< hi <= nb) wherever still open
        below = np.einsum("rk,kr->r", W, cum[:, mid]) < rank
        lo = np.where(open_ & below, mid + 1, lo)
        hi = np.where(open_ & ~below, mid, hi)


def degrees_of_freedom(blocks: float) -> float:
    """How many degrees of freedom a run's capacity variance has when its steps hold `blocks` blocks each.

    A circular block bootstrap's variance is the overlapping-batch-means
    estimator, which has about 1.5 (b - 1) degrees of freedom for b = k / L
    blocks (Meketon and Schmeiser 1984); capacity interpolates between the two
    steps around the SLO crossing, each with its own, so about twice that.
    Never below 2, where the t quantile is still finite and sane."""
    return max(2.0, 3.0 * (blocks - 1.0))


def t_quantile(df: float, level: float = LEVEL) -> float:
    """Two-sided Student t quantile (Cornish-Fisher expansion, Abramowitz and Stegun 26.7.5;
    within 1 % of the exact value from 2 degrees of freedom up), without scipy."""
    z = NormalDist().inv_cdf(0.5 + level / 2)
    g = ((z ** 3 + z) / 4, (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96,
         (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384,
         (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160)
    return z + sum(gi / df ** (i + 1) for i, gi in enumerate(g))


def studentize(reps: np.ndarray, point: float, df: float, level: float = LEVEL) -> np.ndarray:
    """Spread replicates about the point by t(df) / z, so their percentile interval is a t interval.

    The block bootstrap's spread is right on average but itself uncertain (a
    few blocks per step): intervals at the normal quantile then cover only
    87 % instead of 95 %, as a t test with an estimated variance needs t, not z.
    Scaling the replicates (not just the interval) carries the widening into
    combined runs and the scalability fit, which are built from them."""
    if not math.isfinite(point):
        return reps
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return point + (reps - point) * (t_quantile(df, level) / z)


def run_replicates(latency: np.ndarray, offset: np.ndarray, error: np.ndarray, step: np.ndarray,
                   slo_percentile: float, slo_s: float, max_error_rate: float, width: float = 1.0,
                   knee_elasticity: float = 1.0, reps: int = REPLICATES, knee_reps: int = KNEE_REPLICATES,
                   seed: int = 0, usable: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap replicates of (capacity at the SLO, knee) for one run; NaN where a replicate has none.

    Rows must be grouped by step (step ids non-decreasing), as Run keeps them.
    usable: per step, False for steps that never count as capacity whatever
    their error rate (the run's own rule, e.g. unsteady or tester-bound).
    """
    rng = np.random.default_rng(seed)
    bounds = np.concatenate(([0], np.flatnonzero(np.diff(step)) + 1, [len(step)])) if len(step) else [0]
    per = [step_replicates(latency[a:b], offset[a:b], error[a:b], slo_percentile, width, reps, rng)
           for a, b in zip(bounds[:-1], bounds[1:])]
    if not per:
        return np.full(reps, np.nan), np.full(knee_reps, np.nan)
    x = np.stack([p["throughput"] for p in per])          # steps x reps
    pct = np.stack([p["pct"] for p in per])
    ok = np.stack([p["error_rate"] for p in per]) <= max_error_rate
    if usable is not None and len(usable) == len(per):
        ok &= np.asarray(usable, dtype=bool)[:, None]
    mean = np.stack([p["mean"] for p in per])
    cap = capacity_columns(x, pct, ok, slo_s)
    own_ok = np.array([p["own"]["error_rate"] <= max_error_rate for p in per])
    if usable is not None and len(usable) == len(per):
        own_ok &= np.asarray(usable, dtype=bool)
    point = capacity_columns(np.array([[p["own"]["throughput"]] for p in per]),
                             np.array([[p["own"]["pct"]] for p in per]), own_ok[:, None], slo_s)[0]
    cap = studentize(cap, float(point), degrees_of_freedom(float(np.median([p["blocks"] for p in per]))))
    knee = np.full(min(knee_reps, reps), np.nan)
    for r in range(len(knee)):
        okr = ok[:, r]
        plateau = np.maximum.accumulate(np.where(okr, x[:, r], 0.0))
        k = analysis.fit_knee(plateau[okr], mean[okr, r], knee_elasticity)
        if k is not None and k.throughput is not None:
            knee[r] = k.throughput
    return cap, knee


def capacity_columns(x: np.ndarray, p: np.ndarray, ok: np.ndarray, bound: float) -> np.ndarray:
    """analysis.max_throughput_at_slo for every column of (steps x replicates) at once; NaN = never met."""
    meets = ok & (p <= bound)
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = x[:-1] + (bound - p[:-1]) * (x[1:] - x[:-1]) / (p[1:] - p[:-1])
    crossing = meets[:-1] & ok[1:] & (p[1:] > bound) & (p[1:] > p[:-1])
    cand = np.where(meets, x, -np.inf)
    best = cand.max(axis=0)
    if len(x) > 1:
        best = np.maximum(best, np.where(crossing, cross, -np.inf).max(axis=0))
    # never crossed: the highest passing throughput (a floor)
    never = ~np.any(ok & (p > bound), axis=0) & np.any(ok, axis=0)
    best = np.where(never, np.where(ok, x, -np.inf).max(axis=0), best)
    return np.where(np.isfinite(best), best, np.nan)


def interval(reps: np.ndarray, level: float = LEVEL, point: float | None = None) -> tuple[float | None, float | None]:
    """Percentile interval of the replicates, stretched to contain point when given.

    A capacity is a maximum over steps: on a flat plateau nearly every
    replicate's maximum lies above the measured one, and the percentile
    interval can then miss its own estimate. An estimate outside its interval
    reads as an error and would make the recommendation's lower bound higher
    than the measurement, so the interval is widened to it (conservative)."""
    v = reps[np.isfinite(reps)]
    if len(v) < 10:
        return None, None
    lo, hi = np.percentile(v, [50 * (1 - level), 50 * (1 + level)])
    return contain(float(lo), float(hi), point)


def contain(lo: float, hi: float, point: float | None) -> tuple[float, float]:
    """(lo, hi) widened to contain point (when it is a finite number)."""
    if point is None or not math.isfinite(point):
        return lo, hi
    return min(lo, point), max(hi, point)


def combine(run_reps: list[np.ndarray], seed: int = 0) -> np.ndarray:
    """Replicates of the median over runs: runs drawn with replacement, one replicate of each."""
    if len(run_reps) == 1:
        return run_reps[0]
    rng = np.random.default_rng(seed)
    n = min(len(r) for r in run_reps)
    stack = np.stack([r[:n] for r in run_reps])            # runs x reps
    pick_run = rng.integers(0, len(run_reps), size=(n, len(run_reps)))
    pick_rep = rng.integers(0, n, size=(n, len(run_reps)))
    return np.median(stack[pick_run, pick_rep], axis=1)
