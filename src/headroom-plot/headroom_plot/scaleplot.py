"""The scalability plot: closed-loop capacity at the SLO against instance count, with its USL fit.

The figures to size with where open arrivals held the SLO only lower are a second series (teal), with a
fit of their own when they come from two or more counts; the two kinds are never fitted together, and a
lower bound is drawn but not fitted (study.series, scalability.fit). Kept apart from plots.py (the
per-run pictures) so the two change independently; it shares plots.py's style and saving.
"""
from __future__ import annotations

import numpy as np

from . import bootstrap, plots, scalability
from .plots import plt
from .runs import Options

# A target beyond this multiple of the plotted capacities is noted at the axis' top, not drawn to scale.
TARGET_REACH = 3.0


def draw(s, opts: Options, out_dir: str, formats: list[str], target: float | None = None) -> list[str]:
    """s: a study.Scenario with a fit."""
    f = s.fit
    pts = sorted(s.points, key=lambda p: p.instances)
    top = pts[-1].instances
    nmax = max(2 * top, top + 2)
    if f.peak_n is not None:
        nmax = max(nmax, min(int(np.ceil(f.peak_n * 1.4)), 8 * top))
    if s.advice is not None and s.advice.instances:
        nmax = max(nmax, min(s.advice.instances + 2, 8 * top))
    ns = np.linspace(1, nmax, 400)
    lo, hi = f.band(ns)

    fig, ax = plt.subplots(figsize=(9, 7))
    ax.axvspan(top, nmax, color="#f4f0e6", zorder=0, label=f"extrapolated (beyond {top} measured)")
    ax.plot(ns, f.lam * ns, color="#999999", linestyle="--", linewidth=1.2,
            label=f"linear scaling ({f.lam:,.0f} req/s per instance)")
    if np.all(np.isfinite(lo)):
        ax.fill_between(ns, lo, hi, color="#4c78a8", alpha=0.18, linewidth=0, label="closed-loop fit, 95 % band")
    kind = "USL fit to the closed-loop capacities" + ("" if f.kappa_free else ", \u03ba = 0 (two counts)")
    ax.plot(ns, f.x(ns), color="#1f4e8c", linewidth=2,
            label=f"{kind}: \u03bb={f.lam:,.0f}, \u03c3={f.sigma:.3f}, \u03ba={f.kappa:.2g}")
    _points(ax, pts, "black", "o", (8, -12))
    ax.plot([], [], marker="o", color="black", linestyle="none",
            label="closed-loop capacity at the SLO (the ramp's), 95 % interval")
    if any(p.lower_bound for p in pts):
        ax.plot([], [], marker="^", color="black", markerfacecolor="white", linestyle="none",
                label="lower bound (SLO never crossed, or higher steps not counted): at least this, not fitted")
    _open_series(ax, s, ns)
    bad = scalability.misfits(pts, f)
    for n, m, _x in bad:
        ax.plot([n], [m], marker="o", markersize=16, markerfacecolor="none", markeredgecolor="#c0392b",
                markeredgewidth=1.6, zorder=7, linestyle="none")
    if bad:
        ax.plot([], [], marker="o", markersize=10, markerfacecolor="none", markeredgecolor="#c0392b",
                linestyle="none", label="the fit misses this count (> 3 standard errors)")
    # Counts whose every step that met the SLO was left out (tester-bound, unsteady): unknown, not zero,
    # and not in the fit; marked on the axis so the gap is not read as a count never measured.
    lost = sorted({c.instances for c in s.rows if c.instances and c.max_tput is None and c.why_none})
    for n in lost:
        ax.plot([n], [0], marker="x", color="#7b3294", markersize=11, markeredgewidth=2.2, zorder=8,
                linestyle="none", clip_on=False)
        ax.annotate("capacity unknown\n(see report)", (n, 0), textcoords="offset points", xytext=(0, 10),
                    ha="center", fontsize=8, color="#7b3294", path_effects=plots.HALO)
    if lost:
        ax.plot([], [], marker="x", color="#7b3294", markeredgewidth=2.2, linestyle="none",
                label="measured, capacity unknown: every step that met the SLO was tester-bound, unsteady "
                      "or incomplete (not in the fit)")
    if f.peak_n is not None and f.peak_n <= nmax:
        xp = float(f.x(f.peak_n))
        ax.plot([f.peak_n], [xp], marker="D", color="#e0a000", markeredgecolor="black", markersize=8, zorder=7,
                linestyle="none", label=f"the fit's peak N* = {f.peak_n:.1f} ({xp:,.0f} req/s)"
                + ("" if scalability.measured_fall(pts) else ": extrapolated, the measured capacities do not fall"))
    if target:
        ax.axhline(target, color="#c0392b", linestyle=":", linewidth=1.3, label=f"target {target:g} req/s")
        a = s.advice
        if a is not None and a.instances:
            y = a.capacity_low if a.capacity_low else target
            ax.plot([a.instances], [y], marker="*", color="#c0392b", markersize=15, zorder=8, linestyle="none",
                    label=f"recommended: {a.instances} instance{'s' if a.instances != 1 else ''}"
                          + (" (extrapolated)" if a.extrapolated else ""))
    ymax = max(float(np.nanmax(hi)) if np.all(np.isfinite(hi)) else 0, float(np.max(f.x(ns))),
               max(p.capacity for p in pts + s.open_points))
    if target and target > TARGET_REACH * ymax:
        # Drawn to scale, a target far beyond every count (--target-rps 1e9) leaves the measurements a
        # line along the axis: the axis stays the data's, and a note at its top says where the target is.
        ax.text(0.99, 0.98, f"target {target:g} req/s is far above this axis \u2191", transform=ax.transAxes,
                ha="right", va="top", fontsize=9, color="#c0392b", zorder=9, clip_on=True,
                bbox=dict(boxstyle="round,pad=0.3", fc="white", ec="#c0392b", alpha=0.9))
    elif target:
        ymax = max(ymax, target)
    ax.set_ylim(0, ymax * 1.12)
    ax.set_xlim(0.5, nmax + 0.5)
    ax.set_xlabel("CredHub instances")
    ax.set_ylabel("max throughput within the SLO (req/s)")
    ax.set_title(f"Scalability of {s.scenario}: closed-loop capacity at p{opts.slo_percentile:g} \u2264 "
                 f"{opts.slo_s * 1000:g} ms" + (" and open arrivals' figures to size with" if s.open_points else ""))
    ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax.grid(True, color="#dddddd", linewidth=0.6)
    # below the axes: inside, its many entries hid the measured points
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, fontsize=7.5, frameon=False)
    fig.tight_layout()
    return plots._save(fig, out_dir, f"scalability-{s.scenario}", formats)


def _points(ax, pts, color: str, marker: str, offset: tuple, ha: str = "left") -> None:
    """Measured figures with their 95 % intervals; a lower bound as a hollow triangle marked \u2265."""
    for p in pts:
        a, b = bootstrap.interval(p.replicates, point=p.capacity)
        if a is not None:
            ax.errorbar([p.instances], [p.capacity], yerr=[[p.capacity - a], [b - p.capacity]],
                        fmt="none", ecolor=color, elinewidth=1.4, capsize=5, zorder=5)
        ax.plot([p.instances], [p.capacity], marker="^" if p.lower_bound else marker, color=color,
                markerfacecolor="white" if p.lower_bound else color, markersize=7, zorder=6, linestyle="none")
        ax.annotate(("\u2265 " if p.lower_bound else "") + f"{p.capacity:,.0f}" + (f" (n={p.runs})" if p.runs > 1 else ""),
                    (p.instances, p.capacity), textcoords="offset points", xytext=offset, fontsize=8.5,
                    ha=ha, color=color, path_effects=plots.HALO)


def _open_series(ax, s, ns) -> None:
    """The figures to size with where open arrivals held the SLO only below the closed loop, and their own fit
    (two or more counts), in the confirmation's colour."""
    if not s.open_points:
        return
    _points(ax, sorted(s.open_points, key=lambda p: p.instances), plots.OPEN_COLOR, "v", (-9, -4), "right")
    ax.plot([], [], marker="v", color=plots.OPEN_COLOR, linestyle="none",
            label="figure to size with: what open arrivals hold, where below the closed loop (not in its fit)")
    g = s.open_fit
    if g is not None:
        ax.plot(ns, g.x(ns), color=plots.OPEN_COLOR, linestyle="-.", linewidth=1.6,
                label=f"USL fit to the open-loop figures ({len(g.counts)} counts): \u03bb={g.lam:,.0f}, "
                      f"\u03c3={g.sigma:.3f}, \u03ba={g.kappa:.2g}")
