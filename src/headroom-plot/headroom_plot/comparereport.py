"""A comparison's words: the table on stdout, and its own report.md and report.html (images inlined).

The comparison's report stands apart from the headroom report (a comparison
reads two sets of runs, a headroom report one): it is written to the
comparison's --out, which must not hold a headroom report. Both share the
report's table rendering and style (report.py).
"""
from __future__ import annotations

import datetime as dt
import json
import os

from . import compare, comparesizing, output
from .compare import Comparison, Difference, Estimate, Item
from .report import Document
from .runs import Options


def _n(v, fmt="{:,.0f}") -> str:
    return "-" if v is None else fmt.format(v)


def _ci(e: Estimate, fmt="{:,.0f}") -> str:
    if e.interval is None:
        return "-"
    return f"{fmt.format(e.interval[0])} \u2013 {fmt.format(e.interval[1])}"


def _signed(e: Estimate, fmt="{:+,.0f}") -> str:
    if e.value is None:
        return "-"
    s = fmt.format(e.value)
    if e.interval is not None:
        s += f" ({fmt.format(e.interval[0])} \u2026 {fmt.format(e.interval[1])})"
    return s


def _ratio_pct(e: Estimate) -> str:
    """B / A as a signed percentage with its interval: "-20.1 % (-24.0 ... -16.2 %)"."""
    if e.value is None:
        return "-"
    s = f"{(e.value - 1) * 100:+.1f} %"
    if e.interval is not None:
        s += f" ({(e.interval[0] - 1) * 100:+.1f} \u2026 {(e.interval[1] - 1) * 100:+.1f} %)"
    return s


def heading(i: Item, c: Comparison) -> str:
    na, nb = c.names["A"], c.names["B"]
    same = i.a.key == i.b.key
    if same:
        return f"{i.scenario}: {nb} against {na}" + (f", {i.a.what}" if i.a.row.instances is not None else "")
    groups = f" ({i.b.what} against {i.a.what})" if (nb, na) != (i.b.what, i.a.what) else ""
    return f"{i.scenario}: {nb} against {na}{groups}"


def capacity_rows(i: Item, c: Comparison) -> tuple[list[str], list[list[str]]]:
    head = ["figure", f"A: {c.names['A']}", "95 % interval", f"B: {c.names['B']}", "95 % interval",
            "B \u2212 A", "B / A \u2212 1", "shows"]
    rows = []

    def row(name, d: Difference, fmt="{:,.0f}", sfmt="{:+,.0f}", floor_a="", floor_b=""):
        rows.append([name, floor_a + _n(d.a.value, fmt), _ci(d.a, fmt), floor_b + _n(d.b.value, fmt), _ci(d.b, fmt),
                     _signed(d.diff, sfmt), _ratio_pct(d.ratio), d.shows])

    row(f"closed-loop capacity at the SLO (req/s), runs {i.a.row.runs} / {i.b.row.runs}", i.capacity,
        floor_a="\u2265 " if i.a.lower_bound_reason() else "", floor_b="\u2265 " if i.b.lower_bound_reason() else "")
    rows[-1][-1] = i.verdict
    if i.sizing:  # credhub-perf's figures after the open-loop confirmation: shown, not compared
        rows.append(["size with (req/s), credhub-perf's", comparesizing.cell(i.sizing["A"]), "-",
                     comparesizing.cell(i.sizing["B"]), "-", "-", "-", "not compared"])
    if i.knee is not None:
        row("knee (req/s)", i.knee)
    return head, rows


def latency_rows(i: Item, c: Comparison) -> tuple[list[str], list[list[str]]] | None:
    if not i.latency:
        return None
    head = ["throughput (req/s)", "percentile", f"A: {c.names['A']} (ms)", "95 % interval",
            f"B: {c.names['B']} (ms)", "95 % interval", "B \u2212 A (ms)", "B / A \u2212 1", "shows"]
    rows = []
    for p in sorted(i.latency, key=lambda p: (p.throughput, p.percentile)):
        d = p.d
        ms = lambda e: Estimate(None if e.value is None else e.value * 1000,  # noqa: E731
                                None if e.interval is None else (e.interval[0] * 1000, e.interval[1] * 1000))
        rows.append([f"{p.throughput:,.4g}", f"p{p.percentile}", _n(ms(d.a).value, "{:,.1f}"), _ci(ms(d.a), "{:,.1f}"),
                     _n(ms(d.b).value, "{:,.1f}"), _ci(ms(d.b), "{:,.1f}"), _signed(ms(d.diff), "{:+,.1f}"),
                     _ratio_pct(d.ratio), d.shows])
    return head, rows


def usl_rows(u: compare.UslCompare, c: Comparison) -> tuple[list[str], list[list[str]]]:
    head = ["parameter", f"A: {c.names['A']}", "95 % interval", f"B: {c.names['B']}", "95 % interval",
            "B \u2212 A", "B / A \u2212 1", "shows"]
    rows = []
    for name, d, fmt, sfmt in (("\u03bb: one instance's throughput (req/s)", u.lam, "{:,.0f}", "{:+,.0f}"),
                               ("\u03c3: contention", u.sigma, "{:.3f}", "{:+.3f}"),
                               ("\u03ba: coherency", u.kappa, "{:.2g}", "{:+.2g}")):
        rows.append([name, _n(d.a.value, fmt), _ci(d.a, fmt), _n(d.b.value, fmt), _ci(d.b, fmt),
                     _signed(d.diff, sfmt), _ratio_pct(d.ratio) if name.startswith("\u03bb") else "-", d.shows])
    return head, rows


def intro(c: Comparison, opts: Options) -> str:
    def side(s):
        return f"{s} = {c.names[s]} ({len(c.paths[s])} run{'s' if len(c.paths[s]) != 1 else ''})"
    return (f"Comparison of {side('B')} against {side('A')}. SLO: p{opts.slo_percentile:g} \u2264 "
            f"{opts.slo_s * 1000:g} ms; steps with more than {opts.max_error_rate:.1%} failed requests do not count. "
            f"Intervals: 95 %, from {c.replicates} block-bootstrap replicates of each side's runs. \"shows\": lower "
            f"or higher when the interval of B \u2212 A leaves out 0, else {compare.SAME}.")


def _text_table(head, rows) -> str:
    widths = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(head)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join(["  " + line(head)] + ["  " + line(r) for r in rows])


def detectable_text(i: Item, c: Comparison) -> str:
    """The smallest capacity difference these runs could show, as a sentence ("" without an interval)."""
    d = i.capacity.detectable
    if d is None:
        return ""
    return (f"Smallest detectable difference: about {compare.pct(d)} of {comparesizing.poss(c.names['A'])} capacity "
            "(what these runs would show as lower or higher four times in five; more repeats make it smaller).")


def text_table(c: Comparison, opts: Options) -> str:
    out = [intro(c, opts)]
    for i in c.items:
        out += ["", heading(i, c), "  verdict: " + i.text]
        if detectable_text(i, c):
            out.append("  " + detectable_text(i, c))
        out.append(_text_table(*capacity_rows(i, c)))
        lat = latency_rows(i, c)
        if lat is not None:
            out += ["  latency at matched throughput:", _text_table(*lat)]
    for scen, u in c.usl.items():
        out += ["", f"{scen}: Universal Scalability Law, A's fit to {', '.join(map(str, u.a.counts))} instances, "
                    f"B's to {', '.join(map(str, u.b.counts))}", _text_table(*usl_rows(u, c))]
    return "\n".join(out)


def write(out_dir: str, c: Comparison, opts: Options, images: dict, title: str | None) -> list[str]:
    """report.md and report.html of the comparison; images: id(item) -> paths drawn for it."""
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head_text = title or f"Comparison: {c.names['B']} against {c.names['A']}"
    doc = Document(out_dir)
    para, h, table_ = doc.para, doc.h, doc.table

    h(1, head_text)
    para(f"Generated {now} by headroom-plot compare. " + intro(c, opts))
    for i in c.items:
        h(2, heading(i, c))
        cls = "warn" if i.verdict == compare.CANNOT or i.at_least else "rec"
        doc.labelled("Verdict", i.text, cls)
        if detectable_text(i, c):
            para(detectable_text(i, c))
        table_(*capacity_rows(i, c))
        lat = latency_rows(i, c)
        if lat is not None:
            para("Latency at matched throughput: each side's percentile interpolated between its own steps at "
                 "throughputs both reached (shares of the smaller capacity at the SLO).")
            table_(*lat)
        for p in images.get(id(i), []):
            if p.endswith(".png"):
                doc.image(p, f"comparison {i.scenario}")
    for scen, u in c.usl.items():
        h(2, f"{scen}: scalability")
        para(f"The Universal Scalability Law fitted on each side: A to {', '.join(map(str, u.a.counts))} instances, "
             f"B to {', '.join(map(str, u.b.counts))}. Intervals from refitting every bootstrap replicate.")
        table_(*usl_rows(u, c))
    h(2, "Runs")
    table_(["side", "name", "run"], [[s, c.names[s], p] for s in ("A", "B") for p in c.paths[s]])
    if c.warnings:
        h(2, "Warnings")
        doc.warnings(c.warnings)
    paths = doc.write(head_text)
    json_path = os.path.join(out_dir, "comparison.json")
    output.write_text(json_path, json.dumps(compare.to_json(c, opts), indent=2, allow_nan=False) + "\n")
    return paths + [json_path]
