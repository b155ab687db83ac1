"""Small fixtures written by the tests themselves: CSVs in every accepted format."""
from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess

import pytest

# One BLAS thread: the suite runs beside others on two cores, where OpenBLAS's second thread spins
# waiting for work and burns CPU for no speed-up on these small products (set before numpy loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

OURS13 = ("start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,"
          "status-code,offset,concurrency,rate,sched-lag,error")
OURS = OURS13 + ",request"
BASE = dt.datetime(2026, 11, 18, 10, 0, 0, tzinfo=dt.timezone.utc)


def rfc3339(t: float, base: dt.datetime = BASE) -> str:
    """Go's RFC3339Nano: trailing zeros of the fraction trimmed."""
    ts = base + dt.timedelta(seconds=t)
    frac = f"{ts.microsecond:06d}000".rstrip("0")
    return ts.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if frac else "") + "Z"


def our_row(offset, latency, status=200, concurrency=1, rate=0, lag=0.0, error="", base=BASE, request="get") -> str:
    """A row of the current format; request=None leaves the request column out (the 13-column format)."""
    err = error
    if any(c in err for c in ',"\n'):
        err = '"' + err.replace('"', '""') + '"'
    return (f"{rfc3339(offset, base)},{latency:.6f},0.000000,0.000000,0.000010,{latency * 0.9:.6f},"
            f"0.000020,{status},{offset:.6f},{concurrency},{rate:g},{lag:.6f},{err}"
            + ("" if request is None else f",{request}"))


def write_ours(path, rows, header=OURS):
    with open(path, "w") as f:
        f.write(header + "\n")
        for r in rows:
            f.write((r if isinstance(r, str) else our_row(*r)) + "\n")
    return str(path)


def closed_step(t0, concurrency, latency, count, jitter=0.0):
    """Rows of a closed-loop step: `concurrency` workers back to back, each request `latency` long."""
    rows = []
    per = count // concurrency
    for w in range(concurrency):
        for i in range(per):
            lat = latency * (1 + jitter * ((i * 7 + w * 3) % 5 - 2) / 2)
            rows.append((t0 + i * latency + w * 1e-4, lat, 200, concurrency))
    rows.sort(key=lambda r: r[0] + r[1])  # completion order
    return rows


# meta.json's warmup of a run whose auto warm-up was judged steady: its steps count as capacity even when
# they are too short to judge steady themselves (the synthetic ramps' steps mostly are).
STEADY_WARMUP = {"mode": "auto", "concurrency": 4, "duration_s": 15, "requests": 1000, "errors": 0, "steady": True,
                 "reason": "steady after 15s"}


def usage_steps(concurrencies, flags):
    """meta.json's steps with the tester's usage in each, as credhub-perf records it: what makes credhub-perf
    judge a step tester-bound. flags: summary.json-like step objects (tester_bound, its reason, CPU figures);
    values of the wrong type are left out."""
    def num(v):
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1 else None
    out = []
    for c, f in zip(concurrencies, flags):
        reason = f.get("tester_bound_reason")
        out.append({"concurrency": c, "rate": 0, "requests": 0, "duration_s": 0,
                    "tester_cpu": num(f.get("tester_cpu")), "host_cpu": num(f.get("host_cpu")), "host_steal": None,
                    "gc_pause_s": 0, "tester_bound": f.get("tester_bound") is True,
                    "tester_bound_reason": reason if isinstance(reason, str) else ""})
    return out


def write_meta(dirpath, **kw):
    meta = {"tool_version": "test", "scenario": "get", "target_url": "https://127.0.0.1:1", "label": "t",
            "instances": None, "tester": 0, "testers": 1, "mode": "closed", "steps": [], "keepalive": True,
            "tls": "mtls", "seed": {"credentials": 10, "bytes": 32}, "cleanup": "api",
            "slo": {"percentile": 95, "latency_s": 0.1}, "started_at": "2026-11-18T10:00:00Z",
            "ended_at": "2026-11-18T10:05:00Z", "host": "test"}
    meta.update(kw)
    with open(os.path.join(dirpath, "meta.json"), "w") as f:
        json.dump(meta, f)


@pytest.fixture
def tmp(tmp_path):
    return tmp_path


# src/credhub-perf, whichever path the tests run from (top-level plotting/ is a symlink to src/headroom-plot)
CREDHUB_PERF_SRC = os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "credhub-perf")


def go_testdata(name: str) -> str:
    """A fixture directory of credhub-perf's results package that the Go tests read too, so both sides are held
    to the same answers."""
    d = os.path.join(CREDHUB_PERF_SRC, "results", "testdata", name)
    if not os.path.isdir(d):
        raise FileNotFoundError(f"{os.path.normpath(d)} not found: the Go fixtures sit beside this plotter in "
                                f"src/credhub-perf")
    return d


@pytest.fixture(scope="session", autouse=True)
def credhub_perf(tmp_path_factory):
    """The credhub-perf binary headroom-plot takes the testers' merge, the tester-bound advice and the
    no-capacity reason from: $CREDHUB_PERF or credhub-perf on PATH, else built from this checkout."""
    if os.environ.get("CREDHUB_PERF") or shutil.which("credhub-perf"):
        yield os.environ.get("CREDHUB_PERF") or shutil.which("credhub-perf")
        return
    out = str(tmp_path_factory.mktemp("bin") / "credhub-perf")
    subprocess.run(["go", "build", "-o", out, "./cmd/credhub-perf"], cwd=CREDHUB_PERF_SRC, check=True)
    os.environ["CREDHUB_PERF"] = out
    yield out
    del os.environ["CREDHUB_PERF"]


CREDHUB_SIM_SRC = os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "credhub-sim")


@pytest.fixture(scope="session")
def virtual_ramp(tmp_path_factory):
    """credhub-sim's virtual-ramp: $VIRTUAL_RAMP or virtual-ramp on PATH (make build puts it in bin/, beside
    credhub-perf), else built from this checkout once for the session."""
    if os.environ.get("VIRTUAL_RAMP") or shutil.which("virtual-ramp"):
        return os.environ.get("VIRTUAL_RAMP") or shutil.which("virtual-ramp")
    out = str(tmp_path_factory.mktemp("bin") / "virtual-ramp")
    subprocess.run(["go", "build", "-o", out, "./cmd/virtual-ramp"], cwd=CREDHUB_SIM_SRC, check=True)
    return out
