"""Utilisation against throughput (Cockcroft's headroom view): one panel per run, one per scaling study.

Each sampled resource's CPU share per step against the step's throughput, as credhub-perf wrote them to
summary.json (utilisation.py reads them); beside them, dashed, the busy share of each machine they run on
and, hatched, the part of it other work took (machines.py); the run's capacity at the SLO as a vertical
line, the 70 % share from which credhub-perf names a resource as a horizontal one. A scaling study draws
the database's share per instance count on one axis, so its growth towards the ceiling that ends scaling
is visible.
"""
from __future__ import annotations

import textwrap

import numpy as np

from . import machines, plots, utilisation
from .plots import plt
from .runs import Run

COLORS = {"credhub": "#1f77b4", "database": "#d62728"}
OTHER = ["#2ca02c", "#9467bd", "#8c564b", "#e377c2"]
VERDICT_LINES = 5


def _color(name: str, i: int) -> str:
    return COLORS.get(name, OTHER[i % len(OTHER)])


def draw_run(run: Run, ru: utilisation.RunUtil, out_dir: str, formats: list[str],
             peak: float | None = None) -> list[str]:
    """utilisation-<slug>: every resource's CPU share against throughput, the capacity marked."""
    if not any(np.any(np.isfinite(r.cpu)) for r in ru.resources) and not any(
            np.any(np.isfinite(m.busy)) for m in ru.machines):
        return []
    fig, ax = plt.subplots(figsize=(9, 6.2 if ru.machines else 4.8))
    xmax = 0.0
    for i, r in enumerate(ru.resources):
        ok = np.isfinite(r.cpu)
        if not ok.any():
            continue
        order = np.argsort(r.throughput[ok])
        xs, ys = r.throughput[ok][order], 100 * r.cpu[ok][order]
        xmax = max(xmax, float(xs.max()))
        ax.plot(xs, ys, "-o", color=_color(r.name, i), ms=5, lw=1.8, path_effects=plots.HALO,
                label=f"{r.label} CPU ({r.source})" if r.source else f"{r.label} CPU")
    xmax = max(xmax, _draw_machines(ax, ru))
    ax.axhline(100 * utilisation.BUSY, color="#999999", linestyle=":", linewidth=1.2,
               label=f"{100 * utilisation.BUSY:.0f} %: busy enough to name as the limit")
    if run.max_tput is not None:
        ax.axvline(run.max_tput, color="black", linestyle="--", linewidth=1.3,
                   label=f"capacity at the SLO: {run.capacity_text()}"[:110])
        xmax = max(xmax, run.max_tput)
    xmax = max(xmax, plots.operating_point(ax, peak))
    top = 105
    if ru.verdict and ru.machines:
        # A machine's busy share runs up to 100 %, where the verdict's box would hide it: the box gets a
        # band above 100 %, as high as its lines (the report has the whole verdict past VERDICT_LINES).
        lines = textwrap.wrap("bottleneck: " + ru.verdict, 112)
        if len(lines) > VERDICT_LINES:
            lines = lines[:VERDICT_LINES - 1] + [lines[VERDICT_LINES - 1][:108] + " \u2026"]
        ax.text(0.01, 0.985, "\n".join(lines), transform=ax.transAxes, va="top", fontsize=9,
                bbox=dict(boxstyle="round,pad=0.3", fc="white", ec="#888888", alpha=0.92))
        top = 107 + 5.5 * len(lines)
    elif ru.verdict:
        ax.text(0.01, 0.98, "bottleneck: " + ru.verdict, transform=ax.transAxes, va="top", fontsize=9,
                bbox=dict(boxstyle="round,pad=0.3", fc="white", ec="#888888", alpha=0.92), wrap=True)
    ax.set_xlim(0, xmax * 1.08 if xmax > 0 else 1)
    ax.set_ylim(0, top)
    ax.set_yticks(range(0, 101, 20))
    ax.set_xlabel("throughput (req/s)")
    ax.set_ylabel("CPU busy (% of the cores it may use)")
    ax.set_title(f"Utilisation against throughput: {run.title()}", fontsize=10)
    ax.grid(True, color="#dddddd", linewidth=0.6)
    if ru.machines:  # the legend's usual place is under the machine's curve too
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize=8, frameon=False)
    else:
        ax.legend(loc="lower right", fontsize=8, framealpha=0.92)
    fig.tight_layout()
    return plots._save(fig, out_dir, f"utilisation-{run.slug}", formats)


def _draw_machines(ax, ru: utilisation.RunUtil) -> float:
    """Each machine's busy share (dashed, squares) and the part other work took (hatched, from 0), in
    its one resource's colour, grey when resources share it; steal dotted when there was any. Returns
    the largest throughput drawn."""
    labels = utilisation.LABELS | {r.name: r.label for r in ru.resources}
    index = {r.name: i for i, r in enumerate(ru.resources)}
    xmax = 0.0
    for m in ru.machines:
        ok = np.isfinite(m.busy)
        if not ok.any():
            continue
        col = _color(m.resources[0], index.get(m.resources[0], 0)) if len(m.resources) == 1 else "#444444"
        name = machines.label(m, labels)
        o = np.argsort(m.throughput[ok])
        xs = m.throughput[ok][o]
        xmax = max(xmax, float(xs.max()))
        ax.plot(xs, 100 * m.busy[ok][o], "--s", color=col, ms=4, lw=1.5, label=f"{name}: busy")
        other = m.other[ok][o]
        known = np.isfinite(other)
        if known.any():  # an unknown share is left blank, not drawn as none
            ax.fill_between(xs, 0, 100 * np.nan_to_num(other), where=known, facecolor="none", edgecolor=col,
                            hatch="///", linewidth=0.8, alpha=0.7, label=f"{name}: other work")
        steal = m.steal[ok][o]
        if np.nanmax(steal, initial=0) > 0:
            ax.plot(xs, 100 * steal, ":", color=col, lw=1.5, label=f"{name}: stolen by the hypervisor")
    return xmax


def draw_study(scenario: str, per_count: list[tuple[int, float | None, utilisation.RunUtil]],
               ceiling: utilisation.Ceiling | None, out_dir: str, formats: list[str],
               peak: float | None = None) -> list[str]:
    """utilisation-<scenario>: the database's share (solid) and CredHub's (dashed) against throughput,
    one colour per instance count, each count's capacity a marker on the database's curve."""
    drawn = [(n, cap, ru) for n, cap, ru in per_count
             if any(r.name == utilisation.SHARED and np.any(np.isfinite(r.cpu)) for r in ru.resources)]
    if len(drawn) < 2:
        return []
    fig, ax = plt.subplots(figsize=(9, 5))
    cmap = plt.get_cmap("viridis")
    xmax = 0.0
    marked = False
    for j, (n, cap, ru) in enumerate(sorted(drawn, key=lambda t: t[0])):
        col = cmap(0.1 + 0.75 * j / max(1, len(drawn) - 1))
        for r in ru.resources:
            ok = np.isfinite(r.cpu)
            if not ok.any() or r.name not in ("credhub", utilisation.SHARED):
                continue
            o = np.argsort(r.throughput[ok])
            xs, ys = r.throughput[ok][o], 100 * r.cpu[ok][o]
            xmax = max(xmax, float(xs.max()))
            db = r.name == utilisation.SHARED
            ax.plot(xs, ys, "-o" if db else "--", color=col, ms=4, lw=2 if db else 1.2,
                    label=f"{n} instance{'s' if n != 1 else ''}: " + ("database" if db else "CredHub"))
            if db and cap is not None:
                ax.plot([cap], [float(np.interp(cap, xs, ys))], marker="D", color=col, markeredgecolor="black",
                        ms=8, zorder=6, linestyle="none")
                marked = True
    if marked:
        ax.plot([], [], marker="D", color="white", markeredgecolor="black", linestyle="none",
                label="capacity at the SLO of that count")
    if ceiling is not None:
        ax.axvline(ceiling.rps, color="#d62728", linestyle=":", linewidth=1.4,
                   label=f"database ceiling \u2248 {ceiling.rps:,.0f} req/s (throughput / busy share)")
        xmax = max(xmax, ceiling.rps)
    xmax = max(xmax, plots.operating_point(ax, peak))
    ax.axhline(100 * utilisation.BUSY, color="#999999", linestyle=":", linewidth=1)
    ax.set_xlim(0, xmax * 1.08 if xmax > 0 else 1)
    ax.set_ylim(0, 105)
    ax.set_xlabel("throughput (req/s)")
    ax.set_ylabel("CPU busy (%)")
    ax.set_title(f"{scenario}: how the shared database's utilisation grows with each instance count", fontsize=10)
    ax.grid(True, color="#dddddd", linewidth=0.6)
    ax.legend(loc="lower right", fontsize=7.5, framealpha=0.92, ncol=2)
    fig.tight_layout()
    return plots._save(fig, out_dir, f"utilisation-{scenario}", formats)
