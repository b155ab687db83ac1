"""The open-loop confirmation of a closed-loop capacity, as credhub-perf judged it.

`credhub-perf run` and `capacity` follow a closed-loop ramp that found its capacity at the SLO with
fixed-rate (open-loop) steps at fractions of it, in the same CSV (their `rate` set). credhub-perf alone
decides which steps are the confirmation, what open arrivals hold and which figure to size with
(summary.json `open_loop`, `size_with`, `headline`: results/openloop.go); this module takes those from
summary.json (or `credhub-perf summary --json` at headroom-plot's SLO) and moves the confirmation's steps
and rows out of the run, so the ramp's own figures (knee fit, SLO crossing, bootstrap intervals) come from
the ramp alone and the plots draw the confirmation apart. Pure functions on numpy arrays and dicts; the
drawing is in plots.py and timeview.py.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Confirmation:
    """A run's open-loop confirmation: its steps and rows, and credhub-perf's verdict."""
    steps: list                        # analysis.Step, in file order
    latency: np.ndarray
    offset: np.ndarray
    error: np.ndarray
    step: np.ndarray                   # step index (file order) of each row
    verdict: dict = field(default_factory=dict)   # summary.json's open_loop
    size_with: float | None = None
    size_with_kind: str = ""           # summary.json's "closed_loop" / "open_loop"; "" when not recorded
    # The ramp's closed-loop capacity credhub-perf judged (summary.json closed_loop_capacity, else
    # open_loop.closed_loop): None when the ramp found none, so there was nothing to confirm.
    closed_loop: float | None = None
    headline: str = ""
    # Per step (as `steps`): credhub-perf's cause of the requests over the SLO latency ("target pauses",
    # "new connections", "queueing", "" none) and its note (summary.json steps' `tail`).
    causes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def capacity(self) -> float | None:
        return _num(self.verdict.get("capacity"))

    @property
    def agree(self) -> bool:
        """Confirmed: open arrivals held the SLO at the closed-loop figure (results/sizewith.go), the only case
        the closed-loop figure is sized with after a confirmation."""
        return self.verdict.get("agree") is True

    @property
    def held(self) -> float | None:
        """The highest offered rate at which open arrivals held the SLO in a step that counts."""
        return _num(self.verdict.get("held"))

    @property
    def no_figure(self) -> bool:
        """Open arrivals held the SLO at no rate tried, or no step of theirs counted: there is no figure to size
        with, and the closed-loop one is not it."""
        return sized_by(self) == "open loop" and self.size_with is None

    @property
    def why_no_figure(self) -> str:
        """Why there is no figure to size with, in the words of every reader ("" when there is one)."""
        if not self.no_figure:
            return ""
        if self.capacity is None and self.note and not self.note.startswith(MISSED):
            return f"no figure to size with (open arrivals unconfirmed: {self.note})"
        return NO_FIGURE

    @property
    def note(self) -> str:
        n = self.verdict.get("note")
        return n if isinstance(n, str) else ""


def _num(v) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def has_both_kinds(rates: list) -> bool:
    """Whether a run's steps hold closed-loop steps (rate 0) and open-loop ones (rate > 0): the only runs
    credhub-perf gives a confirmation (results.Summary.hasConfirmation); a cheap test before asking it."""
    return any(r is not None and r > 0 for r in rates) and any(r == 0 for r in rates)


def confirmation_indices(steps: list, doc: dict) -> tuple[list[int], str]:
    """The run's steps (positions in `steps`, file order) that credhub-perf's summary (doc) names as the
    confirmation (`open_loop.steps`, matched by concurrency and rate), and a warning when they cannot be
    told apart; ([], "") without a confirmation."""
    ol = doc.get("open_loop")
    ss = doc.get("steps")
    if not isinstance(ol, dict):
        return [], ""
    nums = ol.get("steps")
    if not isinstance(nums, list) or not isinstance(ss, list):
        return [], "summary's open_loop names no steps: the confirmation is drawn with the ramp"
    wanted = {n for n in nums if isinstance(n, int) and not isinstance(n, bool)}
    pairs = [(t.get("concurrency"), _num(t.get("rate"))) for t in ss
             if isinstance(t, dict) and t.get("step") in wanted]
    idx = []
    for k, s in enumerate(steps):
        if s.rate is None or not s.rate > 0:
            continue
        if any(c == s.concurrency and r is not None and abs(r - s.rate) <= 1e-6 * max(1.0, r) for c, r in pairs):
            idx.append(k)
    if len(idx) != len(wanted) or (idx and idx != list(range(idx[0], len(steps)))):
        return [], ("summary's open-loop confirmation steps are not the CSV's last steps: the confirmation is "
                    "drawn with the ramp")
    return idx, ""


def trailing_open(steps: list) -> list[int]:
    """The fixed-rate steps after a run's last closed-loop one (positions in `steps`): where credhub-perf puts
    its confirmation, taken by shape alone when there is no credhub-perf to name them; [] when none."""
    closed = [k for k, s in enumerate(steps) if s.rate == 0]
    if not closed or closed[-1] == len(steps) - 1:
        return []
    return list(range(closed[-1] + 1, len(steps)))


def split(steps: list, latency: np.ndarray, offset: np.ndarray, error: np.ndarray, step: np.ndarray,
          first: int) -> tuple[Confirmation, np.ndarray]:
    """The confirmation made of steps[first:] and their rows (rows sorted by step), and the mask of the
    ramp's rows."""
    ramp = step < first
    conf = Confirmation(steps=steps[first:], latency=latency[~ramp], offset=offset[~ramp], error=error[~ramp],
                        step=step[~ramp])
    return conf, ramp


def ramp_summary(summary: dict | None, n_conf: int) -> dict | None:
    """summary.json with the confirmation's steps left out (they follow the ramp's in its order), for the
    checks that compare its steps with the ramp's."""
    if not isinstance(summary, dict) or not n_conf or not isinstance(summary.get("steps"), list):
        return summary
    out = dict(summary)
    out["steps"] = summary["steps"][:max(len(summary["steps"]) - n_conf, 0)]
    return out


def conf_summary(summary: dict | None, n_conf: int) -> dict | None:
    """summary.json with only the confirmation's steps, to flag them as the ramp's are."""
    if not isinstance(summary, dict) or not n_conf or not isinstance(summary.get("steps"), list):
        return None
    out = dict(summary)
    out["steps"] = summary["steps"][-n_conf:]
    return out


def attach(conf: Confirmation, doc: dict) -> None:
    """credhub-perf's verdict (doc: its summary at headroom-plot's SLO) onto the confirmation."""
    ol = doc.get("open_loop")
    conf.verdict = ol if isinstance(ol, dict) else {}
    conf.size_with = _num(doc.get("size_with"))
    kind = doc.get("size_with_kind")
    conf.size_with_kind = kind if kind in KINDS else ""
    conf.closed_loop = _num(doc.get("closed_loop_capacity"))
    if conf.closed_loop is None and "closed_loop_capacity" not in doc:
        conf.closed_loop = _num(conf.verdict.get("closed_loop"))  # a summary written before closed_loop_capacity
    h = doc.get("headline")
    conf.headline = h[:400] if isinstance(h, str) else ""
    conf.causes, conf.notes = [], []
    ss = [t for t in doc.get("steps") or [] if isinstance(t, dict)] if isinstance(doc.get("steps"), list) else []
    for s in conf.steps:
        tail = next((t.get("tail") for t in ss if t.get("concurrency") == s.concurrency and _num(t.get("rate"))
                     is not None and s.rate is not None and abs(_num(t.get("rate")) - s.rate) <= 1e-6 * max(1.0, s.rate)),
                    None)
        tail = tail if isinstance(tail, dict) else {}
        cause, note = tail.get("cause"), tail.get("note")
        conf.causes.append(cause if cause in CAUSES else "")
        conf.notes.append(note[:300] if isinstance(note, str) else "")


# credhub-perf's causes of a step's slow requests (results.TailFigures.Cause).
CAUSES = ("target pauses", "new connections", "queueing")


# summary.json's size_with_kind, and the words the capacity table uses for each.
KINDS = {"closed_loop": "closed loop", "open_loop": "open loop"}


def _same(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) <= 1e-9 * max(1.0, abs(a))


# Why a run with a confirmation has no figure to size with (summary.json size_with null): the words every
# reader (capacity table, report, compare) uses.
NO_FIGURE = "no figure to size with (open arrivals held the SLO at no rate tried)"
# The start of credhub-perf's open_loop.note when every rate tried missed (results/openloop.go), as against a
# note saying why no step counted.
MISSED = "no open-loop step met the SLO"


def sized_by(conf: Confirmation | None) -> str:
    """Which figure the operator should size with: "open loop" when open arrivals did not hold the SLO at the
    ramp's capacity (their highest rate held, or none when they held at no rate tried: size_with None), "closed
    loop" when they confirmed it or there was no confirmation. credhub-perf's size_with_kind decides when
    recorded. A null size_with with a confirmation of a closed-loop capacity is "open loop" with no figure, never
    the closed-loop one. A summary written before size_with_kind: the figure size_with equals (the ramp's or open
    arrivals'), and when both or neither, its `agree`."""
    if conf is None or not conf.verdict:
        return "closed loop"
    if conf.size_with_kind:
        return KINDS[conf.size_with_kind]
    if conf.size_with is None:
        # credhub-perf found no closed-loop capacity (open_loop.closed_loop null): nothing was confirmed or
        # refuted, and the ramp has no figure either.
        nothing = "closed_loop" in conf.verdict and conf.verdict["closed_loop"] is None
        return "closed loop" if nothing else "open loop"
    closed = conf.closed_loop
    if closed is not None and conf.capacity is not None and not _same(closed, conf.capacity):
        if _same(conf.size_with, closed):
            return "closed loop"
        if _same(conf.size_with, conf.capacity):
            return "open loop"
    if conf.agree:
        return "closed loop"
    if conf.capacity is None:
        return "closed loop"  # confirmation unknown (its steps did not count): the ramp's, flagged in the headline
    return "open loop"


def size_with(max_tput: float | None, conf: Confirmation | None) -> float | None:
    """The capacity to size with: the ramp's (headroom-plot's own SLO crossing) unless open arrivals hold
    the SLO only lower, then credhub-perf's open-loop figure (None when they held it at no rate tried)."""
    if sized_by(conf) == "open loop":
        return conf.size_with
    return max_tput


def scale_replicates(reps: np.ndarray | None, closed: float | None, sized: float | None) -> np.ndarray:
    """The bootstrap replicates of a count sized with its open-loop figure: the closed loop's, scaled to
    it. The confirmation's steps carry no bootstrap of their own (credhub-perf judges them); the scaled
    replicates keep the closed loop's relative spread, so the fit and the recommendation weigh the count
    as before."""
    if reps is None or not len(reps) or not closed or sized is None:
        return np.empty(0)
    return np.asarray(reps, dtype=np.float64) * (sized / closed)


def row_figures(run) -> dict:
    """A run's open-loop figures for the capacity table's row (analysis.capacity_table), as credhub-perf
    judged them: what open arrivals hold, which figure to size with and that figure, its headline, and its
    cold-target label (runs.Run.capacity_label)."""
    c = run.confirmation
    return {"open_loop": c.capacity if c else None, "sized_by": sized_by(c), "size_with": size_with(run.max_tput, c),
            "headline": c.headline if c else "", "capacity_label": run.capacity_label,
            "no_figure": c.why_no_figure if c else "",
            "open_lower_bound": bool(c and sized_by(c) == "open loop" and c.verdict.get("capacity_is_lower_bound") is True)}
