"""The open-loop confirmation over time: every request's latency at its scheduled start, step by step.

A target that pauses (a JVM's collection) shows as a sawtooth: requests due during the pause wait for its
end, the first longest, so their latencies fall on a line of slope -1 ending where the target resumed, on
every connection at once. New connections show as isolated slow requests; steady queueing as a raised,
even band. Each panel names credhub-perf's verdict for its step (summary.json steps' `tail`: stalls in
completions across all connections, requests that opened a connection, else queueing); this module only
draws (the numbers are openloop.py's and credhub-perf's).
"""
from __future__ import annotations

import textwrap

import numpy as np

from .plots import HALO, PCT_COLORS, _legend, _sample, _save, _set_latency_axis, plt, use_log
from .runs import Options, Run

OPEN_COLOR = "#00838f"
# Requests drawn per panel at most: a 30 s step at 1,000 req/s is 30,000; every one counts in the
# percentiles, a sample is enough to see the shape.
MAX_DRAWN = 6000
CAUSE_COLOR = {"target pauses": "#b30000", "new connections": "#b35900", "queueing": "#555555"}


def draw(run: Run, opts: Options, out_dir: str, formats: list[str]) -> list[str]:
    """confirmation-<slug>: one panel per confirmation step; [] when the run had no confirmation."""
    c = run.confirmation
    if c is None or not c.steps or not len(c.latency):
        return []
    n = len(c.steps)
    fig, axes = plt.subplots(n, 1, figsize=(12, 2.3 * n + 1.6), sharey=True, squeeze=False)
    lat_ms = c.latency * 1000.0
    slo_ms = opts.slo_s * 1000
    log = use_log(np.concatenate([lat_ms, [slo_ms]]))
    lo = max(float(np.percentile(lat_ms, 0.1)), 0.01)
    hi = max(float(lat_ms.max()), slo_ms)
    closed = c.verdict.get("closed_loop") if isinstance(c.verdict.get("closed_loop"), (int, float)) else None
    for i, (ax, s) in enumerate(zip(axes[:, 0], c.steps)):
        rows = np.flatnonzero(c.step == s.index)
        pick = rows[_sample(len(rows), MAX_DRAWN, s.index)]
        t = c.offset[pick] - s.t0
        bad = c.error[pick]
        ax.scatter(t[~bad], lat_ms[pick][~bad], s=3, color="#3b6ea8", alpha=0.5, lw=0, rasterized=True,
                   label=f"one request at its scheduled start ({len(pick):,} of {len(rows):,} drawn)")
        if bad.any():
            ax.scatter(t[bad], lat_ms[pick][bad], s=12, marker="x", color="#d62728", lw=0.8, label="failed request")
        ax.axhline(slo_ms, color="#d62728", ls="--", lw=1.2, label=f"SLO: p{opts.slo_percentile:g} \u2264 {slo_ms:g} ms")
        ax.axhline(s.slo_s * 1000, color=PCT_COLORS.get(int(opts.slo_percentile), OPEN_COLOR), lw=1.8,
                   path_effects=HALO, label=f"the step's p{opts.slo_percentile:g}")
        ax.set_xlim(0, max(s.t1 - s.t0, 1e-3))
        _set_latency_axis(ax, log, lo, hi)
        frac = f" ({s.rate / closed:.0%} of the closed loop's {closed:,.0f} req/s)" if closed and s.rate else ""
        held = s.slo_s <= opts.slo_s and s.counts(opts.max_error_rate)
        verdict = "met the SLO" if held else "MISSED the SLO" if s.slo_s > opts.slo_s else "met the SLO, not counted"
        cause = c.causes[i] if i < len(c.causes) else ""
        note = c.notes[i] if i < len(c.notes) else ""
        ax.set_title(f"rate {s.rate:,.4g} req/s{frac}: p{opts.slo_percentile:g} {s.slo_s * 1000:,.1f} ms, {verdict}",
                     loc="left", fontsize=10, fontweight="bold")
        if note:
            ax.annotate(textwrap.fill("slow requests: " + note, 110), (0.005, 0.97), xycoords="axes fraction",
                        va="top", ha="left", fontsize=8.5, color=CAUSE_COLOR.get(cause, "#333333"),
                        fontweight="bold", path_effects=HALO)
        ax.set_ylabel("latency (ms)" + (", log" if log else ""))
        if i == 0:
            _legend(ax, loc="upper right", fontsize=8)
    axes[-1, 0].set_xlabel("time since the step's start (s); each request at its scheduled start (open loop: "
                           "latency counts from the schedule)")
    head = c.headline or "open-loop confirmation"
    fig.suptitle(f"Open-loop confirmation over time: {run.title()}\n" + textwrap.fill(head, 120), x=0.01,
                 ha="left", fontsize=11, fontweight="bold")
    fig.text(0.01, 0.005, textwrap.fill(
        "How to read: a target pause shows as a sawtooth on every connection at once (requests due during it "
        "wait for its end, the first longest); new connections as isolated slow requests; queueing as a raised, "
        "even band. The cause under each title is credhub-perf's (summary.json steps' tail).", 160),
        fontsize=8.5, color="#333333", va="bottom")
    fig.tight_layout(rect=(0, 0.04, 1, 0.95))
    return _save(fig, out_dir, f"confirmation-{run.slug}", formats)
