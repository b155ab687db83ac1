"""The comparison plot: both sides' headroom curves with 95 % bands and the capacity difference marked (left),
and every difference B / A - 1 with its interval against zero (right)."""
from __future__ import annotations

import re
import textwrap

import numpy as np

from . import compare, plots
from .compare import Comparison, Item
from .runs import Options

plt = plots.plt
SIDE_COLORS = {"A": "#1f77b4", "B": "#d95f02"}
# Whether the data shows a difference, not which way is better (lower latency is, lower capacity is not).
SHOWS_COLORS = {compare.LOWER: "#222222", compare.HIGHER: "#222222", compare.SAME: "#8a8a8a",
                compare.CANNOT: "#bbbbbb"}


def stem(i: Item, c: Comparison) -> str:
    base = f"comparison-{i.scenario}"
    if sum(1 for j in c.items if j.scenario == i.scenario) > 1 or i.a.key != i.b.key:
        base += f"-{i.a.row.group}-vs-{i.b.row.group}"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", base).strip("_")


def _curves(ax, i: Item, c: Comparison, opts: Options) -> list[float]:
    """Each side's SLO-percentile curve with its band, its runs' steps and its capacity; the y values drawn."""
    q = opts.slo_percentile
    slo_ms = opts.slo_s * 1000
    ys = [slo_ms]
    for side, g in (("A", i.a), ("B", i.b)):
        col = SIDE_COLORS[side]
        seed = 17 if side == "A" else 29
        b = compare.band(g, q, seed)
        name = f"{side}: {c.names[side]}" + ("" if i.a.key == i.b.key else f" ({g.what})")
        if b is not None:
            x, y, lo, hi = b
            ok = np.isfinite(lo) & np.isfinite(hi)
            if ok.any():
                ax.fill_between(x[ok], lo[ok] * 1000, hi[ok] * 1000, color=col, alpha=0.18, lw=0)
                ys += list(hi[ok] * 1000)
            ax.plot(x, y * 1000, "-", color=col, lw=2, label=f"{name}: p{q:g}, 95 % band"
                    + (f" (median of {len(g.runs)} runs)" if len(g.runs) > 1 else ""))
            ys += list(y[np.isfinite(y)] * 1000)
        for k, r in enumerate(g.runs):
            # every step, counted or not: a side whose steps were left out (tester-bound, not steady) still
            # shows where it ran; filled markers count as capacity, hollow ones do not
            st = sorted(r.steps, key=lambda s: (s.concurrency or 0, s.rate or 0.0, s.index))
            xs = np.array([s.throughput for s in st])
            ps = np.array([s.slo_s for s in st]) * 1000
            ok = np.array([s.counts(opts.max_error_rate) for s in st], dtype=bool)
            ax.plot(xs, ps, ":", color=col, lw=0.9, alpha=0.6)
            ax.plot(xs[ok], ps[ok], "o", color=col, ms=4.5, alpha=0.8)
            ax.plot(xs[~ok], ps[~ok], "o", mfc="white", mec=col, ms=5.5, mew=1.2,
                    label=f"{side}: step not counted (tester-bound, not steady, incomplete or over the error "
                          "limit)" if k == 0 and (~ok).any() else None)
            ys += list(ps[np.isfinite(ps)])
        cap = g.row.max_tput
        if cap is not None:
            e = i.capacity.a if side == "A" else i.capacity.b
            if e.interval is not None:
                ax.errorbar([cap], [slo_ms], xerr=[[cap - e.interval[0]], [e.interval[1] - cap]], fmt="none",
                            ecolor=col, elinewidth=2.5, capsize=5, zorder=7)
            floor = "\u2265 " if g.lower_bound_reason() else ""
            ax.plot([cap], [slo_ms], marker="*", ms=17, color=col, mec="black", zorder=8, linestyle="none",
                    label=f"{side}: closed-loop capacity at the SLO {floor}{cap:,.0f} req/s")
        sz = i.sizing.get(side)
        if sz is not None and sz.gap and sz.value is not None:
            # credhub-perf's figure to size with, below the closed loop's: open arrivals held the SLO only there
            ax.plot([sz.value], [slo_ms], marker="v", ms=11, mfc="white", mec=col, mew=2, zorder=8,
                    linestyle="none", label=f"{side}: size with {sz.value:,.0f} req/s (open loop, credhub-perf's)")
    return ys


def _difference_span(ax, i: Item, opts: Options) -> None:
    """The two capacities' gap, shaded along the SLO line, with B - A and its interval."""
    a, b = i.a.row.max_tput, i.b.row.max_tput
    if a is None or b is None:
        return
    col = SHOWS_COLORS.get(i.verdict, "#777777")
    ax.axvspan(min(a, b), max(a, b), color=col, alpha=0.10, zorder=0)
    r = i.capacity.ratio
    text = f"B \u2212 A: {(r.value - 1) * 100:+.1f} %" if r.value is not None else "B \u2212 A: -"
    if r.interval is not None:
        text += f"\n95 %: {(r.interval[0] - 1) * 100:+.1f} \u2026 {(r.interval[1] - 1) * 100:+.1f} %"
    text += f"\n{i.verdict}"
    ax.annotate(text, ((a + b) / 2, opts.slo_s * 1000), xytext=(0, 34), textcoords="offset points", ha="center",
                fontsize=9, color=col, fontweight="bold", zorder=9, path_effects=plots.HALO,
                bbox=dict(boxstyle="round,pad=0.3", fc="white", ec=col, alpha=0.92))


def _forest(ax, i: Item) -> None:
    """B / A - 1 of every figure with its 95 % interval, one row each, against 0."""
    rows = [("closed-loop capacity", i.capacity)]
    if i.knee is not None:
        rows.append(("knee", i.knee))
    rows += [(f"p{p.percentile} at {p.throughput:,.4g} req/s", p.d)
             for p in sorted(i.latency, key=lambda p: (p.percentile, p.throughput))]
    rows = [(n, d) for n, d in rows if d.ratio.value is not None]
    if not rows:
        ax.text(0.5, 0.5, "nothing to compare:\nsee the verdict below", transform=ax.transAxes, ha="center",
                va="center", fontsize=11, color="#555555")
        ax.set_xticks([])
        ax.set_yticks([])
        for side in ("left", "bottom"):
            ax.spines[side].set_visible(False)
        return
    for k, (name, d) in enumerate(rows):
        y = len(rows) - 1 - k
        col = SHOWS_COLORS[d.shows] if k else SHOWS_COLORS.get(i.verdict, "#777777")
        v = (d.ratio.value - 1) * 100
        if d.ratio.interval is not None:
            lo, hi = ((d.ratio.interval[0] - 1) * 100, (d.ratio.interval[1] - 1) * 100)
            ax.plot([lo, hi], [y, y], "-", color=col, lw=2.2 if k == 0 else 1.6)
        ax.plot([v], [y], "D" if k == 0 else "o", color=col, ms=8 if k == 0 else 5.5, mec="black", mew=0.5)
    ax.axvline(0, color="black", lw=1)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([n for n, _ in reversed(rows)], fontsize=8.5)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel("B / A \u2212 1 (%), 95 % interval")
    ax.set_title("B against A: grey = no difference the data can show", fontsize=9.5, loc="left")
    ax.grid(True, axis="x", color="#dddddd", linewidth=0.6)
    for side in ("left",):
        ax.spines[side].set_visible(False)


def draw(i: Item, c: Comparison, opts: Options, out_dir: str, formats: list[str]) -> list[str]:
    fig, (ax, fx) = plt.subplots(1, 2, figsize=(15, 7), gridspec_kw={"width_ratios": [2.3, 1]})
    ys = _curves(ax, i, c, opts)
    slo_ms = opts.slo_s * 1000
    ax.axhline(slo_ms, color="#d62728", ls="--", lw=1.3, label=f"SLO: p{opts.slo_percentile:g} \u2264 {slo_ms:g} ms")
    _difference_span(ax, i, opts)
    v = np.array([y for y in ys if np.isfinite(y) and y > 0])
    log = plots.use_log(v)
    plots._set_latency_axis(ax, log, float(v.min()) if len(v) else 0.01, float(v.max()) if len(v) else slo_ms)
    ax.set_xlim(0, None)
    ax.set_xlabel("throughput (req/s)")
    ax.set_ylabel(f"p{opts.slo_percentile:g} latency (ms)" + (", log scale" if log else ""))
    ax.set_title(f"CredHub {i.scenario}: {c.names['B']} (B) against {c.names['A']} (A)", loc="left",
                 fontweight="bold")
    plots._legend(ax, loc="upper left", fontsize=8)
    _forest(fx, i)
    lines = textwrap.wrap("verdict: " + i.text, 190)
    verdict = "\n".join(lines[:3]) + (" ..." if len(lines) > 3 else "")
    fig.text(0.01, 0.005, verdict, fontsize=9, ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.02 + 0.022 * min(len(lines), 3), 1, 1))
    return plots._save(fig, out_dir, stem(i, c), formats)
