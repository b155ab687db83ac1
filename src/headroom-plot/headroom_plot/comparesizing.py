"""What each side of a comparison should be sized with, beside the closed-loop capacity compared.

headroom-plot compare compares closed-loop capacities: each side's SLO crossing on its ramp, with a block
bootstrap (compare.py). credhub-perf follows a ramp with an open-loop confirmation and decides, per run,
which figure to size with and whether the capacity may be a cold target's (summary.json `open_loop`,
`size_with`, `capacity_label`: results/openloop.go, coldlabel.go); the capacity table gathers them per
group (analysis.CapacityRow's size_with, sized_by, open_loop, capacity_labels, from openloop.row_figures).
This module says them per side, without re-judging any of them: the figure to size with and what it is,
whether open arrivals caught a gap below the closed loop (then the verdict says the comparison is of
closed-loop capacities and names each side's figure to size with), and the cold-target labels the verdict
carries. The bootstrap compares closed-loop capacities only: the confirmation's steps carry no replicates
of their own, so the figures to size with are shown, not compared.

compare.py imports this module and never the other way: the verdict's sizing sentence and the wording it
shares with the verdict (poss) live here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import openloop

OPEN, CLOSED = "open loop", "closed loop"


@dataclass
class Sizing:
    """One side's figure to size with (credhub-perf's), and what it is."""
    value: float | None                # req/s; None without a capacity, or open arrivals held the SLO at no rate
    by: str                            # OPEN or CLOSED
    status: str                        # what the figure is, in words
    open_loop: float | None = None     # what open arrivals hold (the median over runs with a confirmation)
    labels: list[str] = field(default_factory=list)      # credhub-perf's cold-target labels
    headlines: list[str] = field(default_factory=list)   # credhub-perf's headlines of the side's runs

    @property
    def gap(self) -> bool:
        """Open arrivals hold the SLO only below the closed loop's capacity (credhub-perf's `agree` false):
        the figure to size with is lower than the capacity compared."""
        return self.by == OPEN


def poss(name: str) -> str:
    """The possessive of a side's name: "A's", "4 instances'"."""
    return name + ("'" if name.endswith("s") else "'s")


def _runs(n: int) -> str:
    return f"{n} run{'s' if n != 1 else ''}"


def status(by: str, value: float | None, confirmations: list) -> str:
    """What a side's figure to size with is. confirmations: each run's openloop.Confirmation or None."""
    n = len(confirmations)
    had = [c for c in confirmations if c is not None and c.verdict]
    if by == OPEN:
        opened = sum(1 for c in confirmations if openloop.sized_by(c) == OPEN)
        some = f" in {opened} of {_runs(n)}" if 0 < opened < n else ""
        if value is None:
            why = next((c.why_no_figure for c in confirmations if c is not None and c.why_no_figure), openloop.NO_FIGURE)
            return f"open loop{some}: {why}" + ("; size below the lowest rate tried" if why == openloop.NO_FIGURE else "")
        return f"open loop{some}: open arrivals hold the SLO only below the closed-loop capacity"
    if not had:
        if any(c is not None for c in confirmations):
            return "closed loop, open-loop confirmation not judged: no credhub-perf"
        return "closed loop, no open-loop confirmation"
    agreed = sum(1 for c in had if c.agree)
    if agreed == n:
        return "closed loop, confirmed by open arrivals"
    if agreed:
        return f"closed loop, confirmed by open arrivals in {agreed} of {_runs(n)}"
    note = next((c.note for c in had if c.note), "")
    return "closed loop, open-loop confirmation inconclusive" + (f" ({note})" if note else "")


def sizing(row, runs: list) -> Sizing:
    """A side's Sizing from its capacity-table row (analysis.CapacityRow) and its runs (runs.Run)."""
    confs = [r.confirmation for r in runs]
    value = row.size_with if row.max_tput is not None or row.sized_by == OPEN else None
    return Sizing(value=value, by=row.sized_by, status=status(row.sized_by, value, confs), open_loop=row.open_loop,
                  labels=list(row.capacity_labels), headlines=list(row.headlines))


def figure(s: Sizing) -> str:
    """The figure to size with in a sentence: "700 req/s (open loop: ...)"."""
    if s.value is None and s.by == OPEN:
        return s.status  # it says there is no figure, and why
    v = "no figure" if s.value is None else f"{s.value:,.0f} req/s"
    return f"{v} ({s.status})"


def cell(s: Sizing) -> str:
    """The figure to size with in a table cell: "700 (open loop: ...)", the cold-target mark after it."""
    v = "-" if s.value is None else f"{s.value:,.0f}"
    return f"{v} ({s.status})" + (" [warm-up off: may be a cold target's]" if s.labels else "")


def verdict_text(text: str, a: str, b: str, sa: Sizing, sb: Sizing) -> str:
    """The verdict's sentence with what the sizing adds: when either side's confirmation caught a gap, that the
    comparison is of closed-loop capacities and each side's figure to size with; each side's cold-target
    labels. a, b: the sides' names."""
    if sa.gap or sb.gap:
        where = "both" if sa.gap and sb.gap else a if sa.gap else b
        text += (f"; these are closed-loop capacities, and open arrivals hold the SLO lower on {where}: size "
                 f"{a} with {figure(sa)}, {b} with {figure(sb)}")
    for name, s in ((a, sa), (b, sb)):
        if s.labels:
            text += f"; {poss(name)} capacity: " + "; ".join(s.labels)
    return text


def to_json(s: Sizing) -> dict:
    """A side's sizing fields of comparison.json (docs/csv-format.md)."""
    def num(v):
        return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None
    return {"size_with_rps": num(s.value), "sized_with": s.by, "sizing": s.status, "open_loop_rps": num(s.open_loop),
            "capacity_label": "; ".join(s.labels) or None, "headlines": s.headlines}
