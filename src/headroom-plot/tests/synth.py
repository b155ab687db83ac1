"""Synthetic data with a known answer, for the interval and scalability tests.

steps(): one run's steps as row arrays, each step's load and latency
modulated by AR(1) processes over 0.25 s slices (stalls and bursts last a
second or so, so consecutive requests are correlated, as on a real target),
with a true throughput and a true SLO percentile known in closed form.

run_dir(): a credhub-perf run directory (CSV in our format, meta.json) whose
capacity at the SLO is a given value.
"""
from __future__ import annotations

import json
import os

import numpy as np

Z95 = 1.6448536269514722
SUB = 0.25      # AR(1) slice
PHI = 0.8       # slice-to-slice correlation
S_ROW = 0.30    # per-request log-latency spread
TAU = 0.15      # stationary spread of the slice's log-latency factor
G = 0.10        # stationary spread of the slice's log-rate factor


def _ar1(rng, n, sd):
    e = rng.standard_normal(n) * sd * np.sqrt(1 - PHI ** 2)
    out = np.empty(n)
    prev = rng.standard_normal() * sd
    for i in range(n):
        prev = PHI * prev + e[i]
        out[i] = prev
    return out


def true_pct(median, q=95):
    z = {95: Z95}[q]
    return median * np.exp(z * np.sqrt(S_ROW ** 2 + TAU ** 2))


def step_rows(rng, t0, rate, median, duration):
    n = int(round(duration / SUB))
    g = _ar1(rng, n, G)
    f = _ar1(rng, n, TAU)
    counts = rng.poisson(rate * SUB * np.exp(g - G ** 2 / 2))
    sl = np.repeat(np.arange(n), counts)
    off = t0 + (sl + rng.random(len(sl))) * SUB
    lat = median * np.exp(f[sl] + S_ROW * rng.standard_normal(len(sl)))
    return off, lat


def steps(rng, rates, medians, duration=20.0):
    """Rows (latency, offset, error, step) of consecutive steps, and per-step truth (rates, true p95)."""
    lat, off, stp = [], [], []
    t = 0.0
    for i, (x, m) in enumerate(zip(rates, medians)):
        o, l_ = step_rows(rng, t, x, m, duration)
        off.append(o)
        lat.append(l_)
        stp.append(np.full(len(o), i, dtype=np.int32))
        t += duration + 0.5
    latency, offset = np.concatenate(lat), np.concatenate(off)
    return latency, offset, np.zeros(len(latency), dtype=bool), np.concatenate(stp)


def crossing(xs, ps, bound):
    """The capacity the estimator converges to: linear interpolation of the true points at the bound."""
    for i in range(len(xs) - 1):
        if ps[i] <= bound < ps[i + 1]:
            return xs[i] + (bound - ps[i]) * (xs[i + 1] - xs[i]) / (ps[i + 1] - ps[i])
    raise ValueError("bound not crossed")


def ramp_for(capacity, slo_s, fractions=(0.3, 0.5, 0.7, 0.85, 0.95, 1.05, 1.15, 1.3)):
    """Step rates and medians whose true p95 crosses slo_s exactly at `capacity` (linear between 0.95 and 1.05)."""
    rates = capacity * np.array(fractions)
    # p95 rises smoothly, equal to the SLO at the capacity: p95(x) = slo * (0.3 + 0.7 (x/C)^4) away from
    # the crossing; the two steps around it are placed on the straight line through (C, slo).
    u = np.array(fractions)
    p = slo_s * (0.3 + 0.7 * u ** 4)
    i = int(np.searchsorted(u, 1.0))
    p[i - 1] = slo_s * (1 - 2.8 * (1 - u[i - 1]))
    p[i] = slo_s * (1 + 2.8 * (u[i] - 1))
    medians = p / np.exp(Z95 * np.sqrt(S_ROW ** 2 + TAU ** 2))
    return rates, medians, p


HEADER = ("start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,"
          "status-code,offset,concurrency,rate,sched-lag,error,request\n")


def run_dir(path, rng, capacity, instances, slo_s=0.025, duration=10.0, label=None):
    """A run directory (open-loop steps at the ramp's rates) whose true capacity at p95 <= slo_s is `capacity`."""
    rates, medians, _ = ramp_for(capacity, slo_s)
    lat, off, _, stp = steps(rng, rates, medians, duration)
    os.makedirs(path, exist_ok=True)
    order = np.argsort(off + lat, kind="stable")   # completion order, as the tester writes
    lat, off, stp = lat[order], off[order], stp[order]
    rate_col = np.rint(rates[stp]).astype(int)
    import datetime as dt
    base = dt.datetime(2026, 11, 18, 10, 0, 0, tzinfo=dt.timezone.utc)
    with open(os.path.join(path, "results.csv"), "w") as f:
        f.write(HEADER)
        stamp = base.strftime("%Y-%m-%dT%H:%M:%S")
        for o, l_, r in zip(off, lat, rate_col):
            # start-time only needs to parse; the offset column carries the time
            f.write(f"{stamp}Z,{l_:.6f},0,0,0,{l_:.6f},0,200,{o:.6f},64,{r},0.000000,,get\n")
    lab = label or f"{instances}-instances"
    meta = {"tool_version": "synthetic", "scenario": "get", "label": lab, "instances": instances,
            "mode": "open", "slo": {"percentile": 95, "latency_s": slo_s}, "started_at": "2026-11-18T10:00:00Z"}
    with open(os.path.join(path, "meta.json"), "w") as f:
        json.dump(meta, f)
    return path
