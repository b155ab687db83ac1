#!/usr/bin/env python3
"""Synthetic credhub-perf CSV from a closed queueing model, for benchmarks and demos.

The model is exact mean-value analysis (MVA) of one queueing station (service
demand D, the "CredHub instances" bottleneck) plus a fixed delay (network and
TLS, A).  For each concurrency step N it gives the throughput X(N) and mean
latency R(N); per-request latencies are A + exponential(R(N) - A), so the
knee and the plateau (1/D req/s) are known in advance.

Rows are formatted with numpy byte arithmetic, not per-row Python, so 10
million rows take seconds rather than minutes.

    python gen_csv.py --rows 1000000 --out results.csv [--steps 10] [--meta-dir DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

HEADER = (b"start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,"
          b"Response-read,status-code,offset,concurrency,rate,sched-lag,error,request\n")


def mva(concurrency: int, demand: float, delay: float) -> tuple[float, float]:
    """Exact MVA for a closed network of one queue (demand) and one delay centre."""
    q = 0.0
    x = r = 0.0
    for n in range(1, concurrency + 1):
        rq = demand * (1.0 + q)
        r = delay + rq
        x = n / r
        q = x * rq
    return x, r


def _fixed(values: np.ndarray, decimals: int) -> np.ndarray:
    """Non-negative floats -> (n, w) uint8 of '%.{decimals}f' text, 0 bytes as padding."""
    scale = 10 ** decimals
    v = np.rint(np.asarray(values, dtype=np.float64) * scale).astype(np.int64)
    ip, fp = np.divmod(v, scale)
    nint = max(1, len(str(int(ip.max()))) if len(ip) else 1)
    width = nint + (1 + decimals if decimals else 0)
    out = np.zeros((len(v), width), dtype=np.uint8)
    for j in range(nint):
        p = 10 ** (nint - 1 - j)
        d = (ip // p) % 10
        keep = (ip >= p) | (j == nint - 1)
        out[:, j] = np.where(keep, 48 + d, 0)
    if decimals:
        out[:, nint] = 46
        for j in range(decimals):
            out[:, nint + 1 + j] = 48 + (fp // 10 ** (decimals - 1 - j)) % 10
    return out


def _bytes_col(strings: list[bytes] | np.ndarray, n: int) -> np.ndarray:
    arr = np.asarray(strings, dtype="S")
    w = max(arr.dtype.itemsize, 1)
    return np.frombuffer(arr.astype(f"S{w}").tobytes(), dtype=np.uint8).reshape(n, w)


def _const(text: bytes, n: int) -> np.ndarray:
    return np.broadcast_to(np.frombuffer(text, dtype=np.uint8), (n, len(text)))


ERRORS = [
    b'"Get ""https://127.0.0.1:8844/api/v1/data?name=/perf/cred-1"": dial tcp 127.0.0.1:8844: connect: connection refused"',
    b'"context deadline exceeded (Client.Timeout exceeded while awaiting headers), after 30s"',
]


def format_rows(start_ns, latency, offset, status, conc, rate, errmask, rng) -> bytes:
    n = len(latency)
    st = np.datetime_as_string((start_ns).astype("datetime64[ns]"), unit="ns", timezone="UTC")
    cols = [_bytes_col(st.astype("S"), n)]
    # Phases that add up to no more than the response time, as the engine's do.
    dial = np.where(rng.random(n) < 0.01, latency * 0.3, 0.0)
    write = np.full(n, 12e-6)
    read = latency * 0.02
    delay = np.maximum(latency - dial - write - read, 0.0)
    for v in (latency, dial, np.where(dial > 0, 0.00002, 0.0), write, delay, read):
        cols += [_const(b",", n), _fixed(v, 6)]
    cols += [_const(b",", n), _fixed(status, 0), _const(b",", n), _fixed(offset, 6),
             _const(b",", n), _fixed(conc, 0), _const(b",", n), _fixed(rate, 0),
             _const(b",", n), _fixed(np.zeros(n), 6), _const(b",", n)]
    if errmask.any():
        msgs = np.zeros(n, dtype="S128")
        idx = np.flatnonzero(errmask & (status == 0))
        msgs[idx] = np.array(ERRORS, dtype="S128")[idx % len(ERRORS)]
        cols.append(_bytes_col(msgs, n))
    cols.append(_const(b",get\n", n))  # the request column: a get ramp
    m = np.concatenate(cols, axis=1)
    return m[m != 0].tobytes()


def generate(path: str, rows: int, steps: int, demand: float, delay: float, max_concurrency: int,
             error_rate: float, seed: int, chunk: int = 200_000) -> list[dict]:
    rng = np.random.default_rng(seed)
    concs = np.unique(np.geomspace(1, max_concurrency, steps).round().astype(int))
    per = np.full(len(concs), rows // len(concs))
    per[: rows - per.sum()] += 1
    base_ns = np.int64(1_795_000_000) * 1_000_000_000  # 2026-11-18, a fixed date
    t = 0.0
    plan = []
    with open(path, "wb") as f:
        f.write(HEADER)
        for c, n in zip(concs, per):
            x, r = mva(int(c), demand, delay)
            # Closed loop: each of the c workers sends requests back to back until the step's
            # time is up, i.e. the n requests that start first.
            per_worker = int(np.ceil(1.5 * n / c)) + 5
            lat_m = delay + rng.exponential(max(r - delay, 1e-9), (int(c), per_worker))
            start_m = np.cumsum(lat_m, axis=1) - lat_m + t + np.arange(int(c))[:, None] * 1e-5
            first = np.argpartition(start_m.ravel(), n - 1)[:n]
            starts, lat = start_m.ravel()[first], lat_m.ravel()[first]
            del lat_m, start_m
            dur = float((starts + lat).max() - t)
            plan.append({"concurrency": int(c), "rate": 0, "requests": int(n), "duration_s": round(dur, 3),
                         "model_throughput": x, "model_mean_s": r})
            order = np.argsort(starts + lat, kind="stable")  # completion order, as the engine writes
            starts, lat = starts[order], lat[order]
            err = rng.random(n) < error_rate
            status = np.where(err, np.where(rng.random(n) < 0.5, 503, 0), 200)
            lat = np.where(status == 0, np.minimum(lat, 0.002), lat)
            for i in range(0, n, chunk):
                s = slice(i, min(n, i + chunk))
                k = s.stop - s.start
                f.write(format_rows(base_ns + (starts[s] * 1e9).astype(np.int64), lat[s], starts[s],
                                    status[s], np.full(k, c), np.zeros(k), err[s], rng))
            t = float((starts + lat).max()) + 0.05
    return plan


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=1_000_000, help="number of request rows (default 1000000)")
    p.add_argument("--steps", type=int, default=10, help="number of concurrency steps (default 10)")
    p.add_argument("--max-concurrency", type=int, default=64, help="concurrency of the last step (default 64)")
    p.add_argument("--demand-ms", type=float, default=2.5,
                   help="service demand at the bottleneck in ms; plateau = 1000/demand req/s (default 2.5)")
    p.add_argument("--delay-ms", type=float, default=8.0, help="fixed latency (network, TLS) in ms (default 8)")
    p.add_argument("--error-rate", type=float, default=0.002, help="fraction of failed requests (default 0.002)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True, help="CSV file to write")
    p.add_argument("--meta-dir", help="also write meta.json (scenario get) into this directory")
    p.add_argument("--instances", type=int, default=None, help="instances recorded in meta.json")
    p.add_argument("--label", default="synthetic", help="label recorded in meta.json")
    a = p.parse_args(argv)
    plan = generate(a.out, a.rows, a.steps, a.demand_ms / 1000, a.delay_ms / 1000, a.max_concurrency,
                    a.error_rate, a.seed)
    if a.meta_dir:
        meta = {"tool_version": "gen_csv", "scenario": "get", "target_url": "model://mva", "label": a.label,
                "instances": a.instances, "tester": "gen", "testers": 1, "mode": "closed",
                "steps": [{k: s[k] for k in ("concurrency", "rate", "requests", "duration_s")} for s in plan],
                "keepalive": True, "tls": "mtls", "seed": {"credentials": 0, "bytes": 0}, "cleanup": "none",
                "slo": {"percentile": 95, "latency_s": 0.1}, "started_at": "2026-11-18T10:13:20Z",
                "ended_at": "2026-11-18T10:30:00Z", "host": "synthetic"}
        with open(os.path.join(a.meta_dir, "meta.json"), "w") as f:
            json.dump(meta, f, indent=2)
    print(f"wrote {a.rows} rows to {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
