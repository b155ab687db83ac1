"""report.md and a self-contained report.html (images inlined) from the same blocks."""
from __future__ import annotations

import base64
import datetime as dt
import html
import os

from . import credhubperf, openloop, output, utilisation
from .analysis import CapacityRow
from .scalability import Advice as Recommendation
from .runs import Options, Run, warmup_headline, warmup_note, warmup_steady


def _ms(v: float | None) -> str:
    return "-" if v is None else f"{v * 1000:.1f}"


def _num(v: float | None, fmt: str = "{:,.0f}") -> str:
    return "-" if v is None else fmt.format(v)


def _span(values: list) -> str:
    vals = [v for v in values if v is not None]
    if not vals:
        return "-"
    lo, hi = min(vals), max(vals)
    return f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}"


def _conc_step(concs: list) -> str:
    c = [v for v in concs if v is not None]
    if len(c) < 2:
        return "-"
    d = {b - a for a, b in zip(c, c[1:])}
    return f"{d.pop():g}" if len(d) == 1 else "varies (" + ", ".join(f"{v:g}" for v in c[:8]) + \
        (", ..." if len(c) > 8 else "") + ")"


def request_details(runs: list[Run]) -> tuple[list[str], list[list[str]]]:
    head = ["run", "request type", "instances", "requests per step", "concurrency step", "min concurrency",
            "max concurrency", "steps", "total requests", "CSV format"]
    rows = []
    for r in runs:
        concs = [s.concurrency for s in r.steps]
        known = [c for c in concs if c is not None]
        fmt = ", ".join(sorted({t.format for t in r.files}))
        if len(r.files) > 1:
            fmt += f" ({len(r.files)} testers)"
        rows.append([r.label, r.scenario, "-" if r.instances is None else str(r.instances),
                     _span([s.requests for s in r.steps]), _conc_step(concs),
                     f"{min(known):g}" if known else "-", f"{max(known):g}" if known else "-",
                     str(len(r.steps)), f"{r.total:,}", fmt])
    return head, rows


def step_table(run: Run, opts: Options) -> tuple[list[str], list[list[str]]]:
    head = ["step", "concurrency", "rate (req/s)", "requests", "errors", "error %", "duration (s)",
            "throughput (req/s)", "mean (ms)", "p50 (ms)", "p90 (ms)", "p95 (ms)", "p99 (ms)", "max (ms)",
            "Little's law residual", "tester CPU", "flags (not steady, not judged steady, tester-bound, incomplete)"]
    if opts.slo_percentile not in (50, 90, 95, 99):
        head.insert(-3, f"p{opts.slo_percentile:g} (ms)")
    rows = []
    for s in run.steps:
        row = [str(s.index + 1), "-" if s.concurrency is None else str(s.concurrency),
               "closed loop" if not s.rate else f"{s.rate:g}", f"{s.requests:,}", f"{s.errors:,}",
               f"{s.error_rate * 100:.2f}" + (" (over limit)" if s.error_rate > opts.max_error_rate else ""),
               f"{s.duration_s:.2f}", f"{s.throughput:,.1f}", _ms(s.mean_s), _ms(s.p50_s), _ms(s.p90_s),
               _ms(s.p95_s), _ms(s.p99_s), _ms(s.max_s),
               "-" if s.littles_residual is None else f"{s.littles_residual:+.1%}",
               "-" if s.tester_cpu is None else f"{s.tester_cpu:.0%}",
               (s.flag_note + (" - not counted as capacity" if not s.usable() else " - counted (steady warm-up)"))
               if s.flag_note else ""]
        if opts.slo_percentile not in (50, 90, 95, 99):
            row.insert(-3, _ms(s.slo_s))
        rows.append(row)
    return head, rows


def request_table(run: Run, opts: Options) -> tuple[list[str], list[list[str]]]:
    """A mixed run's steps per request type: how each type fared under the same load."""
    head = ["step", "request", "requests", "errors", "error %", "throughput (req/s)", "p50 (ms)", "p95 (ms)",
            "p99 (ms)", f"p{opts.slo_percentile:g} (ms)", "bound (ms)", "meets SLO"]
    rows = [[str(f["step"] + 1), f["request"], f"{f['requests']:,}", f"{f['errors']:,}",
             f"{f['error_rate'] * 100:.2f}", f"{f['throughput']:,.1f}", _ms(f["p50_s"]), _ms(f["p95_s"]),
             _ms(f["p99_s"]), _ms(f["slo_s"]), _ms(f["slo_bound_s"]), "yes" if f["meets_slo"] else "no"]
            for f in run.by_request]
    if opts.slo_percentile in (50, 95, 99):  # the SLO's percentile already has its column
        head.pop(-3)
        for r in rows:
            r.pop(-3)
    return head, rows


def warmup_text(meta: dict) -> str:
    """One sentence on the run warm-up from meta.json ("" for runs written before it)."""
    w = meta.get("warmup")
    if not isinstance(w, dict) or not isinstance(w.get("mode"), str):
        return ""
    if w["mode"] == "off":
        return "Run warm-up: off."
    d, n = w.get("duration_s"), w.get("requests")
    how = str(w.get("reason") or "")
    return (f"Run warm-up ({w['mode']}): {_num(n)} unrecorded requests over {_num(d, '{:,.0f}')} s"
            + (f", {how}." if how else "."))


def _interval(ci) -> str:
    if not ci or ci[0] is None:
        return "-"
    return f"{ci[0]:,.0f} \u2013 {ci[1]:,.0f}"


def capacity(table: list[CapacityRow], scenario: str) -> tuple[list[str], list[list[str]]]:
    rows_s = [c for c in table if c.scenario == scenario]
    counted = [c for c in rows_s if c.instances and c.max_tput]
    base = min(counted, key=lambda c: c.instances).instances if counted else None
    head = ["instances", "runs", "max throughput at SLO (req/s)", "95 % interval", "knee (req/s)",
            "knee 95 % interval",
            f"scaling efficiency vs {base} instance{'s' if base != 1 else ''}" if base else "scaling efficiency"]
    confirmed = any(c.open_loop is not None or c.sized_by == "open loop" for c in rows_s)
    if confirmed:
        head.append("size with (req/s)")
    rows = []
    for c in rows_s:
        rows.append([c.group if c.instances is not None else f"? (label {c.group})", str(c.runs),
                     ("\u2265 " + _num(c.max_tput) + " (lower bound: steps above it not counted, see below)"
                      if c.capacity_is_lower_bound else
                      "\u2265 " + _num(c.max_tput) + " (SLO not crossed)" if c.lower_bound else _num(c.max_tput))
                     + (" [warm-up off: may be a cold target's]" if c.capacity_labels else "")
                     if c.max_tput is not None else
                     ("unknown: no step counts (see below)" if c.why_none else
                      "no usable step (see Warnings)" if c.unusable else "SLO never met"),
                     _interval(c.max_tput_ci),
                     _num(c.knee) if c.knee is not None else "unknown" if c.why_none else "not reached",
                     _interval(c.knee_ci),
                     "-" if c.efficiency is None else f"{c.efficiency:.0%}"]
                    + ([_sized(c)] if confirmed else []))
    return head, rows


def _sized(c: CapacityRow) -> str:
    """The capacity table's "size with" cell: the figure and its kind, or why there is none."""
    if c.size_with is not None:
        return f"{_num(c.size_with)} ({c.sized_by})"
    return (c.no_figure or openloop.NO_FIGURE) if c.sized_by == "open loop" and c.max_tput is not None else "-"


def _bottlenecks(s, para, table_) -> None:
    """Where capacity ends, per instance count, and the shared database's ceiling (study.py)."""
    from . import study
    t = study.bottleneck_table(s)
    if t is None:
        return
    para("Where capacity ends. credhub-perf sampled the target's CPU per step and names the busiest "
         f"resource over the steps that count as capacity (at {100 * utilisation.BUSY:.0f} % or more; below that "
         "the limit lies in something not sampled: a connection pool, locks, the network).")
    table_(*t)
    c = s.ceiling
    if c is not None:
        para(f"The shared {c.resource} would be fully busy at about {c.rps:,.0f} req/s (throughput / busy share "
             f"over the steps where it was at least {100 * utilisation.MIN_SHARE:.0f} % busy; busiest "
             f"{100 * c.cpu:.0f} % at {c.at_rps:,.0f} req/s). No number of CredHub instances serves more; the "
             "recommendation refuses a target above it.")


def _scalability(s, para, table_) -> None:
    """The USL fit's paragraph and parameter table (headroom_plot.study builds both)."""
    from . import study
    para(study.usl_note(s))
    t = study.usl_table(s)
    if t is not None:
        table_(*t)


# ---------------------------------------------------------------- rendering

def _md_table(head, rows) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def _html_table(head, rows) -> str:
    h = "".join(f"<th>{html.escape(c)}</th>" for c in head)
    b = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{h}</tr></thead><tbody>{b}</tbody></table>\n"


CSS = """body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1250px;
color:#222;line-height:1.45;padding:0 1em}table{border-collapse:collapse;margin:.6em 0 1.4em;font-size:.88em}
th,td{border:1px solid #ccc;padding:.25em .55em;text-align:right}th{background:#f0f3f8}
td:first-child,th:first-child{text-align:left}img{max-width:100%;border:1px solid #ddd;margin:.5em 0}
.warn{background:#fff6e0;border-left:4px solid #e0a000;padding:.5em 1em}.rec{background:#eaf6ea;
border-left:4px solid #2a9d4b;padding:.5em 1em}code{background:#f4f4f4;padding:0 .2em}"""


class Document:
    """A report written twice as it is built: markdown (report.md) and HTML with its images inlined (report.html)."""

    def __init__(self, out_dir: str):
        self.out_dir = out_dir
        self.md: list[str] = []
        self.ht: list[str] = []

    def para(self, text: str, cls: str | None = None) -> None:
        self.md.append(text + "\n")
        self.ht.append(f"<p{' class=' + repr(cls) if cls else ''}>{html.escape(text)}</p>")

    def h(self, level: int, text: str) -> None:
        self.md.append("#" * level + " " + text + "\n")
        self.ht.append(f"<h{level}>{html.escape(text)}</h{level}>")

    def table(self, head, rows) -> None:
        self.md.append(_md_table(head, rows))
        self.ht.append(_html_table(head, rows))

    def image(self, path: str, alt: str) -> None:
        self.md.append(f"![{alt}]({os.path.relpath(path, self.out_dir)})\n")
        with open(path, "rb") as f:
            data = base64.b64encode(f.read()).decode()
        self.ht.append(f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">')

    def labelled(self, label: str, text: str, cls: str) -> None:
        """A paragraph led by a bold label: a recommendation, a verdict."""
        self.md.append(f"**{label}:** {text}\n")
        self.ht.append(f"<p class='{cls}'><b>{label}:</b> {html.escape(text)}</p>")

    def warnings(self, items: list[str]) -> None:
        self.md.append("\n".join(f"- {w}" for w in items) + "\n")
        self.ht.append("<div class='warn'><ul>" + "".join(f"<li>{html.escape(w)}</li>" for w in items) + "</ul></div>")

    def write(self, title: str) -> list[str]:
        """report.md and report.html in out_dir, under their temporary names until complete."""
        md_path = os.path.join(self.out_dir, "report.md")
        html_path = os.path.join(self.out_dir, "report.html")
        output.write_text(md_path, "\n".join(self.md))
        output.write_text(html_path, f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
                          f"</title><style>{CSS}</style></head><body>\n" + "\n".join(self.ht) + "\n</body></html>\n")
        return [md_path, html_path]


def write(out_dir: str, runs: list[Run], table: list[CapacityRow], recs: list[Recommendation],
          images: dict[str, list[str]], overlays: dict[str, list[str]], warnings: list[str], opts: Options,
          title: str | None, study=None) -> list[str]:
    """images: run slug -> [png paths]; overlays: scenario -> [png paths]."""
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    heading = title or "CredHub headroom report"
    slo = f"p{opts.slo_percentile:g} \u2264 {opts.slo_s * 1000:g} ms"
    doc = Document(out_dir)
    para, h, table_ = doc.para, doc.h, doc.table

    h(1, heading)
    para(f"Generated {now} by headroom-plot from {len(runs)} run(s). SLO: {slo}; steps with more than "
         f"{opts.max_error_rate:.1%} failed requests do not count as capacity.")
    note = credhubperf.note([x for r in runs for x in r.not_added])
    if note:
        para("Note: " + note + ".", cls="warn")

    scenarios = sorted({r.scenario for r in runs})
    h(2, "Capacity")
    for scen in scenarios:
        _scenario(doc, scen, len(scenarios) > 1, table, recs, study, overlays)

    if study is not None and study.workload is not None:
        _headroom(doc, study.workload, overlays.get("(workload)", []))

    h(2, "Warnings")
    if warnings:
        doc.warnings(warnings)
    elif any(s.unjudged for r in runs for s in r.steps):
        para("None, but some steps were too short to judge steady (see each run's steadiness line).")
    else:
        para("None: every step was judged steady, no tester was short of CPU, every tester loaded every step for "
             "its whole slot (no incomplete step), no errors over the limit, and Little's law held.")

    h(2, "Request details")
    table_(*request_details(runs))

    for r in runs:
        _run_section(doc, r, opts, images)

    return doc.write(heading)


def _headroom(doc, wl: dict, images: list[str]) -> None:
    """Headroom against production: each capacity to size with over the production peak (workload.py)."""
    doc.h(2, "Headroom against production")
    p99 = (f", 99th percentile of seconds {wl['p99_second_rps']:,.0f} req/s"
           if wl.get("p99_second_rps") is not None else "")
    at = f" at {wl['peak_at']}" if wl.get("peak_at") else ""
    growth = wl.get("growth_per_year")
    doc.para(f"Production peak (the busiest second of {wl['file']}){at}: {wl['peak_rps']:,.0f} req/s{p99}. "
             "Headroom is the capacity to size with divided by that peak; "
             + (f"the time is how long a growth of {growth * 100:g} % a year takes the peak there. "
                if growth else "give --growth (e.g. 40%/yr) for the time it lasts. ")
             + f"The recommendation sizes for {wl['target_rps']:,.0f} req/s (the peak"
             + (f" after a year at {growth * 100:g} %)." if growth else ")."))
    rows = [[r["scenario"], r["group"], _num(r["size_with_rps"]), r["text"],
             "yes" if r["replays_workload"] else "no: another mix"] for r in wl["headroom"]]
    if rows:
        doc.table(["scenario", "instances", "capacity to size with (req/s)", "headroom", "replays this workload"],
                  rows)
        if not any(r["replays_workload"] for r in wl["headroom"]):
            doc.para("No run replayed this workload (credhub-perf run --workload): the headroom is that of the "
                     "mix the runs sent, not production's.", cls="warn")
    else:
        doc.para("No capacity to size with: no headroom can be given.", cls="warn")
    for p in images:
        if p.endswith(".png"):
            doc.image(p, "production arrivals by type")


def _scenario(doc, scen: str, several: bool, table: list[CapacityRow], recs: list[Recommendation], study,
              overlays: dict[str, list[str]]) -> None:
    """One scenario's capacity table, its caveats, the recommendation, the scalability fit and the overlays."""
    para, h, table_, image = doc.para, doc.h, doc.table, doc.image
    if several:
        h(3, f"Scenario: {scen}")
    table_(*capacity(table, scen))
    for c in table:
        if c.scenario == scen and c.capacity_is_lower_bound and c.max_tput is not None:
            what = f"{c.group} instance(s)" if c.instances is not None else f"label {c.group}"
            para(f"LOWER BOUND for {what}: the capacity is at least {_num(c.max_tput)} req/s: steps at a higher "
                 f"load met the SLO but were not counted ({c.lower_bound_reason}). The table and the "
                 "recommendation use this figure, so they are conservative; the scalability fit leaves it out.",
                 cls="warn")
    missing = [c for c in table if c.scenario == scen and c.max_tput is None and c.why_none]
    if missing:
        kept = [c.group for c in table if c.scenario == scen and c.instances and c.max_tput]
        for c in missing:
            what = f"{c.group} instance(s)" if c.instances is not None else f"label {c.group}"
            para(f"NO CAPACITY for {what}: {c.why_none}. That row has no figures, and "
                 + (f"the scalability fit and the recommendation use only {', '.join(kept)} instance(s)."
                    if kept else "no instance count is left for the scalability fit and the recommendation."),
                 cls="warn")
    opened = [c.group for c in table if c.scenario == scen and c.sized_by == "open loop" and c.size_with is not None]
    for c in table:
        if c.scenario == scen and c.sized_by == "open loop" and c.size_with is None and c.max_tput is not None:
            why = (c.no_figure or openloop.NO_FIGURE).removeprefix("no figure to size with ")
            para(f"NO FIGURE TO SIZE WITH for {c.group} instance(s) {why}: see each run's headline. The "
                 "closed-loop capacity in the table is not a rate open arrivals were shown to hold.", cls="warn")
    if opened:
        para(f"SIZE WITH THE OPEN-LOOP FIGURE for {', '.join(opened)} instance(s): fixed-rate steps after the "
             "closed-loop ramp held the SLO only below its capacity (applications' requests arrive whether "
             "or not the last one finished, and queue behind the target's pauses). The scalability plot draws "
             "these figures apart from the closed-loop capacities, and the recommendation holds each count to "
             "them.", cls="warn")
    for rec in recs:
        if rec.scenario == scen:
            doc.labelled("Recommendation", rec.text, "rec")
    if study is not None and scen in study.scenarios:
        _scalability(study.scenarios[scen], para, table_)
        _bottlenecks(study.scenarios[scen], para, table_)
    for p in overlays.get(scen, []):
        if p.endswith(".png"):
            kind = next((k for k in ("scalability", "utilisation") if os.path.basename(p).startswith(k)),
                        "overlay")
            image(p, f"{kind} {scen}")


def _run_section(doc, r: Run, opts: Options, images: dict[str, list[str]]) -> None:
    """One run's section: its headline and caveats, the step table, figures by request, errors and images."""
    para, h, table_, image = doc.para, doc.h, doc.table, doc.image
    h(2, f"Run: {r.title()}")
    if r.incomplete_reason:
        para(f"INCOMPLETE RUN: {r.incomplete_reason}. Every step undercounts the load the target carried, "
             "so this run gives no capacity and no knee.", cls="warn")
    head = warmup_headline(r.meta)
    if head:
        para(head[0].upper() + head[1:] + ".", cls="warn")
    if r.capacity_label:
        para("Capacity label (credhub-perf): " + r.capacity_label + ".", cls="warn")
    if r.confirmation is not None and r.confirmation.headline:
        para("Headline (credhub-perf): " + r.confirmation.headline + ".",
             cls=None if r.confirmation.agree else "warn")
    if r.not_judged:
        para("Steadiness: " + r.not_judged + "; " + ("they count as capacity: the run warm-up was judged steady."
                                                    if warmup_steady(r.meta) else
                                                    "they are not counted as capacity: " + warmup_note(r.meta)
                                                    + "."), cls="warn")
    para(f"Source: {r.path}. Max throughput within the SLO: "
         + ("none (incomplete run); knee: none (incomplete run)" if r.incomplete_reason else
            (r.capacity_text() if r.capacity_is_lower_bound else f"{_num(r.max_tput)} req/s ({r.max_tput_how})")
            + "; knee: "
            + (f"{r.knee.throughput:,.0f} req/s" if r.knee and r.knee.throughput is not None
            else ("not reached in the measured range" + (f" (the fit, EXTRAPOLATED beyond the measured "
                                                         f"{r.knee.measured_max:,.0f} req/s, places it near "
                                                         f"{r.knee.estimate:,.0f} req/s)"
                  if r.knee and r.knee.estimate else ""))))
         + ". Little's law residual = (workers - throughput x mean latency) / workers, closed-loop steps. "
         + "Flags: not steady (drifted within the step), tester-bound (a tester short of CPU), incomplete (some "
         "tester did not load the step for its whole slot): not counted as capacity; not judged steady (too "
         "short or too few requests to tell): counted only after a run warm-up judged steady. "
         + warmup_text(r.meta))
    table_(*step_table(r, opts))
    verdict = utilisation.from_summary(r.summary).verdict
    if verdict:
        para("Where capacity ends (credhub-perf, from the target's samples): " + verdict + ".")
    if r.by_request:
        own = "; ".join(f"{k} <= {v * 1000:g} ms" for k, v in sorted(r.slo_by_request.items()))
        para(f"Per request type (a mix: every type under the same load; SLO p{opts.slo_percentile:g} "
             f"<= {opts.slo_s * 1000:g} ms for each" + (f", except {own}" if own else "")
             + "). A step is within the SLO only when every type meets its bound, so the capacity "
             "above is the highest load at which every type does:")
        table_(*request_table(r, opts))
    if r.error_messages:
        table_(["most common error messages (digits shown as N)", "count (sampled)"],
               [[m, str(c)] for m, c in r.error_messages])
    for p in images.get(r.slug, []):
        if p.endswith(".png"):
            image(p, os.path.basename(p))
