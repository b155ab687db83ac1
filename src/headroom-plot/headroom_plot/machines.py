"""The machines the target's resources ran on, per step, as credhub-perf measured them.

A resource's own CPU share says little when it shares its CPUs: CredHub at 70 % and its database at
25 % of one core leave that core all but full, and a neighbour busy on CredHub's CPUs halves what it can
serve while CredHub itself looks idle. credhub-perf therefore samples, per step, each machine (the CPUs
the sampled processes may use, a BOSH VM, or credhub-sim's modelled host) and writes into summary.json
`steps[].target.machines`: [{machine, cpus, busy, steal, iowait, other, resources}], shares 0-1 of the
machine's CPUs (`other`: busy with work other than the sampled resources'). This module reads them back
as one series per machine, so the utilisation figure can draw, beside each resource, the machine it runs
on: how busy it was and how much of that was other work. It does not judge: the verdict is credhub-perf's.

Pure functions on numpy arrays and dicts; utilplot.py draws.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

# More machines than this make an unreadable figure; a hostile summary.json could name thousands.
MAX_MACHINES = 8
# A machine's or resource's name is shown at most this long (a 10,000-character name is clipped).
MAX_NAME = 60
FIGURES = ("busy", "other", "steal")


@dataclass
class Machine:
    """One machine over a run's steps (NaN where a step has no figure for it)."""
    name: str
    cpus: str
    resources: list[str]
    throughput: np.ndarray
    busy: np.ndarray
    other: np.ndarray
    steal: np.ndarray


@dataclass
class Read:
    machines: list[Machine] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def clip(s: str, n: int = MAX_NAME) -> str:
    return s if len(s) <= n else s[:n - 1] + "\u2026"


def _share(v) -> float:
    """A share 0-1 (up to 1.5 tolerated as rounding, drawn as 1); anything else is unknown (NaN)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 or v > 1.5:
        return math.nan
    return min(float(v), 1.0)


def _throughput(st) -> float | None:
    x = st.get("throughput")
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x < 0:
        return None
    return float(x)


def from_summary(summary: dict | None, name: str = "summary.json") -> Read:
    """Every machine of the run's steps; malformed entries are left out with one warning naming the file,
    unknown figures stay NaN (never 0). At most MAX_MACHINES machines, the rest counted in the warning."""
    out = Read()
    steps = summary.get("steps") if isinstance(summary, dict) else None
    if not isinstance(steps, list):
        return out
    n = len(steps)
    series: dict[str, dict] = {}
    bad = dropped = 0
    for i, st in enumerate(steps):
        t = st.get("target") if isinstance(st, dict) else None
        ms = t.get("machines") if isinstance(t, dict) else None
        if ms is None:
            continue
        x = _throughput(st)
        if not isinstance(ms, list) or x is None:
            bad += 1
            continue
        for m in ms:
            if not isinstance(m, dict) or not isinstance(m.get("machine"), str) or not m["machine"]:
                bad += 1
                continue
            key = m["machine"]
            if key not in series and len(series) >= MAX_MACHINES:
                dropped += 1
                continue
            s = series.setdefault(key, {"x": np.full(n, np.nan), "res": [],
                                        "cpus": m["cpus"] if isinstance(m.get("cpus"), str) else "",
                                        **{f: np.full(n, np.nan) for f in FIGURES}})
            s["x"][i] = x
            for f in FIGURES:
                v = m.get(f)
                s[f][i] = math.nan if v is None else _share(v)
                bad += v is not None and math.isnan(s[f][i])
            rs = m.get("resources")
            if not isinstance(rs, list) or not all(isinstance(r, str) for r in rs):
                bad += 1
                continue
            for r in rs:
                if r and r not in s["res"] and len(s["res"]) < MAX_MACHINES:
                    s["res"].append(r)
    if bad:
        out.warnings.append(f"{name}: {bad} machine figure(s) are not usable and were left out")
    if dropped:
        out.warnings.append(f"{name}: more than {MAX_MACHINES} machines; {dropped} figure(s) of the others "
                            "are not drawn")
    for key, s in series.items():
        keep = ~np.isnan(s["x"])
        out.machines.append(Machine(key, s["cpus"], s["res"], s["x"][keep],
                                    *(s[f][keep] for f in FIGURES)))
    return out


def label(m: Machine, labels: dict[str, str]) -> str:
    """How the figure names a machine: its name and who runs on it, e.g. "cpus 1, shared by CredHub
    instances and database" or "vm credhub/0 (CredHub instances)"; labels maps resource names to
    their labels."""
    who = [clip(labels.get(r, r), 30) for r in m.resources]
    name = clip(m.name)
    if len(who) >= 2:
        return f"{name}, shared by {', '.join(who[:-1])} and {who[-1]}"
    if who:
        return f"{name} ({who[0]})"
    return name
