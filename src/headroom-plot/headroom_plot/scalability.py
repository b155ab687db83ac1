"""Gunther's Universal Scalability Law fitted to capacity per instance count, and recommendations from it.

    X(N) = lam * N / (1 + sigma (N - 1) + kappa N (N - 1))

lam is one instance's throughput, sigma the share serialised (contention: the
database, CredHub's per-instance write lock), kappa the cost of keeping
instances coherent (crosstalk); with kappa > 0 throughput peaks at
N* = sqrt((1 - sigma) / kappa) and falls beyond it.

Fit: N / X = a + b (N - 1) + c N (N - 1) with a = 1/lam, b = sigma/lam,
c = kappa/lam is linear in (a, b, c) (Gunther's own transformation), so each
fit is a weighted linear least squares solved exactly, with the constraints
0 <= sigma <= 1 and kappa >= 0 handled by trying every active set. Weights
are the inverse variance of N / X from each count's capacity interval, so a
noisy count pulls less. Being closed form, it is solved for every bootstrap
replicate at once: the parameter intervals are percentiles of the fits to the
replicates (each count's capacity replicates come from the time-ordered
bootstrap of its runs, headroom_plot.bootstrap), which carries every count's
uncertainty into lam, sigma, kappa and the curve.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import bootstrap

LEVEL = 0.95                   # two-sided interval level
MIN_REL_SE = 0.01              # a count's relative standard error is never taken below 1 %
MAX_INSTANCES = 1000           # the recommendation's search range


def usl(n, lam, sigma, kappa):
    """X(N); broadcasts (parameters may be columns of replicates)."""
    n = np.asarray(n, dtype=np.float64)
    return lam * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


def _active_sets(kappa_free: bool):
    """(design columns as functions of N, how (a, b, c) follow from the coefficients)."""
    one = lambda n: np.ones_like(n)  # noqa: E731
    nm1 = lambda n: n - 1.0  # noqa: E731
    nn = lambda n: n * (n - 1.0)  # noqa: E731
    sets = [
        ([one, nm1], lambda k: (k[0], k[1], 0 * k[0])),                       # kappa = 0
        ([one], lambda k: (k[0], 0 * k[0], 0 * k[0])),                       # sigma = kappa = 0: linear
        ([lambda n: n], lambda k: (k[0], k[0], 0 * k[0])),                   # sigma = 1, kappa = 0: flat
    ]
    if kappa_free:
        sets += [
            ([one, nm1, nn], lambda k: (k[0], k[1], k[2])),
            ([one, nn], lambda k: (k[0], 0 * k[0], k[1])),                   # sigma = 0
            ([lambda n: n, nn], lambda k: (k[0], k[0], k[1])),               # sigma = 1
        ]
    return sets


def fit_batch(n: np.ndarray, y: np.ndarray, rel_se: np.ndarray, kappa_free: bool) -> np.ndarray:
    """Fit the USL to each row of y (replicates x counts); returns (replicates x 3): lam, sigma, kappa.

    rel_se: each count's relative standard error (weights). Rows with a
    non-positive or missing throughput, or no feasible fit, give NaN.
    """
    n = np.asarray(n, dtype=np.float64)
    y = np.atleast_2d(np.asarray(y, dtype=np.float64))
    good = np.all(np.isfinite(y) & (y > 0), axis=1)
    z = np.where(good[:, None], n[None, :] / np.where(y > 0, y, 1.0), 0.0)        # N / X
    # var(N/X) ~ (N/X)^2 rel_se^2: weights from the point estimate's scale (same for every replicate)
    zref = np.nanmedian(np.where(good[:, None], z, np.nan), axis=0) if good.any() else np.ones(len(n))
    w = 1.0 / (zref ** 2 * np.maximum(rel_se, MIN_REL_SE) ** 2)
    best = np.full(len(y), np.inf)
    out = np.full((len(y), 3), np.nan)
    m = len(n)
    for cols, to_abc in _active_sets(kappa_free):
        if len(cols) > m:
            continue
        X = np.stack([f(n) for f in cols], axis=1)                  # m x p
        M = X.T @ (w[:, None] * X)
        if np.linalg.cond(M) > 1e12:
            continue
        coef = np.linalg.solve(M, X.T @ (w[:, None] * z.T))          # p x R
        resid = z - (X @ coef).T
        sse = np.einsum("ij,j,ij->i", resid, w, resid)
        a, b, c = to_abc(coef)
        tol = 1e-9 * np.abs(a)
        ok = good & (a > 0) & (b >= -tol) & (c >= -tol) & (b <= a + tol)
        take = ok & (sse < best)
        best = np.where(take, sse, best)
        with np.errstate(divide="ignore", invalid="ignore"):   # rows with a <= 0 are not taken
            out[take] = np.stack([1.0 / a, np.clip(b / a, 0, 1), np.maximum(c / a, 0)], axis=1)[take]
    return out


def _ci(v: np.ndarray, level: float = LEVEL, point: float | None = None) -> tuple[float | None, float | None]:
    """Percentile interval, widened to contain point when given (bootstrap.interval says why)."""
    v = v[np.isfinite(v)]
    if not len(v):
        return None, None
    lo, hi = np.percentile(v, [50 * (1 - level), 50 * (1 + level)])
    return bootstrap.contain(float(lo), float(hi), point)


@dataclass
class Point:
    """One instance count's capacity at the SLO: point estimate and bootstrap replicates."""
    instances: int
    capacity: float
    replicates: np.ndarray       # NaN where a replicate never met the SLO
    runs: int = 1
    lower_bound: bool = False    # the SLO was never crossed: capacity is at least this


@dataclass
class Fit:
    counts: list[int]
    lam: float
    sigma: float
    kappa: float
    kappa_free: bool             # False with two counts: sigma only, kappa = 0
    replicates: np.ndarray       # (R x 3) fits to the bootstrap replicates
    lam_ci: tuple
    sigma_ci: tuple
    kappa_ci: tuple

    def x(self, n):
        return usl(n, self.lam, self.sigma, self.kappa)

    @property
    def peak_n(self) -> float | None:
        """N* = sqrt((1 - sigma) / kappa), where throughput peaks; None when kappa = 0."""
        return math.sqrt((1 - self.sigma) / self.kappa) if self.kappa > 0 else None

    @property
    def peak_n_ci(self) -> tuple:
        lam, s, k = self.replicates.T
        with np.errstate(divide="ignore", invalid="ignore"):
            ns = np.where(k > 0, np.sqrt((1 - s) / np.where(k > 0, k, 1)), np.inf)
        ns = ns[np.isfinite(lam)]
        if not len(ns):
            return None, None
        # Replicates with kappa = 0 have no peak (inf): a percentile between two of them is inf - inf
        # to numpy, a NaN with a RuntimeWarning on stderr; either way the bound is unbounded.
        with np.errstate(invalid="ignore"):
            q = np.percentile(ns, [50 * (1 - LEVEL), 50 * (1 + LEVEL)])
        lo, hi = bootstrap.contain(*q, self.peak_n)
        return float(lo), (float(hi) if np.isfinite(hi) else None)   # None: unbounded (kappa may be 0)

    @property
    def asymptote(self) -> float | None:
        """With kappa = 0 throughput levels off towards lam / sigma."""
        return self.lam / self.sigma if self.kappa == 0 and self.sigma > 0 else None

    def band(self, n) -> tuple[np.ndarray, np.ndarray]:
        """Pointwise 95 % band of X(n) over the replicate fits."""
        r = self.replicates[np.all(np.isfinite(self.replicates), axis=1)]
        n = np.asarray(n, dtype=np.float64)
        if not len(r):   # no replicates (--replicates 0): the point curve is all there is
            return self.x(n), self.x(n)
        xs = usl(n[None, :], r[:, :1], r[:, 1:2], r[:, 2:3])
        lo, hi = np.percentile(xs, [50 * (1 - LEVEL), 50 * (1 + LEVEL)], axis=0)
        x = self.x(n)   # the band contains the fitted curve, as every interval its estimate
        return np.minimum(lo, x), np.maximum(hi, x)

    def summary(self) -> str:
        kind = "USL" if self.kappa_free else "USL with kappa = 0 (two instance counts: contention only)"
        return (f"{kind}: lambda {self.lam:,.0f} req/s per instance, sigma {self.sigma:.3f}, "
                f"kappa {self.kappa:.4g}")


def misfits(points: list[Point], f: Fit) -> list[tuple[int, float, float]]:
    """(instances, measured, fit) for each count the fitted curve misses by more than 3 standard errors.

    The USL cannot follow better-than-linear scaling (sigma >= 0) or a count
    measured on a bad day; the report says so rather than let the curve
    speak for points it does not describe. (3 standard errors, not the 95 %
    interval: with several counts one of them misses its 95 % interval by
    chance quite often.)"""
    out = []
    for p in sorted(points, key=lambda p: p.instances):
        se = rel_se(p) * p.capacity
        x = float(f.x(p.instances))
        if abs(x - p.capacity) > 3 * se and not (p.lower_bound and x >= p.capacity):
            out.append((p.instances, p.capacity, x))
    return out


def rel_se(p: Point) -> float:
    """Relative standard error of a count's capacity, from its replicates' 95 % interval."""
    lo, hi = _ci(p.replicates)
    if lo is None or p.capacity <= 0:
        return MIN_REL_SE
    return max((hi - lo) / (2 * 1.959964) / p.capacity, MIN_REL_SE)


def fit(points: list[Point]) -> Fit | None:
    """The USL over the instance counts with a capacity; None with fewer than two counts.

    Three or more counts fit lam, sigma and kappa; two fit lam and sigma with
    kappa = 0 (said so in Fit.kappa_free). Replicates are paired by index
    across counts (they are independent: each count's runs are resampled on
    their own). A lower bound is left out: fitted as a value it would pull
    the curve down to a floor (the report names it, and misfits() flags a
    curve below it).
    """
    pts = sorted((p for p in points if p.capacity and p.capacity > 0 and not p.lower_bound),
                 key=lambda p: p.instances)
    if len({p.instances for p in pts}) < 2 or len({p.instances for p in pts}) != len(pts):
        return None
    n = np.array([p.instances for p in pts], dtype=np.float64)
    y = np.array([p.capacity for p in pts])
    se = np.array([rel_se(p) for p in pts])
    kfree = len(pts) >= 3
    point = fit_batch(n, y[None, :], se, kfree)[0]
    if not np.all(np.isfinite(point)):
        return None
    reps = min(len(p.replicates) for p in pts)
    if reps:
        ry = np.stack([p.replicates[:reps] for p in pts], axis=1)
        rfits = fit_batch(n, ry, se, kfree)
    else:
        rfits = np.empty((0, 3))
    return Fit(counts=[p.instances for p in pts], lam=float(point[0]), sigma=float(point[1]),
               kappa=float(point[2]), kappa_free=kfree, replicates=rfits,
               lam_ci=_ci(rfits[:, 0], point=float(point[0])), sigma_ci=_ci(rfits[:, 1], point=float(point[1])),
               kappa_ci=_ci(rfits[:, 2], point=float(point[2])))


# ---------------------------------------------------------------- recommendation

@dataclass
class Advice:
    scenario: str
    target: float
    instances: int | None
    extrapolated: bool
    basis: str                   # measured, fit, none
    text: str
    capacity_low: float | None = None     # the lower bound the recommendation rests on
    peak_instances: float | None = None
    peak_throughput: float | None = None


def measured_fall(points: list[Point]) -> tuple[int, int] | None:
    """(fewer, more): two measured instance counts where the larger one's capacity is below the smaller
    one's beyond both intervals (the larger's upper end under the smaller's lower end; without replicates,
    the point values), the only evidence that adding instances lowers throughput. A fit's peak is an
    extrapolation and never that evidence; a lower bound can only be the smaller count of a fall (its
    capacity is at least that), never the larger. None when no measured capacity falls."""
    pts = sorted((p for p in points if p.capacity and p.capacity > 0), key=lambda p: p.instances)
    ends = []
    for p in pts:
        lo, hi = _ci(p.replicates, point=p.capacity)
        ends.append((p.capacity if lo is None else lo, p.capacity if hi is None else hi))
    for j, q in enumerate(pts):
        if q.lower_bound:
            continue
        for i in range(j):
            if pts[i].instances < q.instances and ends[j][1] < ends[i][0]:
                return pts[i].instances, q.instances
    return None


def _measured_lows(pts: list[Point], sizing: dict[int, float]) -> dict[int, float]:
    """Each measured count's figure the recommendation may rely on: its interval's lower end, and no more than
    its figure to size with where open arrivals held the SLO only lower (sizing: instances -> req/s)."""
    out = {}
    for p in pts:
        lo, _ = _ci(p.replicates, point=p.capacity)
        lo = p.capacity if lo is None else lo
        out[p.instances] = min(lo, sizing[p.instances]) if p.instances in sizing else lo
    return out


def _fit_count(f: Fit | None, target: float, after: int) -> tuple[int | None, float | None]:
    """The smallest count above `after` whose fit band's lower end reaches target, and that lower end."""
    if f is None:
        return None, None
    ns = np.arange(1, MAX_INSTANCES + 1)
    lo_band, _ = f.band(ns)
    hit = np.flatnonzero((lo_band >= target) & (ns > after))
    return (int(ns[hit[0]]), float(lo_band[hit[0]])) if len(hit) else (None, None)


def recommend(scenario: str, target: float, points: list[Point], f: Fit | None,
              open_points: list[Point] | None = None, open_fit: Fit | None = None) -> Advice:
    """Smallest instance count whose capacity at the SLO reaches target, judged by the lower bound.

    points and f: the closed-loop capacities and their fit; open_points and open_fit: the figures to size
    with of the counts where open arrivals held the SLO only lower, and their own fit (None with fewer than
    two such counts). A measured count counts when the lower end of its interval, and its figure to size
    with, reach the target; any other count when the lower end of the fit's 95 % band does (and of the
    open-loop fit's, when there is one) and it is above every count whose figure to size with missed the
    target (measured evidence outweighs a fit). Counts beyond the largest measured one are marked
    extrapolated. When not even the fit's point curve reaches the target, the answer is that no instance
    count does (_unreachable).
    """
    sizing = {p.instances: p.capacity for p in open_points or []}
    pts = sorted((p for p in points if p.capacity), key=lambda p: p.instances)
    if not pts:
        return Advice(scenario, target, None, False, "none",
                      f"{scenario}: no run with a known instance count met the SLO; cannot recommend an "
                      "instance count")
    top = pts[-1].instances
    measured = _measured_lows(pts, sizing)
    missed = max((n for n, v in sizing.items() if v < target), default=0)
    fit_n, fit_lo = _fit_count(f, target, missed)
    open_n, open_lo = _fit_count(open_fit, target, missed)
    if fit_n is not None and open_fit is not None:
        if open_n is None:
            return Advice(scenario, target, None, False, "fit",
                          f"{scenario}: the closed-loop fit reaches {target:g} req/s at {fit_n} instances, but what "
                          f"open arrivals hold does not: the 95 % lower bound of the open-loop figures' fit never "
                          "reaches it" + (f" (that fit levels off towards {open_fit.asymptote:,.0f} req/s)"
                                          if open_fit.asymptote else "") + "; size with the open-loop figures")
        if open_n > fit_n:
            fit_n, fit_lo, f = open_n, open_lo, open_fit
    meas_n = next((n for n, lo in sorted(measured.items()) if lo >= target), None)
    if meas_n is not None and (fit_n is None or meas_n <= fit_n):
        v = measured[meas_n]
        detail = (f"figure to size with (what open arrivals hold) is {v:,.0f} req/s" if sizing.get(meas_n) == v
                  else f"capacity at the SLO is at least {v:,.0f} req/s (95 % interval's lower end)")
        return Advice(scenario, target, meas_n, False, "measured",
                      f"{scenario}: {meas_n} instance(s): measured {detail}, enough for {target:g} req/s",
                      capacity_low=v)
    if fit_n is not None:
        ext = fit_n > top
        kind = "open-loop figures'" if f is open_fit else "closed-loop"
        text = (f"{scenario}: {fit_n} instance(s) for {target:g} req/s: the {kind} scalability fit's 95 % "
                f"lower bound at {fit_n} is {fit_lo:,.0f} req/s (fit {float(f.x(fit_n)):,.0f})"
                + (f" - EXTRAPOLATED beyond the largest measured count ({top}); measure {fit_n} "
                   "instances to confirm" if ext else f", within the measured range (1-{top})"))
        return Advice(scenario, target, fit_n, ext, "fit", text + ("" if open_fit else _open_caveat(sizing, pts)),
                      capacity_low=fit_lo)
    if f is None:
        why = ("one instance count measured: scaling cannot be estimated; measure at least two more "
               "(three give the full model)") if len(pts) == 1 else "no scalability fit"
        return Advice(scenario, target, None, False, "none",
                      f"{scenario}: no measured count reaches {target:g} req/s (largest: {top} instance(s), "
                      f"at least {measured[top]:,.0f} req/s); {why}")
    return _unreachable(scenario, target, pts, f, top, missed)


def _open_caveat(sizing: dict[int, float], pts: list[Point]) -> str:
    """What a closed-loop fit's count leaves unsaid when open arrivals held less at some measured count."""
    if not sizing:
        return ""
    cap = {p.instances: p.capacity for p in pts}
    held = ", ".join(f"{n} instance(s) {v:,.0f} of {cap[n]:,.0f} req/s" if v > 0 else
                     f"{n} instance(s) at no rate tried of {cap[n]:,.0f} req/s"
                     for n, v in sorted(sizing.items()) if n in cap)
    return (f" - but open arrivals held the SLO only below the closed loop ({held}): run that count with the "
            "open-loop confirmation before sizing with it")


def _unreachable(scenario: str, target: float, pts: list[Point], f: Fit, top: int, missed: int) -> Advice:
    """No count's lower bound reaches the target: whether the fit's curve ever does, where it peaks or levels
    off, and a retrograde verdict only when measured capacities fall (measured_fall)."""
    ns = np.arange(1, MAX_INSTANCES + 1)
    xs = f.x(ns)
    fall = measured_fall(pts)
    if f.peak_n is not None:
        npk, xpk = f.peak_n, float(f.x(f.peak_n))
        where = f"the fit peaks at about {xpk:,.0f} req/s near {npk:.0f} instances (N* = {npk:.1f})"
    elif f.asymptote is not None:
        npk, xpk = None, f.asymptote
        where = f"throughput levels off towards {xpk:,.0f} req/s (lambda/sigma, kappa = 0)"
    else:
        npk, xpk = None, None
        where = "the fit scales without limit but its lower bound does not reach it"
    reach = np.flatnonzero((xs >= target) & (ns > missed))
    if len(reach) and (xpk is None or xpk >= target):
        text = (f"{scenario}: the fit reaches {target:g} req/s at about {int(ns[reach[0]])} instances, but its "
                f"95 % lower bound never does ({where}); too uncertain to recommend: repeat the runs or measure "
                "more instance counts")
    else:
        text = f"{scenario}: no instance count reaches {target:g} req/s within the SLO: {where}; "
        if fall is not None:
            text += (f"past the peak, adding instances lowers throughput (measured: {fall[1]} instances carry "
                     f"less than {fall[0]}): look for the shared bottleneck (database, write lock)")
        else:
            text += ("look for the shared bottleneck (database, write lock)" + (
                "; the measured capacities do not fall with instances, so the peak is the fit's extrapolation, "
                "not a measured loss" if npk is not None else ""))
        _, hi_band = f.band(ns)
        if np.any(hi_band >= target):
            text += (f" - but the fit is uncertain: its 95 % band's upper end does reach {target:g} req/s, so "
                     "repeat the runs (they are combined) or measure more instance counts before relying on it")
    return Advice(scenario, target, None, bool(npk and npk > top), "fit", text,
                  peak_instances=npk, peak_throughput=xpk)
