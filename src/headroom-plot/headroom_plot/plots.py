"""The pictures: headroom plot, overlay of runs, latency over time (matplotlib, Agg)."""
from __future__ import annotations

import io
import math
import os
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.image  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib import patheffects  # noqa: E402
from matplotlib.backends.backend_svg import RendererSVG  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402
from matplotlib.transforms import Affine2D, Bbox, TransformedBbox  # noqa: E402

from . import output  # noqa: E402
from .runs import Options, Run  # noqa: E402

SCATTER_POINTS = 20_000   # drawn; statistics always use every row
FAIL_POINTS = 1_500
PCT_COLORS = {50: "#2a9d4b", 95: "#e07b00", 99: "#8e3fbf"}
RUN_COLORS = plt.get_cmap("tab10").colors
SHADES = ("#f3f3f3", "#e4e9f2")
HALO = [patheffects.withStroke(linewidth=3.5, foreground="white")]

plt.rcParams.update({
    "font.size": 10, "axes.titlesize": 12, "axes.labelsize": 10, "legend.fontsize": 8.5,
    "axes.spines.top": False, "axes.spines.right": False, "figure.dpi": 100, "savefig.dpi": 100,
    "path.simplify": True, "agg.path.chunksize": 10000,
    "svg.fonttype": "none",  # text stays text: smaller, faster SVGs that remain searchable
})


def _ms_formatter():
    def fmt(v, _pos):
        if v <= 0:
            return "0"
        if v >= 1:
            return f"{v:g}"
        return f"{v:.2g}"
    return FuncFormatter(fmt)


def _legend(ax, **kw):
    leg = ax.legend(framealpha=0.92, **kw)
    for h in leg.legend_handles if hasattr(leg, "legend_handles") else leg.legendHandles:
        h.set_alpha(1)
    return leg


def _sample(n: int, k: int, seed: int = 0) -> np.ndarray:
    if n <= k:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n, size=k, replace=False))


def _scatter_sample(error: np.ndarray, seed: int):
    """The requests a scatter draws: (drawn, drawn that succeeded, every failure, failures drawn).

    Failures are sampled apart (seed + 1) so a few among millions are all drawn."""
    idx = _sample(len(error), SCATTER_POINTS, seed)
    fail_all = np.flatnonzero(error)
    return idx, idx[~error[idx]], fail_all, fail_all[_sample(len(fail_all), FAIL_POINTS, seed + 1)]


def use_log(values_ms: np.ndarray) -> bool:
    v = values_ms[np.isfinite(values_ms) & (values_ms > 0)]
    if len(v) < 2:
        return False
    lo, hi = np.percentile(v, [0.5, 99.9])
    return hi / max(lo, 1e-6) > 30


def _set_latency_axis(ax, log: bool, lo_ms: float, hi_ms: float) -> None:
    if log:
        ax.set_yscale("log")
        ax.set_ylim(max(lo_ms * 0.7, 1e-3), hi_ms * 1.6)
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_formatter(_ms_formatter())
    else:
        ax.set_ylim(0, hi_ms * 1.08)
    ax.grid(True, which="major", axis="both", color="#dddddd", linewidth=0.6)


def _save(fig, out_dir: str, stem: str, formats: list[str], spills: bool = False) -> list[str]:
    """spills: the figure's tight box reaches past its canvas (a legend hung outside the axes), so a
    drawing on the canvas cannot give the PNG: savefig measures without rendering and draws once."""
    paths = []
    layout = _Layout(fig, "png" in formats and not spills)
    for fmt in formats:
        p = os.path.join(out_dir, f"{stem}.{fmt}")
        # to a temporary name, renamed when complete: no truncated image on a full disk or Ctrl-C
        output.write(p, lambda tmp, fmt=fmt: _write_image(layout, tmp, fmt))
        paths.append(p)
    plt.close(fig)
    return paths


class _Layout:
    """One drawing of a figure that every saved format shares.

    savefig(bbox_inches="tight") draws the whole figure twice per format, once to measure the
    tight box and once to render, and the Python work of a draw (ticks, text layout, legends) is
    most of a plot's cost. Here the figure is drawn once on its Agg canvas at the saving dpi: that
    drawing gives the PNG's tight box (as savefig measures it) and, cropped to the box, the PNG.
    An SVG is drawn once, into the tight box measured with the SVG renderer's own text metrics
    (not a drawing: they differ from Agg's hinted ones, so the box is savefig's to the point).
    Without a PNG (--format svg or pdf) there is no drawing to share: savefig does it all.
    """

    def __init__(self, fig, png: bool):
        self.fig = fig
        self.bbox = self.png = None
        if png:
            fig.canvas.draw()
            renderer = fig.canvas.get_renderer()
            self.bbox = fig.get_tightbbox(renderer).padded(plt.rcParams["savefig.pad_inches"])
            self.png = self._crop(np.asarray(fig.canvas.buffer_rgba()))

    def _crop(self, buf: np.ndarray) -> np.ndarray | None:
        """The drawing cropped to the tight box, or None when the box reaches outside the canvas
        (text spilling past the figure's edge: savefig then draws the larger area itself)."""
        h, w = buf.shape[:2]
        d = self.fig.dpi
        # the canvas savefig would make for the box (as FigureCanvasBase.get_width_height sizes it),
        # placed where the box is
        tr = Affine2D().scale(d)
        bw, bh = (int(v + 1e-8) for v in TransformedBbox(Bbox.from_bounds(0, 0, *self.bbox.size), tr).max)
        x0, y0 = tr.transform(self.bbox.p0)
        c0, r0 = int(round(x0)), int(round(h - bh - y0))
        if c0 < 0 or r0 < 0 or c0 + bw > w or r0 + bh > h or bw < 1 or bh < 1:
            return None
        return buf[r0:r0 + bh, c0:c0 + bw].copy()

    def svg_bbox(self):
        """The tight box as savefig measures it for an SVG: at 72 dpi with RendererSVG's metrics."""
        fig = self.fig
        dpi = fig.dpi
        try:
            fig.dpi = 72
            w, h = fig.get_size_inches() * 72
            box = fig.get_tightbbox(RendererSVG(w, h, io.StringIO()))
        finally:
            fig.dpi = dpi
        return box.padded(plt.rcParams["savefig.pad_inches"])


def _write_image(layout: _Layout, path: str, fmt: str) -> None:
    # Light PNG compression: a few percent larger files for a much faster encode.
    png = {"pil_kwargs": {"compress_level": 1}}
    fig = layout.fig
    if fmt == "png" and layout.png is not None:
        matplotlib.image.imsave(path, layout.png, format="png", origin="upper", dpi=fig.dpi, **png)
    elif fmt == "png":
        fig.savefig(path, format="png", bbox_inches="tight" if layout.bbox is None else layout.bbox, **png)
    elif fmt == "svg" and layout.bbox is not None:
        fig.savefig(path, format="svg", bbox_inches=layout.svg_bbox())
    else:  # no drawing laid out yet, or a PDF (measured its own way): savefig measures and draws
        fig.savefig(path, format=fmt, bbox_inches="tight")


def _step_label(s) -> str:
    if s.rate:
        return f"{s.rate:g}/s"
    if s.concurrency is not None:
        return f"c={s.concurrency}"
    return f"step {s.index + 1}"


def _scatter_requests(ax, x, lat_ms, ok_idx, fail_idx, fail_total: int, size: float, label: str) -> None:
    """Draw the sampled requests: successes as a density-faded cloud, failures as red crosses."""
    # density-aware transparency: dense clouds fade so their shape shows
    alpha = float(np.clip(6000.0 / max(len(ok_idx), 1), 0.18, 0.7))
    ax.scatter(x[ok_idx], lat_ms[ok_idx], s=size, c="#3b6ea8", alpha=alpha, linewidths=0, rasterized=True,
               label=label)
    if len(fail_idx):
        ax.scatter(x[fail_idx], lat_ms[fail_idx], s=14, c="#d62728", marker="x", linewidths=0.8,
                   alpha=0.8, rasterized=True, zorder=3,
                   label=f"failed request ({fail_total:,} in total, {len(fail_idx):,} drawn)")


# How far beyond the measured steps the fitted curve is drawn (dotted), as a fraction of the most throughput
# a step carried.
EXTRAPOLATE = 0.15


def headroom(run: Run, opts: Options, out_dir: str, formats: list[str], title: str | None = None) -> list[str]:
    lat_ms = run.latency * 1000.0
    n = run.total
    idx, ok_idx, fail_all, fail_idx = _scatter_sample(run.error, 1)
    steps = run.steps
    slo_ms = opts.slo_s * 1000
    pct = opts.slo_percentile

    conf = run.confirmation.steps if run.confirmation else []
    probe = np.concatenate([lat_ms[idx], [s.max_s * 1000 for s in steps], [s.slo_s * 1000 for s in conf], [slo_ms]])
    log = use_log(probe)
    lo = float(np.percentile(lat_ms[idx], 0.1)) if len(idx) else 0.1
    hi = max(float(max(s.max_s for s in steps)) * 1000, slo_ms, max((s.slo_s * 1000 for s in conf), default=0))

    # The legend hangs below the headroom axes, in a row of its own (row 2): inside them it covered the
    # lightest steps' percentiles and the SLO line, whatever corner it took.
    fig = plt.figure(figsize=(12, 11.4))
    gs = fig.add_gridspec(5, 2, width_ratios=(5, 1.1), height_ratios=(1.1, 5, 1.45, 1.4, 0.5),
                          hspace=0.28, wspace=0.04)
    ax = fig.add_subplot(gs[1, 0])
    axt = fig.add_subplot(gs[0, 0], sharex=ax)
    axr = fig.add_subplot(gs[1, 1], sharey=ax)
    axs = fig.add_subplot(gs[3, 0])
    axc = fig.add_subplot(gs[4, :])
    axc.axis("off")

    xmax_plot = float(max(run.x.max(), max(s.throughput for s in list(steps) + list(conf)))) * 1.08
    _scatter_requests(ax, run.x, lat_ms, ok_idx, fail_idx, len(fail_all), 5,
                      f"one request (window throughput, latency); {len(idx):,} of {n:,} drawn")

    xs = np.array([s.throughput for s in steps])
    for q, attr in ((50, "p50_s"), (95, "p95_s"), (99, "p99_s")):
        ys = np.array([getattr(s, attr) for s in steps]) * 1000
        ax.plot(xs, ys, "-o", color=PCT_COLORS[q], ms=4.5, lw=1.8, zorder=5, path_effects=HALO,
                label=f"p{q} of each step")
    for colour, marker, _, label, hit in _flagged(run):
        fx = np.repeat([s.throughput for s in hit], 3)
        fy = np.array([[s.p50_s, s.p95_s, s.p99_s] for s in hit]).ravel() * 1000
        ax.plot(fx, fy, ls="none", marker=marker, ms=13, mfc="none", mec=colour, mew=2.0, zorder=6, label=label)

    edges = _worst_staircase(ax, run, xmax_plot)
    knee_note = _knee_curve(ax, run, opts, xmax_plot, hi)
    ax.axhline(slo_ms, color="#d62728", ls="--", lw=1.3, label=f"SLO: p{pct:g} \u2264 {slo_ms:g} ms")
    _capacity_marker(ax, run, slo_ms, xmax_plot)

    _confirmation_points(ax, run, opts)
    xmax_plot = max(xmax_plot, operating_point(ax, opts.peak_rps) * 1.08)
    banners = []
    if run.incomplete_reason:
        _incomplete_banner(ax, run)
    else:
        banners = run_banners(run)
    banner = "\n".join(textwrap.fill(b, 125) for b in banners)
    ax.set_xlim(0, xmax_plot)
    _set_latency_axis(ax, log, max(lo, 0.01), hi)
    ax.set_xlabel("throughput (req/s), measured in %gs windows within each step" % opts.window_s)
    ax.set_ylabel("latency (ms)" + (", log scale" if log else ""))
    _legend(ax, loc="upper left", bbox_to_anchor=(0, -0.1), ncol=2)
    if knee_note is not None:
        # below-left of the knee, unless that leaves the axes (a knee low on the latency axis): then above
        low = ax.transLimits.transform(ax.transScale.transform(knee_note[1]))[1] < 0.3
        ax.annotate(*knee_note, xytext=(-150, 40 if low else -48), textcoords="offset points", fontsize=9,
                    fontweight="bold", zorder=9, bbox=dict(boxstyle="round,pad=0.3", fc="white", ec="#999999",
                                                           alpha=0.95),
                    arrowprops=dict(arrowstyle="->", color="black"))

    _margins(axt, axr, run, ax, edges, lat_ms, fail_all, log, slo_ms, title or f"Headroom: {run.title()}", banner)

    _time_strip(axs, run, show_errors=True)
    axc.text(0, 1.0, textwrap.fill(_caption(run, opts), 160), va="top", ha="left", fontsize=9,
             color="#333333", transform=axc.transAxes)
    return _save(fig, out_dir, f"headroom-{run.slug}", formats, spills=True)


PEAK_COLOR = "#8c564b"  # brown: apart from the percentiles', the SLO's and the confirmation's colours


def operating_point(ax, peak: float | None) -> float:
    """The production peak (--workload) as a vertical line: the load the cluster carries today, against
    which the capacity's distance is the headroom. Returns the x it needs (0 without a peak)."""
    if not peak:
        return 0.0
    ax.axvline(peak, color=PEAK_COLOR, ls="-.", lw=1.8, zorder=7, label=f"production peak {peak:,.0f} req/s")
    ax.annotate(f"production peak {peak:,.0f} req/s", xy=(peak, 1), xycoords=("data", "axes fraction"),
                xytext=(7, -4), textcoords="offset points", va="top", ha="left", fontsize=8.5, color=PEAK_COLOR,
                fontweight="bold", rotation=90, zorder=9)
    return peak


def arrivals(a, peak: float, out_dir: str, formats: list[str]) -> list[str]:
    """workload-arrivals: production's requests per second over time, stacked by type (workload.py's
    bins: at most 1500 over the interval, so a long log is means per bin, with each bin's busiest second
    as a thin line above them and the peak dashed)."""
    import matplotlib.dates as mdates
    from .workload import binned

    starts, rates, busiest, width = binned(a)
    shown = min(len(a.types), 7)
    names = a.types[:shown] + (["other types"] if len(a.types) > shown else [])
    stack = np.vstack([rates[:shown]] + ([rates[shown:].sum(axis=0)] if len(a.types) > shown else []))
    t = np.array(starts, dtype="datetime64[s]").astype(object)
    fig, ax = plt.subplots(figsize=(12, 5))
    colors = plt.get_cmap("tab10").colors
    ax.stackplot(t, stack, labels=names, colors=colors[:len(names)], step="post", alpha=0.85, lw=0)
    if width > 1:
        ax.step(t, busiest, where="post", color="#333333", lw=0.6, alpha=0.8,
                label=f"busiest second of each {width} s bin (all types)")
    ax.axhline(peak, color=PEAK_COLOR, ls="--", lw=1.5, label=f"production peak {peak:,.0f} req/s (busiest second)")
    ax.set_ylim(0, max(peak, float(busiest.max())) * 1.12)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(ax.xaxis.get_major_locator()))
    per = "per second" if width == 1 else f"mean per {width} s bin"
    ax.set_ylabel(f"requests/s ({per})")
    ax.set_xlabel("time (UTC)")
    total = int(a.total.sum())
    ax.set_title(f"Production arrivals by request type: {total:,} requests over "
                 f"{int(a.seconds[-1] - a.seconds[0]) + 1:,} s ({os.path.basename(a.path)})", fontsize=10)
    ax.grid(True, color="#dddddd", linewidth=0.6)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8.5, framealpha=0.92)
    fig.tight_layout()
    return _save(fig, out_dir, "workload-arrivals", formats)


def _worst_staircase(ax, run: Run, xmax_plot: float) -> np.ndarray:
    """The worst latency seen up to each throughput; returns the throughput bins' edges."""
    edges = np.linspace(0, xmax_plot, 41)
    wx = run.win_count / run.win_width
    b = np.clip(np.digitize(wx, edges) - 1, 0, len(edges) - 2)
    stair = np.full(len(edges) - 1, np.nan)
    for i in np.unique(b):
        stair[i] = run.win_max[b == i].max() * 1000
    have = np.flatnonzero(np.isfinite(stair))
    if len(have):
        stair_f = np.maximum.accumulate(np.nan_to_num(stair, nan=0.0))
        seg = slice(have[0], have[-1] + 1)
        ax.stairs(stair_f[seg], edges[have[0]:have[-1] + 2], baseline=None, color="#7f7f7f", lw=1.2,
                  label="worst latency seen up to this throughput")
    return edges


def _knee_curve(ax, run: Run, opts: Options, xmax_plot: float, hi: float):
    """The fitted queueing curve, its extrapolation and the knee; the knee's note and where it points
    (drawn once the axes have their limits), or None."""
    knee_note = None
    k = run.knee
    if k is not None and k.b > 0:
        # The curve as fitted over the measured steps' throughputs; beyond them (and below the lightest
        # step) it is the fit's guess, drawn faint and labelled so.
        used = [s.throughput for s in run.steps if s.counts(opts.max_error_rate)]
        lo_x = min(used) if used else 0.0
        top = min(k.xmax - 1e-6, xmax_plot)
        fx = np.linspace(lo_x, min(k.measured_max, top), 300)
        fy = k.curve(fx) * 1000
        keep = fy <= hi * 3
        ax.plot(fx[keep], fy[keep], "--", color="black", lw=1.4, zorder=5,
                label=f"fitted queueing curve over the measured steps ({lo_x:,.0f}-{k.measured_max:,.0f} req/s)")
        # Beyond the measured steps the fit is a guess: its asymptote has been far above what the target
        # could do. A short dotted stretch shows the trend; the asymptote is neither drawn nor named.
        end = min(top, k.measured_max * (1 + EXTRAPOLATE))
        if end > k.measured_max * 1.001:
            ex = np.linspace(k.measured_max, end, 100)
            ey = k.curve(ex) * 1000
            keep = ey <= hi * 3
            ax.plot(ex[keep], ey[keep], ":", color="#888888", lw=1.3, zorder=4,
                    label=f"fitted curve EXTRAPOLATED up to {EXTRAPOLATE:.0%} beyond the measured steps "
                          "(the fit's guess, not measured)")
        if k.throughput is not None:
            ky = float(k.curve(k.throughput)) * 1000
            ext = " (EXTRAPOLATED below the measured steps)" if k.throughput < lo_x * 0.999 else ""
            ax.plot([k.throughput], [ky], marker="D", ms=11, color="gold", mec="black", zorder=6,
                    label=f"knee \u2248 {k.throughput:,.0f} req/s{ext}")
            knee_note = (f"knee \u2248 {k.throughput:,.0f} req/s{ext}\n(latency starts to climb)", (k.throughput, ky))
    return knee_note


def _capacity_marker(ax, run: Run, slo_ms: float, xmax_plot: float) -> None:
    """The star at the most throughput within the SLO, and its figure beside it."""
    if run.max_tput is None:
        return
    ax.axvline(run.max_tput, color="#d62728", ls=":", lw=1.3)
    floor = run.max_tput_how == "lower bound" or run.capacity_is_lower_bound
    bound = "\u2265" if floor else "\u2248"
    how = "LOWER BOUND: higher steps not counted" if run.capacity_is_lower_bound else run.max_tput_how
    ax.plot([run.max_tput], [slo_ms], marker="*", ms=16, color="#d62728", mec="black", zorder=7,
            label=f"max throughput within SLO {bound} {run.max_tput:,.0f} req/s ({how})")
    right = run.max_tput < 0.6 * xmax_plot  # beside the star, on the side with room
    ax.annotate(f"{bound} {run.max_tput:,.0f} req/s", (run.max_tput, slo_ms), xytext=(12 if right else -12, -6),
                textcoords="offset points", ha="left" if right else "right", va="top", fontsize=10,
                fontweight="bold", color="#d62728", zorder=9, path_effects=HALO)


def _margins(axt, axr, run: Run, ax, edges: np.ndarray, lat_ms: np.ndarray, fail_all: np.ndarray, log: bool,
             slo_ms: float, title: str, banner: str) -> None:
    """The marginal histograms (throughput above, latency on the right), the title and the caveats' banner."""
    n = run.total
    # Marginal histograms: where the requests were, on each axis.
    # Counted once and drawn as one filled outline per histogram: hist() with weights takes numpy's
    # slow weighted path over every row and draws a patch per bin.
    axt.stairs(_percent_of(run.x, edges, n), edges, fill=True, color="#3b6ea8", alpha=0.75)
    axt.set_ylabel("% of\nrequests")
    axt.tick_params(labelbottom=False)
    # the run's caveats (cold JVM, unjudged or drifting steps, a lower bound) right under the title
    nlines = banner.count("\n") + 1 if banner else 0
    axt.set_title(title, loc="left", fontweight="bold", pad=6 + 13 * nlines)
    if banner:
        axt.annotate(banner, (0, 1), xycoords="axes fraction", xytext=(0, 4), textcoords="offset points",
                     ha="left", va="bottom", fontsize=9.5, fontweight="bold", color="#b35900")
    ylo, yhi = ax.get_ylim()
    if log:
        bins = np.geomspace(ylo, yhi, 60)
    else:
        bins = np.linspace(ylo, yhi, 60)
    ok_lat = lat_ms[~run.error] if len(fail_all) else lat_ms
    axr.stairs(_percent_of(ok_lat, bins, n, log), bins, fill=True, orientation="horizontal", color="#3b6ea8",
               alpha=0.75, label="ok")
    if len(fail_all):
        axr.stairs(_percent_of(lat_ms[fail_all], bins, n, log), bins, fill=True, orientation="horizontal",
                   color="#d62728", alpha=0.8, label="failed")
    axr.axhline(slo_ms, color="#d62728", ls="--", lw=1.0)
    axr.set_xlabel("% of requests")
    axr.tick_params(labelleft=False)
    axr.grid(True, axis="y", color="#eeeeee")


# The open-loop confirmation's colour (teal) and marker (triangles): apart from the percentile lines, the
# SLO's red and the flagged steps' rings, squares, hexagons and diamonds.
OPEN_COLOR = "#00838f"


def _confirmation_points(ax, run: Run, opts: Options) -> None:
    """The open-loop confirmation on the headroom plot (openloop.py): each fixed-rate step's SLO
    percentile at its throughput (hollow teal triangles; filled where it met the SLO and counted), and where
    open arrivals hold the SLO (credhub-perf's figure), a teal star beside the closed loop's red one."""
    c = run.confirmation
    if c is None or not c.steps:
        return
    pct, slo_ms = opts.slo_percentile, opts.slo_s * 1000
    xs = np.array([s.throughput for s in c.steps])
    ys = np.array([s.slo_s for s in c.steps]) * 1000
    held = np.array([s.slo_s <= opts.slo_s and s.counts(opts.max_error_rate) for s in c.steps])
    ax.plot(xs, ys, ":", color=OPEN_COLOR, lw=1.4, zorder=6)
    if held.any():
        ax.plot(xs[held], ys[held], ls="none", marker="^", ms=10, color=OPEN_COLOR, mec="black", zorder=7,
                label=f"open-loop confirmation: p{pct:g} of a fixed-rate step (met the SLO)")
    if (~held).any():
        ax.plot(xs[~held], ys[~held], ls="none", marker="^", ms=10, mfc="white", mec=OPEN_COLOR, mew=2.0, zorder=7,
                label=f"open-loop confirmation: p{pct:g} of a fixed-rate step (missed the SLO or not counted)")
    if c.capacity is not None:
        # The open-loop capacity is interpolated towards the miss: an estimate no step ran at, never the figure
        # to size with unless it confirms the closed loop's (credhub-perf sizes with the highest rate held).
        verdict = ("confirms the closed loop" if c.agree else
                   f"estimate; SIZE WITH {c.size_with:,.0f} req/s, the highest rate held" if c.size_with is not None
                   else "estimate; no rate tried held it")
        ax.plot([c.capacity], [slo_ms], marker="*", ms=16, color=OPEN_COLOR, mec="black", zorder=8,
                label=f"open arrivals hold the SLO to {c.capacity:,.0f} req/s ({verdict})")


def run_banners(run: Run) -> list[str]:
    """What makes a run's figures less than they seem, for its headroom plot: a warm-up that was off or not
    steady (a cold JVM), steps that drifted or could not be judged steady, a capacity that is a lower bound."""
    from .runs import warmup_headline
    out = []
    head = warmup_headline(run.meta)
    if head:
        out.append(head[0].upper() + head[1:])
    drift = [s for s in run.steps if s.steady is False]
    if drift:
        out.append(f"NOT STEADY: {len(drift)} step(s) drifted within the step; not counted")
    if run.not_judged:
        short = [s.duration_s for s in run.steps if s.unjudged == "too short"]
        out.append(run.not_judged.split(":")[0] + (f" (steps of {max(short):.3g} s are too short)" if short else "")
                   + ("; counted after a steady warm-up" if any(s.unjudged and s.counts_unjudged for s in run.steps)
                      else "; not counted as capacity"))
    if run.capacity_is_lower_bound:
        # the kinds of step left out, without the advice (the caption and the report give it)
        kinds = "; ".join(p.split(":")[0] for p in run.lower_bound_reason.split("; ") if p[:1].isdigit())
        out.append(f"Capacity is a LOWER BOUND: at least {run.max_tput:,.0f} req/s (steps up to "
                   f"{run.lower_bound_top:,.0f} req/s within the SLO were not counted: {kinds})")
    if run.capacity_label:
        out.append(run.capacity_label[0].upper() + run.capacity_label[1:])
    c = run.confirmation
    if c is not None and c.headline and not c.agree:
        out.append(c.headline[0].upper() + c.headline[1:])
    return out


def _incomplete_banner(ax, run: Run) -> None:
    """An incomplete run's verdict on its plot: its figures lack some testers' load. Lower right, where a
    headroom curve (latency rising with throughput) leaves room and the legend is not."""
    ax.text(0.99, 0.03, textwrap.fill("INCOMPLETE RUN: %s. Every step undercounts the load; no capacity."
                                      % run.incomplete_reason, 60),
            transform=ax.transAxes, ha="right", va="bottom", fontsize=10, fontweight="bold", color="#8c564b",
            zorder=10, bbox=dict(boxstyle="round,pad=0.4", fc="white", ec="#8c564b", lw=1.5, alpha=0.95))


def _percent_of(values: np.ndarray, edges: np.ndarray, n: int, log: bool = False) -> np.ndarray:
    """Per bin, the share (%) of all n requests whose value falls in it.

    edges are evenly spaced (in log space with log): given as a count and a range, numpy bins by
    arithmetic, where an array of edges makes it sort every value (0.5 s of a 10-million-row plot)."""
    lo, hi = float(edges[0]), float(edges[-1])
    if log:
        with np.errstate(divide="ignore", invalid="ignore"):  # a 0 ms latency falls below every bin
            values = np.log(values)
        lo, hi = math.log(lo), math.log(hi)
    return np.histogram(values, bins=len(edges) - 1, range=(lo, hi))[0] * (100.0 / n)


def _caption(run: Run, opts: Options) -> str:
    parts = ["How to read: each dot is one request - across is the throughput of the %gs window it ran in, "
             "up is its latency. Coloured lines join each load step's p50/p95/p99. " % opts.window_s,
             "Left of the knee, more load costs little latency; past it requests queue, so throughput "
             "barely grows while latency climbs. "]
    from .runs import warmup_headline
    head = warmup_headline(run.meta)
    if head:
        parts.insert(0, head[0].upper() + head[1:] + ". ")
    if run.not_judged:
        parts.append(run.not_judged[0].upper() + run.not_judged[1:] + ". ")
    if run.max_tput is not None and run.capacity_is_lower_bound:
        parts.append("The red star is a LOWER BOUND on your capacity at p%g within %g ms: %s. "
                     % (opts.slo_percentile, opts.slo_s * 1000, run.capacity_text()))
    elif run.max_tput is not None:
        parts.append("The red star is the most throughput that kept p%g within %g ms (%s)%s: your capacity at "
                     "that SLO. " % (opts.slo_percentile, opts.slo_s * 1000, run.max_tput_how,
                                     " and every request type of the mix within its own bound (the report's "
                                     "per-type table)" if run.by_request else ""))
    elif run.no_capacity_why:
        parts.append("CAPACITY UNKNOWN: %s. " % run.no_capacity_why)
    else:
        parts.append("No step kept p%g within %g ms: no capacity at this SLO. " % (opts.slo_percentile,
                                                                                  opts.slo_s * 1000))
    parts.append("Margins: how many requests ran at each throughput (top) and latency (right). "
                 "Bottom strip: throughput over time, one shade per step. ")
    for _, _, _, label, hit in _flagged(run):
        parts.append("Ringed and hatched: %d step(s) %s. " % (len(hit), label))
    k = run.knee
    if k is not None and k.throughput is None and k.estimate:
        parts.append("The knee is beyond the measured steps (the fit, EXTRAPOLATED, places it near %s req/s): "
                     "not drawn. " % f"{k.estimate:,.0f}")
    return "".join(parts)


def _time_strip(ax, run: Run, show_errors: bool) -> None:
    tp = run.win_count / run.win_width
    _shade_steps(ax, run, label_y=None)
    t, y = _per_step_stairs(run, tp)
    ax.plot(t, y, color="#3b6ea8", lw=1.0, label="throughput")
    if show_errors and run.win_errors.sum() > 0:
        t, y = _per_step_stairs(run, run.win_errors / run.win_width)
        ax.plot(t, y, color="#d62728", lw=1.0, label="failures/s")
        ax.legend(loc="lower right", fontsize=8, framealpha=0.9)
    ax.set_ylabel("req/s")
    ax.set_xlabel("time since start of run (s)")
    ax.set_ylim(0, max(float(tp.max()) * 1.15, 1))
    _time_axis(ax, run)


def _per_step_stairs(run: Run, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Window values as a staircase, broken (NaN) between steps so pauses are not drawn as load."""
    t0 = run.win_t0
    t1 = run.win_t0 + run.win_width
    xs = np.empty(3 * len(t0))
    ys = np.empty(3 * len(t0))
    xs[0::3], xs[1::3], xs[2::3] = t0, t1, t1
    ys[0::3], ys[1::3], ys[2::3] = values, values, values
    gap = np.flatnonzero(np.diff(run.win_step) != 0)
    ys[3 * gap + 2] = np.nan
    return xs, ys


# Steps that do not count as capacity: their marks on every plot.
FLAGS = (
    ("steady", False, "#ff7f0e", "o", "//", "not steady (drifted within the step): not counted as capacity"),
    ("tester_bound", True, "#9467bd", "s", "\\\\", "tester-bound (tester short of CPU): not counted as capacity"),
    ("incomplete", True, "#8c564b", "D", "xx",
     "incomplete (a tester missed part of the step or left no results file): not counted as capacity"),
    ("unjudged_left_out", True, "#bcbd22", "h", "..",
     "too short to judge steady, without a steady run warm-up: not counted as capacity"),
)


def _flagged(run: Run):
    """(colour, marker, hatch, legend label, steps) for each kind of flag some step carries."""
    for attr, value, colour, marker, hatch, label in FLAGS:
        hit = [s for s in run.steps if getattr(s, attr) is value]
        if hit:
            yield colour, marker, hatch, label, hit


def _mark_flagged_spans(ax, run: Run) -> None:
    for colour, _, hatch, label, hit in _flagged(run):
        for j, s in enumerate(hit):
            ax.axvspan(s.t0, s.t1, facecolor="none", edgecolor=colour, hatch=hatch, lw=0, zorder=1,
                       label=label if j == 0 else None)


def _time_axis(ax, run: Run) -> None:
    """The time axis (analysis.time_axis), and its note at the right end when it was cut short."""
    lo, hi, note = run.time_axis
    ax.set_xlim(lo, hi)
    if note:
        ax.text(0.995, 0.5, note + " →", transform=ax.transAxes, ha="right", va="center", fontsize=8.5,
                color="#8c564b", zorder=10, clip_on=True,
                bbox=dict(boxstyle="round,pad=0.3", fc="white", ec="#8c564b", alpha=0.9))


def _shade_steps(ax, run: Run, label_y: float | None, text: bool = True) -> None:
    lo, hi, _ = run.time_axis
    span = max(hi - lo, 1e-9)
    free = [-1.0, -1.0]  # right edge (axis fraction) of the last label on each of two rows
    _mark_flagged_spans(ax, run)
    spans = np.array([(s.t0, s.t1 - s.t0) for s in run.steps])
    for k, shade in enumerate(SHADES):
        # every other step in one collection: an axvspan per step took seconds per thousand steps
        ax.broken_barh(spans[k::2], (0, 1), transform=ax.get_xaxis_transform(), color=shade, zorder=0, lw=0)
    for i, s in enumerate(run.steps):
        if not text:
            break
        label = _step_label(s)
        # At the middle of the step's part of the axis: a label placed outside it would still be laid
        # out, and the saved image would grow to reach it.
        mid = (max(float(s.t0), lo) + min(float(s.t1), hi)) / 2
        centre = (mid - lo) / span
        half = 0.0045 * len(label)  # rough text half-width at 8.5 pt on a 12 in wide axis
        for row, y in enumerate((0.97, 0.91)):
            if centre - half > free[row] + 0.004:
                ax.text(mid, y, label, transform=ax.get_xaxis_transform(), ha="center", va="top",
                        fontsize=8.5, color="#333333", zorder=5, clip_on=True,
                        bbox=dict(boxstyle="square,pad=0.1", fc=SHADES[i % 2], ec="none", alpha=0.8))
                free[row] = centre + half
                break


def latency_over_time(run: Run, opts: Options, out_dir: str, formats: list[str]) -> list[str]:
    lat_ms = run.latency * 1000.0
    n = run.total
    idx, ok_idx, fail_all, fail_idx = _scatter_sample(run.error, 3)
    slo_ms = opts.slo_s * 1000
    probe = np.concatenate([lat_ms[idx], [s.max_s * 1000 for s in run.steps], [slo_ms]])
    log = use_log(probe)
    hi = max(float(max(s.max_s for s in run.steps)) * 1000, slo_ms)
    lo = float(np.percentile(lat_ms[idx], 0.1))

    # The legend hangs below the axes: 2 inches more canvas under the usual 12 x 5.8 layout hold it, so
    # the one drawing is cropped to the tight box rather than drawn again (_Layout). Same axes, same picture.
    fig, ax = plt.subplots(figsize=(12, 5.8 + 2.0))
    fig.subplots_adjust(bottom=(0.11 * 5.8 + 2.0) / 7.8, top=1 - 0.12 * 5.8 / 7.8)
    _shade_steps(ax, run, None)
    _scatter_requests(ax, run.offset, lat_ms, ok_idx, fail_idx, len(fail_all), 4,
                      f"one request (start time, latency); {len(idx):,} of {n:,} drawn")
    t, y = _per_step_stairs(run, run.win_max * 1000)
    ax.plot(t, y, color="#7f7f7f", lw=0.8,
            label="max latency per %gs window" % opts.window_s)
    t0s = np.array([s.t0 for s in run.steps])
    t1s = np.array([s.t1 for s in run.steps])
    for q, attr in ((50, "p50_s"), (95, "p95_s"), (99, "p99_s")):
        # one collection for every step: an artist per step took seconds per thousand steps
        ax.hlines(np.array([getattr(s, attr) for s in run.steps]) * 1000, t0s, t1s, color=PCT_COLORS[q], lw=2.0,
                  zorder=5, path_effects=HALO, label=f"p{q} of the step")
    ax.axhline(slo_ms, color="#d62728", ls="--", lw=1.3, label=f"SLO: p{opts.slo_percentile:g} \u2264 {slo_ms:g} ms")
    _set_latency_axis(ax, log, max(lo, 0.01), hi)
    _time_axis(ax, run)
    ax.set_xlabel("time since start of run (s); shaded bands are load steps (c = concurrent workers)")
    ax.set_ylabel("latency (ms)" + (", log scale" if log else ""))
    ax.set_title(f"Latency over time: {run.title()}", loc="left", fontweight="bold")
    _legend(ax, loc="upper left", bbox_to_anchor=(0, -0.13), ncol=3)
    return _save(fig, out_dir, f"latency-over-time-{run.slug}", formats)


def overlay(runs: list[Run], opts: Options, out_dir: str, formats: list[str], scenario: str,
            title: str | None = None) -> list[str]:
    slo_ms = opts.slo_s * 1000
    pct = opts.slo_percentile
    ordered = sorted(runs, key=lambda r: (r.instances is None, r.instances or 0, r.label))
    fig, ax = plt.subplots(figsize=(12, 7))
    allv = [slo_ms]
    for i, r in enumerate(ordered):
        c = RUN_COLORS[i % len(RUN_COLORS)]
        xs = np.array([s.throughput for s in r.steps])
        ys = np.array([s.slo_s for s in r.steps]) * 1000
        p50 = np.array([s.p50_s for s in r.steps]) * 1000
        allv += list(ys) + list(p50)
        cap = (f"max \u2265 {r.max_tput:,.0f} req/s within SLO (lower bound)" if r.capacity_is_lower_bound else
               f"max {r.max_tput:,.0f} req/s within SLO" if r.max_tput is not None else
               "capacity unknown: INCOMPLETE RUN (testers missing)" if r.incomplete_reason else
               "capacity unknown (tester-bound, unsteady, unjudged or incomplete steps)" if r.no_capacity_why else
               "no usable step" if r.max_tput_how == "no usable step" else "SLO never met")
        from .runs import warmup_headline
        cold = warmup_headline(r.meta).split(":")[0].upper()
        ax.plot(xs, ys, "-o", color=c, lw=2, ms=5, label=f"{r.legend()}: p{pct:g}; {cap}" + (f"; {cold}" if cold else ""))
        ax.plot(xs, p50, ":", color=c, lw=1.2, alpha=0.8)
        bad = np.array([s.error_rate > opts.max_error_rate for s in r.steps])
        if bad.any():
            ax.plot(xs[bad], ys[bad], "x", color="#d62728", ms=10, mew=2)
        if r.max_tput is not None:
            ax.plot([r.max_tput], [slo_ms], marker="*", ms=18, color=c, mec="black", zorder=6)
            ax.annotate(("\u2265 " if r.capacity_is_lower_bound else "") + f"{r.max_tput:,.0f} req/s",
                        (r.max_tput, slo_ms), xytext=(8, -22),
                        textcoords="offset points", ha="left", fontsize=9, color=c, fontweight="bold", zorder=8,
                        bbox=dict(boxstyle="round,pad=0.2", fc="white", ec=c, alpha=0.9))
    ax.plot([], [], ":", color="grey", label="dotted: p50 of the same run")
    if any(s.error_rate > opts.max_error_rate for r in ordered for s in r.steps):
        ax.plot([], [], "x", color="#d62728", mew=2, label=f"step over {opts.max_error_rate:.0%} errors")
    ax.axhline(slo_ms, color="#d62728", ls="--", lw=1.3, label=f"SLO: p{pct:g} \u2264 {slo_ms:g} ms")
    v = np.array(allv)
    log = use_log(v)
    _set_latency_axis(ax, log, max(float(v[v > 0].min()), 0.01), float(v.max()))
    ax.set_xlim(0, None)
    ax.set_xlabel("throughput (req/s) of each load step")
    ax.set_ylabel(f"p{pct:g} latency (ms)" + (", log scale" if log else ""))
    ax.set_title(title or f"CredHub {scenario}: latency vs throughput by instance count "
                 "(\u2605 = most throughput within the SLO)", loc="left", fontweight="bold")
    _legend(ax, loc="upper left")
    return _save(fig, out_dir, f"overlay-{scenario}", formats)
