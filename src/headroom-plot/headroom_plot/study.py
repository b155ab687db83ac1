"""A scaling study across runs: intervals per run and per instance count, the USL fit, the
recommendation, and report/capacity.json.

The numbers come from bootstrap.py (intervals) and scalability.py (the fit);
this module only groups runs the way the capacity table does and carries the
results to the report, the plot and the JSON file.
"""
from __future__ import annotations

import json
import math
import os
import zlib
from dataclasses import dataclass, field

import numpy as np

from . import analysis, bootstrap, openloop, output, scalability, utilisation
from .runs import Options, Run

SCHEMA = 1


@dataclass
class Scenario:
    scenario: str
    rows: list[analysis.CapacityRow]
    points: list[scalability.Point]
    fit: scalability.Fit | None
    advice: scalability.Advice | None = None
    # A mix: the latency bound (s) each request type was held to; None for a type whose runs disagree.
    # None when the scenario's runs are not mixes.
    request_bounds: dict | None = None
    # The target's side (utilisation.py): per run, its instance count, capacity and summary.json figures;
    # the shared database's ceiling when it was measurably busy.
    utils: list = field(default_factory=list)
    ceiling: utilisation.Ceiling | None = None
    # The figures to size with where open arrivals held the SLO only below the closed loop (series()), drawn
    # and fitted apart from the closed-loop capacities (points, fit).
    open_points: list[scalability.Point] = field(default_factory=list)
    open_fit: scalability.Fit | None = None


def request_bounds(runs: list[Run]) -> dict | None:
    seen: dict[str, set] = {}
    for r in runs:
        for f in r.by_request:
            seen.setdefault(f["request"], set()).add(f["slo_bound_s"])
    if not seen:
        return None
    return {k: (v.pop() if len(v) == 1 else None) for k, v in sorted(seen.items())}


@dataclass
class Study:
    scenarios: dict[str, Scenario] = field(default_factory=dict)
    replicates: int = bootstrap.REPLICATES
    target: float | None = None
    # --workload: the production peak, the growth and the headroom per capacity row (cli.py's); None without.
    workload: dict | None = None


def _key(r: Run):
    return (r.scenario, r.instances if r.instances is not None else "label:" + r.label)


def run_identity(run: Run) -> str:
    """What seeds a run's bootstrap: the run's own identity, never where it lies on disk, so the same run
    directories analysed on the tester VM and on a workstation give byte-identical intervals. meta.json's
    run_id with the scenario and the tester (several testers share a run_id); without a run_id, the run
    directory's name (for a bare CSV: its directory's name and its own)."""
    meta = run.meta if isinstance(run.meta, dict) else {}
    rid = meta.get("run_id")
    if isinstance(rid, str) and rid:
        return "|".join(str(x) for x in (rid, meta.get("scenario"), meta.get("tester"), meta.get("testers")))
    path = os.path.normpath(run.path)
    if os.path.isdir(path):
        return os.path.basename(path)
    return os.path.basename(os.path.dirname(os.path.abspath(path))) + "/" + os.path.basename(path)


def run_seed(run: Run) -> int:
    return zlib.crc32(run_identity(run).encode("utf-8", "surrogateescape"))


def run_replicates(run: Run, opts: Options, reps: int) -> tuple[np.ndarray, np.ndarray]:
    """The run's capacity and knee replicates (seeded by the run's identity, so a report is reproducible
    wherever the run directories are)."""
    if reps <= 0 or not len(run.latency):
        return np.empty(0), np.empty(0)
    cap, knee = bootstrap.run_replicates(
        run.latency, run.offset, run.error, run.step, opts.slo_percentile, opts.slo_s, opts.max_error_rate,
        width=opts.window_s, knee_elasticity=opts.knee_elasticity, reps=reps,
        knee_reps=min(reps, bootstrap.KNEE_REPLICATES), seed=run_seed(run),
        usable=usable_steps(run))
    if run.by_request:
        # The replicates judge the step's own percentile, not each type's against its bound: for a mix
        # they would be an interval around another number than the capacity. None until they resample
        # per type (the warning in runs.evaluate says so).
        cap = np.empty(0)
    return cap, knee


def usable_steps(run: Run) -> np.ndarray:
    """Steps that may count as capacity apart from their error rate (analysis.Step.usable: not marked
    unsteady, tester-bound or incomplete, and too short to judge only after a steady warm-up), so the
    replicates follow the run's own rule."""
    return np.array([s.usable() for s in run.steps], dtype=bool)


def build(runs: list[Run], table: list[analysis.CapacityRow], opts: Options, target: float | None,
          reps: int = bootstrap.REPLICATES) -> Study:
    """Attach intervals to the capacity table's rows (in place), fit each scenario, recommend."""
    per_run = {id(r): run_replicates(r, opts, reps) for r in runs}
    groups: dict[tuple, list[Run]] = {}
    for r in runs:
        groups.setdefault(_key(r), []).append(r)
    study = Study(replicates=reps, target=target)
    for row in table:
        key = (row.scenario, row.instances if row.instances is not None else "label:" + row.group)
        rs = groups.get(key, [])
        caps = [per_run[id(r)][0] for r in rs if len(per_run[id(r)][0])]
        knees = [per_run[id(r)][1] for r in rs if len(per_run[id(r)][1])]
        seed = zlib.crc32(repr(key).encode("utf-8", "backslashreplace"))
        row.max_tput_reps = bootstrap.combine(caps, seed) if caps else np.empty(0)
        row.knee_reps = bootstrap.combine(knees, seed + 1) if knees else np.empty(0)
        if row.max_tput is not None:
            row.max_tput_ci = bootstrap.interval(row.max_tput_reps, point=row.max_tput)
        if row.knee is not None:
            row.knee_ci = bootstrap.interval(row.knee_reps, point=row.knee)
    for scen in sorted({r.scenario for r in runs}):
        rows = [c for c in table if c.scenario == scen]
        points, opened = series(rows)
        f = scalability.fit(points)
        s = Scenario(scen, rows, points, f, request_bounds=request_bounds([r for r in runs if r.scenario == scen]),
                     open_points=opened, open_fit=scalability.fit(opened))
        s.utils = [(r.instances, r.max_tput, utilisation.from_summary(r.summary)) for r in runs if r.scenario == scen]
        s.ceiling = utilisation.ceiling([(n, u) for n, _, u in s.utils])
        if target:
            s.advice = scalability.recommend(scen, target, points, f, opened + unheld(rows), s.open_fit)
            _shared_ceiling(s, target)
            bad = scalability.misfits(points, f) if f is not None else []
            if bad and s.advice.basis == "fit":
                s.advice.text += (f" - but the fit misses the measured {', '.join(str(n) for n, _, _ in bad)} "
                                  "instance(s) (see the scalability note): re-measure before relying on it")
            lost = [c.group for c in rows if c.max_tput is None and c.why_none and c.instances]
            if lost and not points:
                s.advice.text = (f"{scen}: no instance count has a capacity at the SLO: the steps that met it were "
                                 "all left out (see NO CAPACITY); cannot recommend an instance count")
            elif lost:
                s.advice.text += (f" - without {', '.join(lost)} instance(s), whose capacity is unknown (see NO "
                                  "CAPACITY): re-measure them before relying on it")
            floors = [c.group for c in rows if c.capacity_is_lower_bound and c.max_tput is not None]
            if floors and s.advice.instances is not None:
                s.advice.text += (f" - conservative: the capacity of {', '.join(floors)} instance(s) is a lower bound "
                                  "(steps above it within the SLO were not counted; see Warnings), so fewer "
                                  "instances may do")
        study.scenarios[scen] = s
    return study


def series(rows: list[analysis.CapacityRow]) -> tuple[list[scalability.Point], list[scalability.Point]]:
    """The two kinds of figure, never fitted together: each count's closed-loop capacity (its ramp's, a lower
    bound flagged), and the figures to size with of the counts where open arrivals held the SLO only below
    it (openloop.size_with; a lower bound flagged when higher rates met the SLO but did not count), their
    replicates the closed loop's scaled to them."""
    closed = [scalability.Point(instances=c.instances, capacity=c.max_tput,
                                replicates=getattr(c, "max_tput_reps", np.empty(0)), runs=c.runs,
                                lower_bound=c.lower_bound or c.capacity_is_lower_bound)
              for c in rows if c.instances and c.max_tput]
    opened = [scalability.Point(instances=c.instances, capacity=c.size_with, runs=c.runs,
                                replicates=openloop.scale_replicates(getattr(c, "max_tput_reps", None), c.max_tput,
                                                                     c.size_with),
                                lower_bound=c.open_lower_bound)
              for c in rows if c.instances and c.max_tput and c.size_with and c.sized_by == "open loop"]
    return closed, opened


def unheld(rows: list[analysis.CapacityRow]) -> list[scalability.Point]:
    """The counts where open arrivals held the SLO at no rate tried (no figure to size with), as figures of 0 for
    the recommendation alone: it must not size such a count with its closed-loop capacity, nor fit a 0."""
    return [scalability.Point(instances=c.instances, capacity=0.0, replicates=np.empty(0), runs=c.runs)
            for c in rows if c.instances and c.max_tput and c.size_with is None and c.sized_by == "open loop"]


def _shared_ceiling(s: Scenario, target: float) -> None:
    """A target above the shared database's measured ceiling is refused whatever the fit says: adding
    instances cannot raise throughput past a resource they all share."""
    if s.ceiling is None or s.advice is None:
        return
    no = utilisation.refusal(s.scenario, target, s.ceiling)
    if no is not None:
        a = s.advice
        a.instances, a.extrapolated, a.basis, a.text, a.capacity_low = None, False, "shared-ceiling", no, None
    elif (note := utilisation.near(target, s.ceiling)) is not None:
        s.advice.text += note


def bottleneck_table(s: Scenario) -> tuple[list[str], list[list[str]]] | None:
    """Per run of the scenario: instance count, capacity and credhub-perf's verdict; None when no run
    sampled the target."""
    rows = [[str(n) if n is not None else "?", f"{cap:,.0f}" if cap is not None else "unknown", u.verdict]
            for n, cap, u in sorted(s.utils, key=lambda t: (t[0] is None, t[0] or 0)) if u.verdict]
    if not rows:
        return None
    return ["instances", "capacity (req/s)", "what ended capacity (credhub-perf, from the target's samples)"], rows


# ---------------------------------------------------------------- text for the report

def _ci_text(ci, fmt="{:,.0f}") -> str:
    if not ci or ci[0] is None:
        return "-"
    hi = "\u221e" if ci[1] is None else fmt.format(ci[1])
    return f"{fmt.format(ci[0])} \u2013 {hi}"


def usl_table(s: Scenario) -> tuple[list[str], list[list[str]]] | None:
    f = s.fit
    if f is None:
        return None
    head = ["parameter", "meaning", "fit", "95 % interval"]
    rows = [["\u03bb (lambda)", "throughput of one instance (req/s)", f"{f.lam:,.0f}", _ci_text(f.lam_ci)],
            ["\u03c3 (sigma)", "contention: share of work serialised", f"{f.sigma:.3f}",
             _ci_text(f.sigma_ci, "{:.3f}")],
            ["\u03ba (kappa)", "coherency: cost of instances keeping in step",
             f"{f.kappa:.2g}" + ("" if f.kappa_free else " (fixed: two counts)"),
             _ci_text(f.kappa_ci, "{:.2g}") if f.kappa_free else "-"]]
    if f.peak_n is not None:
        rows.append(["N*", "instance count of the fit's peak", f"{f.peak_n:.1f} ({float(f.x(f.peak_n)):,.0f} req/s)",
                     _ci_text(f.peak_n_ci, "{:.1f}")])
    elif f.asymptote is not None:
        rows.append(["\u03bb/\u03c3", "throughput ceiling (kappa = 0)", f"{f.asymptote:,.0f} req/s", "-"])
    return head, rows


def usl_note(s: Scenario) -> str:
    counts = ", ".join(str(p.instances) for p in sorted(s.points, key=lambda p: p.instances))
    lb = [p.instances for p in sorted(s.points, key=lambda p: p.instances) if p.lower_bound]
    floors = (f"; the capacities at {', '.join(map(str, lb))} instance(s) are lower bounds (the SLO was never "
              "crossed, or steps above them within the SLO were not counted): drawn as floors, not fitted") if lb else ""
    if s.fit is None:
        return (f"Scalability: {len(s.points)} instance count(s) with a closed-loop capacity ({counts or 'none'})"
                f"{floors}: at least two that are not lower bounds are needed to fit the Universal Scalability "
                "Law, three for the full model." + _open_note(s))
    f = s.fit
    base = (f"Scalability: Universal Scalability Law X(N) = \u03bbN / (1 + \u03c3(N\u22121) + \u03baN(N\u22121)) "
            f"fitted to the closed-loop capacity at the SLO of {', '.join(map(str, f.counts))} instances" + floors)
    if not f.kappa_free:
        base += ("; with two instance counts only \u03c3 is fitted and \u03ba is taken as 0, so the curve cannot "
                 "show a peak: measure a third count before trusting it far out")
    if f.peak_n is not None and scalability.measured_fall(s.points) is None:
        base += ("; its peak is an extrapolation: no measured capacity falls as instances are added")
    bad = scalability.misfits(s.points, f)
    if bad:
        base += ("; the fitted curve is more than 3 standard errors from " +
                 ", ".join(f"{n} instance(s) (measured {m:,.0f}, fit {x:,.0f} req/s)" for n, m, x in bad) +
                 ": the law does not describe these points (better-than-linear scaling, or a run measured "
                 "while the target or the tester was not in steady state; see Warnings), so treat the fit and "
                 "the recommendation with suspicion and re-measure those counts")
    return base + ". Intervals: 95 %, from refitting every bootstrap replicate." + _open_note(s)


def _open_note(s: Scenario) -> str:
    """The second series: the counts sized with what open arrivals hold, and their own fit when there is one."""
    if not s.open_points:
        return ""
    pts = sorted(s.open_points, key=lambda p: p.instances)
    text = (" Open arrivals held the SLO only below the closed-loop capacity at " +
            ", ".join(f"{p.instances} instance(s) ({p.capacity:,.0f} req/s)" for p in pts) +
            ": size those counts with these figures, drawn as a second series and never fitted with the "
            "closed-loop capacities (their intervals are the closed loop's, scaled)")
    g = s.open_fit
    if g is None:
        return text + "; one count of that kind is too few for a fit of its own."
    return text + (f"; their own fit: \u03bb {g.lam:,.0f} req/s, \u03c3 {g.sigma:.3f}, \u03ba {g.kappa:.2g}"
                   + ("" if g.kappa_free else " (two counts: \u03ba fixed at 0)") + ".")


# ---------------------------------------------------------------- capacity.json

def _num(v):
    if v is None:
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def _ci(ci):
    if not ci or ci[0] is None:
        return None
    return [_num(ci[0]), _num(ci[1])]


def to_json(study: Study, opts: Options) -> dict:
    out = {"schema": SCHEMA,
           "slo": {"percentile": opts.slo_percentile, "latency_s": opts.slo_s,
                   "max_error_rate": opts.max_error_rate},
           "interval": {"level": bootstrap.LEVEL, "replicates": study.replicates,
                        "method": "circular block bootstrap of each step's time slices; runs of one count "
                                  "combined by resampling runs (docs/design.md)"},
           "target_rps": study.target, "scenarios": {}}
    for scen, s in study.scenarios.items():
        caps = []
        for c in s.rows:
            caps.append({"instances": c.instances, "group": c.group, "runs": c.runs, "labels": c.labels,
                         "capacity_rps": _num(c.max_tput), "interval": _ci(getattr(c, "max_tput_ci", None)),
                         "lower_bound": c.lower_bound,
                         "capacity_is_lower_bound": c.capacity_is_lower_bound,
                         "lower_bound_reason": c.lower_bound_reason or None,
                         "no_capacity_reason": c.why_none or None,
                         "knee_rps": _num(c.knee),
                         "knee_interval": _ci(getattr(c, "knee_ci", None)), "efficiency": _num(c.efficiency),
                         "open_loop_rps": _num(c.open_loop), "size_with_rps": _num(c.size_with),
                         "sized_with": c.sized_by, "headlines": c.headlines,
                         "capacity_label": "; ".join(c.capacity_labels) or None,
                         "bottlenecks": [u.verdict for n, _, u in s.utils if u.verdict and n == c.instances]})
        usl = None
        if s.fit is not None:
            f = s.fit
            pk = f.peak_n
            usl = {"instance_counts": f.counts, "kappa_fitted": f.kappa_free,
                   "lambda": {"value": _num(f.lam), "interval": _ci(f.lam_ci)},
                   "sigma": {"value": _num(f.sigma), "interval": _ci(f.sigma_ci)},
                   "kappa": {"value": _num(f.kappa), "interval": _ci(f.kappa_ci) if f.kappa_free else None},
                   "peak_instances": None if pk is None else {"value": _num(pk), "interval": _ci(f.peak_n_ci)},
                   "peak_rps": None if pk is None else _num(f.x(pk)),
                   "ceiling_rps": _num(f.asymptote),
                   "misfit_instances": [n for n, _, _ in scalability.misfits(s.points, f)],
                   "series": "closed loop",
                   "lower_bounds_not_fitted": [p.instances for p in s.points if p.lower_bound],
                   "measured_fall": list(scalability.measured_fall(s.points) or []) or None}
        usl_open = None
        if s.open_fit is not None:
            g = s.open_fit
            usl_open = {"instance_counts": g.counts, "kappa_fitted": g.kappa_free,
                        "lambda": {"value": _num(g.lam), "interval": _ci(g.lam_ci)},
                        "sigma": {"value": _num(g.sigma), "interval": _ci(g.sigma_ci)},
                        "kappa": {"value": _num(g.kappa), "interval": _ci(g.kappa_ci) if g.kappa_free else None}}
        rec = None
        if s.advice is not None:
            a = s.advice
            rec = {"target_rps": a.target, "instances": a.instances, "extrapolated": a.extrapolated,
                   "basis": a.basis, "capacity_low_rps": _num(a.capacity_low),
                   "peak_instances": _num(a.peak_instances), "peak_rps": _num(a.peak_throughput), "text": a.text}
        ceil = None
        if s.ceiling is not None:
            c = s.ceiling
            ceil = {"resource": c.resource, "ceiling_rps": _num(c.rps), "busiest_cpu": _num(c.cpu),
                    "at_rps": _num(c.at_rps), "instances": c.instances}
        out["scenarios"][scen] = {"capacity": caps, "usl": usl, "usl_open_loop": usl_open, "recommendation": rec,
                                  "shared_ceiling": ceil,
                                  "slo_latency_by_request_s": (None if s.request_bounds is None else
                                                               {k: _num(v) for k, v in s.request_bounds.items()})}
    out["workload"] = study.workload
    return out


def write_json(out_dir: str, study: Study, opts: Options) -> str:
    # whole or not at all, like every other output (output.py)
    return output.write_text(os.path.join(out_dir, "capacity.json"),
                             json.dumps(to_json(study, opts), indent=2, allow_nan=False) + "\n")
