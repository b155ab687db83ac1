"""The target's utilisation per step, as credhub-perf measured it, and what it means for sizing.

credhub-perf samples the target while it loads it (package targetload) and writes each step's figures
and the run's bottleneck verdict into summary.json (`steps[].target`, `bottleneck`); this module reads
them, it does not judge a run again. What it adds is the one thing only a study of several instance
counts can say: the shared database's ceiling. The utilisation law U = X x D (D: the database's
service demand per request) gives the throughput at which the database would be 100 % busy,
X / U, from any step in which it was measurably busy; a recommendation whose target lies above
that ceiling cannot be met by adding CredHub instances, whatever the scalability fit extrapolates.

Pure functions on numpy arrays and dicts; utilplot.py draws, report.py writes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import machines as machines_

# The busy share from which credhub-perf names a resource (targetload.Busy); drawn as a guide.
BUSY = 0.70
# Steps in which the database was less busy than this say little about its ceiling (a few percent of
# noise on a small share is a large error on X / U).
MIN_SHARE = 0.30
SHARED = "database"
LABELS = {"credhub": "CredHub instances", "database": "database"}


@dataclass
class Resource:
    """One sampled resource over a run's steps (NaN where a step has no CPU figure)."""
    name: str
    label: str
    throughput: np.ndarray
    cpu: np.ndarray
    source: str = ""


@dataclass
class RunUtil:
    resources: list[Resource] = field(default_factory=list)
    verdict: str = ""          # summary.json bottleneck.verdict ("" when not sampled)
    bottleneck: str = ""       # its resource
    warnings: list[str] = field(default_factory=list)
    machines: list[machines_.Machine] = field(default_factory=list)  # machines.py: the CPUs they share


def _share(v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or v > 1.5:
        return math.nan
    return min(float(v), 1.0)


def from_summary(summary: dict | None, name: str = "summary.json") -> RunUtil:
    """The per-step figures and the verdict of a run's summary.json; malformed entries are left out with
    one warning, unknown figures stay NaN (never 0)."""
    out = RunUtil()
    if not isinstance(summary, dict):
        return out
    m = machines_.from_summary(summary, name)
    out.machines, out.warnings = m.machines, m.warnings
    b = summary.get("bottleneck")
    if isinstance(b, dict) and isinstance(b.get("verdict"), str):
        out.verdict = b["verdict"]
        out.bottleneck = b.get("resource") if isinstance(b.get("resource"), str) else ""
    steps = summary.get("steps")
    if not isinstance(steps, list):
        return out
    series: dict[str, dict] = {}
    bad = 0
    n = len(steps)
    for i, st in enumerate(steps):
        t = st.get("target") if isinstance(st, dict) else None
        if t is None:
            continue
        x = st.get("throughput")
        rs = t.get("resources") if isinstance(t, dict) else None
        if not isinstance(rs, list) or isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x < 0:
            bad += 1
            continue
        for r in rs:
            if not isinstance(r, dict) or not isinstance(r.get("resource"), str) or not r["resource"]:
                bad += 1
                continue
            s = series.setdefault(r["resource"], {"x": np.full(n, np.nan), "cpu": np.full(n, np.nan),
                                                  "label": r.get("label") if isinstance(r.get("label"), str)
                                                  else LABELS.get(r["resource"], r["resource"]),
                                                  "source": r.get("source") if isinstance(r.get("source"), str) else ""})
            s["x"][i] = float(x)
            cpu = r.get("cpu")
            s["cpu"][i] = math.nan if cpu is None else _share(cpu)
            if cpu is not None and math.isnan(s["cpu"][i]):
                bad += 1
    if bad:
        out.warnings.append(f"{name}: {bad} target figure(s) are not usable and were left out")
    order = sorted(series, key=lambda k: (k != "credhub", k != "database", k))
    for k in order:
        s = series[k]
        keep = ~np.isnan(s["x"])
        out.resources.append(Resource(k, s["label"], s["x"][keep], s["cpu"][keep], s["source"]))
    return out


@dataclass
class Ceiling:
    """The throughput at which the shared database would be fully busy (utilisation law)."""
    resource: str
    rps: float
    # the step it is best measured at: the busiest database share seen, its throughput and instance count
    cpu: float
    at_rps: float
    instances: int | None


def ceiling(per_count: list[tuple[int | None, RunUtil]], resource: str = SHARED) -> Ceiling | None:
    """X / U over every step in which the resource was at least MIN_SHARE busy, across the study's runs:
    the median (robust to one noisy step), reported with the busiest step. None when never that busy."""
    est, best = [], None
    for n, ru in per_count:
        for r in ru.resources:
            if r.name != resource:
                continue
            ok = np.isfinite(r.cpu) & (r.cpu >= MIN_SHARE) & (r.throughput > 0)
            est.extend((r.throughput[ok] / r.cpu[ok]).tolist())
            for x, u in zip(r.throughput[ok], r.cpu[ok]):
                if best is None or u > best[0] or (u == best[0] and x > best[1]):
                    best = (float(u), float(x), n)
    if not est:
        return None
    return Ceiling(resource, float(np.median(est)), best[0], best[1], best[2])


def refusal(scenario: str, target: float, c: Ceiling) -> str | None:
    """The recommendation's text when the target lies above the shared resource's ceiling, else None."""
    if target <= c.rps:
        return None
    at = f" with {c.instances} instance(s)" if c.instances else ""
    return (f"{scenario}: {target:g} req/s cannot be reached by adding CredHub instances: the shared {c.resource} "
            f"saturates at about {c.rps:,.0f} req/s (it was {100 * c.cpu:.0f} % busy at {c.at_rps:,.0f} req/s"
            f"{at}; utilisation law, throughput / busy share), and more instances only queue at it. Scale the "
            f"{c.resource} first, then measure again")


def near(target: float, c: Ceiling) -> str | None:
    """A note for a target within 10 % of the ceiling."""
    if target <= c.rps < target * 1.1:
        return (f" - close to the shared {c.resource}'s ceiling of about {c.rps:,.0f} req/s: little headroom "
                "beyond this target")
    return None
