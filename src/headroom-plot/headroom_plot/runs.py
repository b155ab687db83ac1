"""Runs: a run directory (meta.json + results*.csv + summary.json) or a bare CSV, analysed."""
from __future__ import annotations

import glob
import json
import math
import os
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from . import analysis, credhubperf, openloop
from .csvread import REQUEST_TYPES, InputError, Table, read_csv


@dataclass
class Options:
    slo_percentile: float = 95.0
    slo_s: float = 0.100
    max_error_rate: float = 0.01
    window_s: float = 1.0
    knee_elasticity: float = 1.0
    littles_tolerance: float = 0.10
    # The production peak (req/s) from --workload: the operating point the plots mark; None without.
    peak_rps: float | None = None


@dataclass
class Run:
    path: str
    meta: dict
    scenario: str
    label: str
    instances: int | None
    files: list[Table]
    # rows, sorted by step
    latency: np.ndarray
    offset: np.ndarray
    error: np.ndarray
    step: np.ndarray
    x: np.ndarray                      # throughput of the row's window (req/s)
    steps: list[analysis.Step]
    # windows (for time strips)
    win_t0: np.ndarray
    win_width: np.ndarray
    win_count: np.ndarray
    win_errors: np.ndarray
    win_max: np.ndarray
    win_step: np.ndarray
    has_failures_column: bool
    warnings: list[str] = field(default_factory=list)
    knee: analysis.Knee | None = None
    max_tput: float | None = None
    max_tput_how: str = ""
    no_capacity_why: str = ""   # no_capacity_reason: steps met the SLO, none counts, or an incomplete run
    # Steps at a higher load than the capacity's step met the SLO but were not counted: the capacity is at
    # least max_tput (summary.json's capacity_is_lower_bound); why, and the most such a step carried.
    lower_bound_reason: str = ""
    lower_bound_top: float | None = None
    not_judged: str = ""        # analysis.not_judged_text: steps too short to judge steady
    # Testers meta.json names that left no results file (missing_testers): every step lacks their load and
    # the run gives no capacity. summary.json's verdict when it was computed from these files, else ours.
    incomplete_reason: str = ""
    error_messages: list[tuple[str, int]] = field(default_factory=list)
    slug: str = ""
    # A mixed run's figures per step and request type (by_request_figures); empty for one type.
    by_request: list[dict] = field(default_factory=list)
    # A mixed run's own latency bounds per request type (meta.json slo.latency_by_request_s); a type
    # not listed is held to the run's SLO.
    slo_by_request: dict = field(default_factory=dict)
    # The plots' time axis (analysis.time_axis): start, end, and why it ends before the last request.
    time_axis: tuple = (0.0, 1.0, "")
    csvs: list[str] = field(default_factory=list)
    summary: dict | None = None           # the run directory's summary.json
    # credhub-perf summary --json of the run at an SLO: (slo, document); see credhub_doc.
    credhub: tuple | None = None
    # The open-loop confirmation's steps and rows, moved out of the ramp's, with credhub-perf's verdict
    # (openloop.py); None when the run had none.
    confirmation: openloop.Confirmation | None = None
    # With the run warm-up off: why the capacity may be a cold target's, credhub-perf's verdict (summary.json
    # capacity_label, results/coldlabel.go); "" when the warm-up ran or the steps show the target warm.
    capacity_label: str = ""
    # What credhub-perf would have added had it been found (credhubperf.note says it once for all runs).
    not_added: list[tuple[str, str]] = field(default_factory=list)  # (what, run.name())

    @property
    def total(self) -> int:
        return len(self.latency)

    @property
    def capacity_is_lower_bound(self) -> bool:
        return bool(self.lower_bound_reason) and self.max_tput is not None

    def name(self) -> str:
        """The run in warnings: its scenario and its label."""
        return f"{self.scenario} run {self.label}"

    def capacity_text(self, fmt: str = "{:,.0f}") -> str:
        """The headline capacity: "812 req/s", or "at least 812 req/s (steps up to 1,020 req/s within the
        SLO were not counted: <why>)" (results.Summary.CapacityText); "" without a capacity."""
        if self.max_tput is None:
            return ""
        if not self.capacity_is_lower_bound:
            return fmt.format(self.max_tput) + " req/s"
        return (f"at least {fmt.format(self.max_tput)} req/s (steps up to {fmt.format(self.lower_bound_top)} req/s "
                f"within the SLO were not counted: {self.lower_bound_reason})")

    def _instances_text(self) -> str | None:
        return instances_text(self.instances)

    def _label_adds(self) -> bool:
        return label_adds(self.label, self.instances)

    def title(self) -> str:
        parts = [f"CredHub {self.scenario}" if self.scenario != "custom" else "custom requests"]
        if self._instances_text():
            parts.append(self._instances_text())
        if self._label_adds():
            parts.append(self.label)
        when = self.meta.get("started_at")
        if when:
            parts.append(str(when).replace("T", " ")[:16] + " UTC")
        return " \u00b7 ".join(parts)

    def legend(self) -> str:
        n = self._instances_text()
        if n is None:
            return self.label
        return f"{n} ({self.label})" if self._label_adds() else n


def instances_text(instances: int | None) -> str | None:
    if instances is None:
        return None
    return f"{instances} instance{'s' if instances != 1 else ''}"


def label_adds(label: str, instances: int | None) -> bool:
    """Whether a run's label says more than its instance count.

    A label like "2-instances" (the BOSH scale-credhub ops file's default)
    only repeats the count: titles and legends show it once."""
    n = instances_text(instances)
    return bool(label) and (n is None or label.replace("-", " ").replace("_", " ").lower() != n)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _clean_text(v: str) -> str:
    """A string from JSON as text that can be drawn and written: a lone surrogate (JSON allows
    "\\udcff") becomes U+FFFD, a control character a space."""
    return _CONTROL.sub(" ", v.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace"))


# meta.json and summary.json are a few KB; these bounds are far beyond any credhub-perf writes and
# keep a damaged or hostile file to one line: without them a 24 MB meta.json of strings runs for
# minutes in gigabytes, and a few hundred levels of nesting overflow the recursion limit.
MAX_JSON_BYTES = 4 << 20
MAX_JSON_DEPTH = 32
MAX_JSON_INT = 2 ** 53  # integers beyond lose their value in float64, as in any JSON reader but Python's
MAX_TEXT = 200          # characters of a label or scenario: names drawn in titles and legends


class _Refused:
    """A number json.loads met that no figure may hold (NaN, Infinity, 1e999, a 5000-digit integer),
    kept in place so the walk after the parse can name its key."""

    __slots__ = ("text", "why")

    def __init__(self, text: str, why: str):
        self.text, self.why = text, why


def _json_int(text: str):
    # int() of more than 4300 digits raises (CPython's limit): the length is checked first
    if len(text.lstrip("-")) > 16 or abs(int(text)) > MAX_JSON_INT:
        return _Refused(text, "is beyond \u00b12^53 (integers larger than float64 holds exactly)")
    return int(text)


def _json_float(text: str):
    v = float(text)
    return v if math.isfinite(v) else _Refused(text, "is beyond the range of a float64")


def _json_constant(text: str):
    return _Refused(text, "is not a number (JSON has no NaN or Infinity)")


def _walk(path: str, data):
    """data with its strings cleaned (_clean_text), walked without recursion; InputError naming the key of
    the first refused number (in file order) or of a level deeper than MAX_JSON_DEPTH."""
    root = [None]
    todo = [(data, root, 0, "", 0)]  # (value, its container, its key there, its name, depth)
    while todo:
        v, parent, key, where, depth = todo.pop()
        if depth > MAX_JSON_DEPTH:
            where = where if len(where) <= 60 else where[:57] + "..."
            raise InputError(f"{path}: {where}: nested deeper than {MAX_JSON_DEPTH} levels: not a credhub-perf "
                             "file; fix or remove the file")
        if isinstance(v, _Refused):
            raise InputError(f"{path}: {where or 'the value'}: {v.text[:40]} {v.why}; write a finite number "
                             "(or null), or remove the file")
        if isinstance(v, str):
            parent[key] = _clean_text(v)
        elif isinstance(v, list):
            parent[key] = new = [None] * len(v)
            todo.extend(reversed([(x, new, i, f"{where}[{i}]", depth + 1) for i, x in enumerate(v)]))
        elif isinstance(v, dict):
            parent[key] = new = {}
            items = []
            for k, x in v.items():
                k = _clean_text(k)
                new[k] = None  # the key's place, in file order
                items.append((x, new, k, f"{where}.{k}" if where else k, depth + 1))
            todo.extend(reversed(items))
        else:
            parent[key] = v
    return root[0]


def _load_json(path: str) -> dict:
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_JSON_BYTES + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    if len(raw) > MAX_JSON_BYTES:
        raise InputError(f"{path}: larger than {MAX_JSON_BYTES >> 20} MiB: not a credhub-perf file (they are a "
                         "few KB); fix or remove the file")
    try:
        data = json.loads(raw.decode("utf-8"), parse_int=_json_int, parse_float=_json_float,
                          parse_constant=_json_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); fix or remove the file") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text, so not JSON; fix or remove the file") from None
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply; fix or remove the file") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}:1: expected a JSON object")
    return _walk(path, data)


# The values of meta.json and summary.json that reach a figure, a title or a loop, and their ranges:
# (key, type, low, low included, high, what to write instead). "steps[]" is every element of steps.
# A key that is absent or null keeps its default; flags of summary.json's steps (steady, tester_bound,
# tester_cpu...) of the wrong type or range are ignored instead (apply_step_flags).
META_RULES = (
    ("scenario", str, 0, True, MAX_TEXT, "a scenario name such as get"),
    ("label", str, 0, True, MAX_TEXT, "a short run label"),
    ("instances", int, 1, True, 10_000, "the number of CredHub instances, or null"),
    ("slo.percentile", float, 0.0, False, 100.0, "the SLO percentile, e.g. 95"),
    ("slo.latency_s", float, 0.0, False, 10_000.0, "the SLO bound in seconds, e.g. 0.1"),
    ("steps[].concurrency", int, 1, True, 1_000_000, "the step's worker count"),
    ("steps[].rate", float, 0.0, True, 1e9, "the step's target rate in req/s (0: closed loop)"),
    ("steps[].requests", int, 0, True, MAX_JSON_INT, "the step's request count"),
    ("steps[].duration_s", float, 0.0, True, 1e7, "the step's duration in seconds"),
    ("warmup.duration_s", float, 0.0, True, 1e7, "the warm-up's duration in seconds"),
    ("warmup.requests", int, 0, True, MAX_JSON_INT, "the warm-up's request count"),
)
SUMMARY_RULES = (
    ("steps[].concurrency", int, 1, True, 1_000_000, "the step's worker count"),
    ("steps[].rate", float, 0.0, True, 1e9, "the step's target rate in req/s (0: closed loop)"),
    ("steps[].requests", int, 0, True, MAX_JSON_INT, "the step's request count"),
    ("steps[].throughput", float, 0.0, True, 1e9, "the step's throughput in req/s"),
    # credhub-perf's open-loop verdict and sizing (openloop.py): a damaged one would size a side wrongly
    ("open_loop.capacity", float, 0.0, True, 1e9, "what open arrivals hold in req/s, or null"),
    ("open_loop.closed_loop", float, 0.0, True, 1e9, "the ramp's capacity in req/s, or null"),
    ("open_loop.held", float, 0.0, True, 1e9, "the highest rate open arrivals held in req/s, or null"),
    ("open_loop.agree", bool, 0, True, 0, "true or false"),
    ("open_loop.note", str, 0, True, 10_000, "credhub-perf's note"),
    ("size_with", float, 0.0, True, 1e9, "the capacity to size with in req/s, or null"),
    ("size_with_kind", str, 0, True, 20, "closed_loop or open_loop"),
    ("closed_loop_capacity", float, 0.0, True, 1e9, "the closed-loop ramp's capacity in req/s, or null"),
    ("headline", str, 0, True, 10_000, "credhub-perf's headline"),
    ("capacity_label", str, 0, True, 10_000, "credhub-perf's cold-target label"),
)


def check_values(path: str, doc: dict, rules) -> None:
    """InputError "FILE: key: problem; fix" for the first value of `rules` that is of the wrong type or out of
    its range in the parsed JSON object doc."""
    for key, kind, lo, lo_in, hi, fix in rules:
        found = [("", doc)]
        for part in key.split("."):
            each = part.endswith("[]")
            name = part[:-2] if each else part
            nxt = []
            for where, obj in found:
                if not isinstance(obj, dict):
                    raise InputError(f"{path}: {where}: expected a JSON object; fix or remove the file")
                v = obj.get(name)
                at = f"{where}.{name}" if where else name
                if v is None:
                    continue
                if each:
                    if not isinstance(v, list):
                        raise InputError(f"{path}: {at}: expected a list; fix or remove the file")
                    nxt += [(f"{at}[{i}]", x) for i, x in enumerate(v)]
                else:
                    nxt.append((at, v))
            found = nxt
        for where, v in found:
            _check_value(path, where, v, kind, lo, lo_in, hi, fix)


def _check_value(path, where, v, kind, lo, lo_in, hi, fix) -> None:
    shown = json.dumps(v)[:40]
    if kind is bool:
        if not isinstance(v, bool):
            raise InputError(f"{path}: {where}: {shown} is not true or false; write {fix}")
        return
    if kind is str:
        if not isinstance(v, str):
            raise InputError(f"{path}: {where}: {shown} is not a string; write {fix} in quotes")
        if len(v) > hi:
            raise InputError(f"{path}: {where}: {len(v)} characters, more than {hi}; write {fix}")
        return
    number = isinstance(v, (int, float)) and not isinstance(v, bool)
    if not number or (kind is int and not isinstance(v, int)):
        raise InputError(f"{path}: {where}: {shown} is not {'an integer' if kind is int else 'a number'}; "
                         f"write {fix}")
    if not ((v >= lo if lo_in else v > lo) and v <= hi):
        rng = f"{'[' if lo_in else '('}{lo:g}, {hi:g}]"
        raise InputError(f"{path}: {where}: {shown} is out of range {rng}; write {fix}")


def resolve(arg: str) -> tuple[str, dict, list[str], dict | None]:
    """Argument -> (run path, meta, CSV files, summary or None)."""
    if not os.path.exists(arg):
        raise InputError(f"{arg}: no such file or directory; pass run directories or results CSV files")
    if os.path.isdir(arg):
        merged = os.path.join(arg, "results.csv")
        # `credhub-perf merge` writes results.csv beside the per-tester files: read one or the other
        csvs = [merged] if os.path.exists(merged) else sorted(glob.glob(os.path.join(arg, "results-*.csv")))
        if not csvs:
            raise InputError(f"{arg}: no results.csv or results-<tester>.csv in this directory; "
                             "pass a run directory written by credhub-perf, or the CSV file itself")
        meta_path = os.path.join(arg, "meta.json")
        sp = os.path.join(arg, "summary.json")
        if not os.path.exists(meta_path):
            # A tester other than 0 writes meta-<i>.json and summary-<i>.json (the errand's report on
            # that tester's VM reads its run directory as it is): its own files stand in for tester 0's.
            own = sorted(glob.glob(os.path.join(arg, "meta-*.json")))
            if len(own) == 1 and re.fullmatch(r"meta-[0-9]+\.json", os.path.basename(own[0])):
                meta_path = own[0]
                if not os.path.exists(sp):
                    sp = os.path.join(arg, "summary-" + os.path.basename(own[0])[len("meta-"):])
        meta = load_meta(meta_path) if os.path.exists(meta_path) else {}
        summary = load_summary(sp) if os.path.exists(sp) else None
        return arg, meta, csvs, summary
    here = os.path.dirname(os.path.abspath(arg))
    meta_path = os.path.join(here, "meta.json")
    meta = load_meta(meta_path) if os.path.exists(meta_path) else {}
    return arg, meta, [arg], None


def load_meta(path: str) -> dict:
    meta = _load_json(path)
    check_values(path, meta, META_RULES)
    return meta


def load_summary(path: str) -> dict:
    summary = _load_json(path)
    check_values(path, summary, SUMMARY_RULES)
    return summary


def _fix_segment_offsets(t: Table) -> None:
    """Concatenated hey outputs each count offset from their own start: lay the blocks end to end."""
    seg = t.segment
    if t.offset is None or len(seg) == 0 or seg[-1] == seg[0]:
        return
    bounds = np.concatenate(([0], np.flatnonzero(np.diff(seg)) + 1, [len(seg)]))
    end_prev = None
    for a, b in zip(bounds[:-1], bounds[1:]):
        off = t.offset[a:b]
        lo = float(off.min())
        if end_prev is not None and lo < end_prev - 1e-6:
            off += end_prev - lo
        end_prev = float((off + t.latency[a:b]).max())


_TESTER_FILE = re.compile(r"^results-(\d+)\.csv$")


def _file_tester(path: str, position: int) -> int:
    """The tester index a results-<i>.csv names, else its position among the files (as in Go)."""
    m = _TESTER_FILE.match(os.path.basename(path))
    return int(m.group(1)) if m else position


def merged_steps(path: str, doc: dict, csvs: list[str], sids: list[np.ndarray]) -> list[dict]:
    """Renumbers each file's rows (sids: their step within the file, as analysis.assign_steps numbers them) to
    the merged step credhub-perf put them in (doc: its summary --json), and returns those steps (summary.json's
    step objects). InputError when credhub-perf's steps of a file are not the ones read here."""
    steps = doc["summary"].get("steps")
    if not isinstance(steps, list) or len(steps) != len(doc["steps"]):
        raise InputError(f"{path}: credhub-perf summary --json lists no steps to merge by: {credhubperf.FIX}")
    names = [os.path.basename(c) for c in csvs]
    maps = [np.full(int(sid.max()) + 1 if len(sid) else 0, -1, dtype=np.int64) for sid in sids]
    rows = [np.bincount(sid) if len(sid) else np.zeros(0, dtype=np.int64) for sid in sids]
    for k, step in enumerate(doc["steps"]):
        for part in step.get("parts") or []:
            f = names.index(part.get("name")) if part.get("name") in names else -1
            local = part.get("local_step")
            if f < 0 or not isinstance(local, int) or not 0 <= local < len(maps[f]) \
                    or maps[f][local] >= 0 or rows[f][local] != part.get("rows"):
                raise InputError(f"{path}: credhub-perf and headroom-plot read different steps from "
                                 f"{part.get('name')}: use the credhub-perf of this checkout ({credhubperf.FIX})")
            maps[f][local] = k
    for f, m in enumerate(maps):
        if np.any(m < 0):
            raise InputError(f"{path}: credhub-perf merged no step of {names[f]} at its step {int(np.argmin(m)) + 1}: "
                             f"use the credhub-perf of this checkout ({credhubperf.FIX})")
        sids[f][:] = m.astype(sids[f].dtype)[sids[f]]
    return steps


def _slo_key(opts: Options) -> tuple:
    return opts.slo_percentile, opts.slo_s, opts.max_error_rate


def credhub_doc(run: Run, opts: Options, why: str) -> dict:
    """credhub-perf summary --json of the run at opts' SLO, run once per run and SLO (why: what for, named
    when credhub-perf cannot be found)."""
    if run.credhub is None or run.credhub[0] != _slo_key(opts):
        run.credhub = (_slo_key(opts), credhubperf.summary_doc(run.path, run.csvs, *_slo_key(opts), why))
    return run.credhub[1]


def computed_from(summary: dict | None, csvs: list[str]) -> bool:
    """Whether summary.json was computed by credhub-perf from these very files (its `sources`)."""
    names = [os.path.basename(c) for c in csvs]
    return isinstance(summary, dict) and isinstance(summary.get("sources"), list) \
        and sorted(map(str, summary["sources"])) == sorted(names)


def credhub_summary(run: Run, opts: Options, why: str) -> dict:
    """credhub-perf's summary of the run at opts' SLO: its summary.json when computed from these very files at
    that SLO, else credhub-perf summary --json's."""
    if computed_from(run.summary, run.csvs) and credhubperf.slo_matches(run.summary, *_slo_key(opts)):
        return run.summary
    return credhub_doc(run, opts, why)["summary"]


def _advice(v) -> list[str]:
    """summary.json's tester_bound_advice when it is a list of strings, else none."""
    return list(v) if isinstance(v, list) and v and all(isinstance(a, str) for a in v) else []


def _row_errors(t: Table) -> np.ndarray:
    err = np.zeros(len(t), dtype=bool)
    if t.status is not None:
        err |= (t.status == 0) | (t.status >= 400)
    if t.error is not None:
        err |= t.error
    return err


def load_run(arg: str, opts: Options) -> Run:
    """A run directory or CSV, read, merged across testers, cut into steps and judged."""
    path, meta, csvs, summary = resolve(arg)
    tables, warnings = _read_tables(path, csvs)
    m = _merge_testers(path, tables, csvs, opts, warnings)
    run = _build_run(path, meta, tables, m, opts, warnings, csvs, summary)
    n_conf = len(run.confirmation.steps) if run.confirmation else 0
    for t in tables:  # keep the parsed columns only where they are still needed
        t.latency = t.offset = t.start = t.status = t.concurrency = t.rate = t.sched_lag = t.error = None
        t.segment = None
    _judge(run, opts, m["slots"], m["doc"], summary, n_conf)
    return run


def _read_tables(path: str, csvs: list[str]):
    """Every results CSV of a run, on one clock: (tables, warnings)."""
    tables = [read_csv(c) for c in csvs]
    warnings: list[str] = []
    for t in tables:
        warnings += t.warnings
        _fix_segment_offsets(t)
    formats = {t.format for t in tables}
    if len(formats) > 1:
        raise InputError(f"{path}: its CSV files mix formats ({', '.join(sorted(formats))}); "
                         "plot them as separate runs")

    # Align testers on wall-clock time: each counts offset from its own start.
    starts = [t.start0 for t in tables]
    if len(tables) > 1:
        if all(s is not None for s in starts):
            base = min(starts)
            for t, s in zip(tables, starts):
                t.offset = t.offset + (s - base)
        else:
            warnings.append(f"{path}: tester files have no start-time column, merged without clock alignment")
    return tables, warnings


def _merge_testers(path: str, tables: list, csvs: list[str], opts: Options, warnings: list[str]) -> dict:
    """The testers' rows as one run's columns, grouped by step, with each step's concurrency and rate
    (conc_of, rate_of: per step, one entry per tester) and credhub-perf's merge (slots, doc) when
    several credhub-perf testers ran."""
    lat, off, err, step, conc_of, rate_of, lag, req = [], [], [], [], {}, {}, [], []
    nsteps = []
    sids = [analysis.assign_steps(t.segment, t.concurrency, t.rate, t.offset) for t in tables]
    for t, sid in zip(tables, sids):
        n = int(sid.max()) + 1 if len(sid) else 0
        if n > MAX_STEPS:
            # Every step is a point, a band and a bootstrap column: 20000 one-row steps ran out of
            # memory after minutes. A ramp or a capacity search has tens.
            raise InputError(f"{t.path}: {n:,} steps (a new step at every change of concurrency and rate, or "
                             f"repeated header), more than the {MAX_STEPS:,} headroom-plot draws; split the file "
                             "into runs, or check that its concurrency and rate columns are not damaged")
    # Several credhub-perf testers: their steps are merged by slot, credhub-perf's rule (docs/design.md,
    # "Steps of several testers"), which its summary --json reports step by step.
    slots = doc = None
    if len(tables) > 1 and all(t.concurrency is not None and t.rate is not None for t in tables):
        doc = credhubperf.summary_doc(path, csvs, *_slo_key(opts), "merging the steps of several testers")
        slots = merged_steps(path, doc, csvs, sids)
        warnings += [str(w) for w in doc.get("merge_warnings") or []]
        for k, g in enumerate(slots):
            conc_of[k] = [_int(g.get("concurrency"))]
            rate_of[k] = [float(g["rate"]) if isinstance(g.get("rate"), (int, float)) else None]
    for t, sid in zip(tables, sids):
        nsteps.append(int(sid.max()) + 1 if len(sid) else 0)
        if slots is None:  # by position: the concurrency and rate of each local step, from any of its rows
            idx_any = np.zeros(int(sid.max()) + 1, dtype=np.int64)
            idx_any[sid] = np.arange(len(sid))
            for k in range(len(idx_any)):
                i = idx_any[k]
                c = int(t.concurrency[i]) if t.concurrency is not None else None
                r = float(t.rate[i]) if t.rate is not None else None
                conc_of.setdefault(k, []).append(c)
                rate_of.setdefault(k, []).append(r)
        lat.append(t.latency)
        off.append(t.offset)
        err.append(_row_errors(t))
        step.append(sid)
        lag.append(t.sched_lag if t.sched_lag is not None else None)
        req.append(t.request if t.request is not None else np.full(len(t.latency), -1, dtype=np.int8))
    if len(set(nsteps)) > 1 and slots is None:
        warnings.append(f"{path}: testers ran different numbers of steps ({nsteps}); merged step by step in order")

    latency = np.concatenate(lat) if len(lat) > 1 else lat[0]
    offset = np.concatenate(off) if len(off) > 1 else off[0]
    error = np.concatenate(err) if len(err) > 1 else err[0]
    steps_id = np.concatenate(step) if len(step) > 1 else step[0]
    sched = None
    if all(x is not None for x in lag):
        sched = np.concatenate(lag) if len(lag) > 1 else lag[0]
    request = np.concatenate(req) if len(req) > 1 else req[0]
    del lat, off, err, step, lag, req
    if len(steps_id) > 1 and np.any(np.diff(steps_id) < 0):
        order = np.argsort(steps_id, kind="stable")
        latency, offset, error, steps_id = latency[order], offset[order], error[order], steps_id[order]
        request = request[order]
        if sched is not None:
            sched = sched[order]
        del order

    return dict(latency=latency, offset=offset, error=error, steps_id=steps_id, sched=sched, request=request,
                conc_of=conc_of, rate_of=rate_of, slots=slots, doc=doc)


def _build_run(path: str, meta: dict, tables: list, m: dict, opts: Options, warnings: list[str], csvs: list[str],
               summary) -> Run:
    """The Run of merged columns m: each step's figures, its throughput windows and figures by request."""
    latency, offset, error, steps_id, sched, request = (m[k] for k in ("latency", "offset", "error", "steps_id",
                                                                         "sched", "request"))
    conc_of, rate_of, doc = m["conc_of"], m["rate_of"], m["doc"]
    slo_by_request, w = request_bounds(path, meta)
    warnings += w
    meta_steps = meta.get("steps") if isinstance(meta.get("steps"), list) else None
    bounds = np.concatenate(([0], np.flatnonzero(np.diff(steps_id)) + 1, [len(steps_id)]))
    x = np.empty(len(latency), dtype=np.float32)
    steps: list[analysis.Step] = []
    wt0, wwidth, wcount, werr, wmax, wstep = [], [], [], [], [], []
    by_request: list[dict] = []
    for k, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        concs = conc_of.get(k, [None])
        rates = rate_of.get(k, [None])
        conc = sum(concs) if all(c is not None for c in concs) else None
        rate = sum(rates) if all(r is not None for r in rates) else None
        if conc is None and meta_steps and len(meta_steps) == len(bounds) - 1:
            ms = meta_steps[k] if isinstance(meta_steps[k], dict) else {}
            conc = ms.get("concurrency")
            if rate is None:
                rate = ms.get("rate")
        s = analysis.step_stats(k, latency[a:b], offset[a:b], error[a:b], conc, rate, opts.slo_percentile,
                                None if sched is None else sched[a:b])
        steps.append(s)
        widx, nwin, width = analysis.windows(offset[a:b], s.t0, s.t1, opts.window_s)
        counts = np.bincount(widx, minlength=nwin)
        x[a:b] = counts[widx] / width
        wt0.append(s.t0 + width * np.arange(nwin))
        wwidth.append(np.full(nwin, width))
        wcount.append(counts)
        werr.append(np.bincount(widx, weights=error[a:b], minlength=nwin))
        mx = np.zeros(nwin)
        np.maximum.at(mx, widx, latency[a:b])
        wmax.append(mx)
        wstep.append(np.full(nwin, k))
        by_request += by_request_figures(k, latency[a:b], error[a:b], request[a:b], s.duration_s, opts,
                                         slo_by_request)

    scenario = str(meta.get("scenario") or "custom")
    label = str(meta.get("label") or (os.path.basename(os.path.normpath(path)) if os.path.isdir(path)
                                        else os.path.splitext(os.path.basename(path))[0]))
    inst = meta.get("instances")
    instances = int(inst) if isinstance(inst, (int, float)) and not isinstance(inst, bool) else None
    has_fail = any(t.status is not None or t.error is not None for t in tables)
    msgs = Counter()
    for t in tables:
        msgs.update(_short(m) for m in t.error_messages)
    run = Run(path=path, meta=meta, scenario=scenario, label=label, instances=instances, files=tables,
              latency=latency, offset=offset, error=error, step=steps_id, x=x, steps=steps,
              win_t0=np.concatenate(wt0), win_width=np.concatenate(wwidth), win_count=np.concatenate(wcount),
              win_errors=np.concatenate(werr), win_max=np.concatenate(wmax), win_step=np.concatenate(wstep),
              has_failures_column=has_fail, warnings=warnings, error_messages=msgs.most_common(5),
              by_request=by_request, slo_by_request=slo_by_request, csvs=csvs, summary=summary)
    if doc is not None:
        run.credhub = (_slo_key(opts), doc)
    split_confirmation(run, opts)
    run.time_axis = analysis.time_axis(np.array([s.t0 for s in run.steps]), np.array([s.t1 for s in run.steps]),
                                       run.offset, run.latency)
    if run.time_axis[2]:
        run.warnings.append(f"{label}: {run.time_axis[2]} (drawn to the axis' end and noted on the plots)")
    return run


def _judge(run: Run, opts: Options, slots, doc, summary, n_conf: int) -> None:
    """Each step's verdicts (incomplete, summary.json's flags, steadiness), the capacity, and the run's warnings."""
    meta, path, csvs = run.meta, run.path, run.csvs
    if slots is not None:
        # credhub-perf's verdict on each merged step; the run's own (testers missing) is added below
        whole = doc["summary"].get("incomplete_reason") if doc["summary"].get("incomplete") is True else None
        for s, g in zip(run.steps, slots):
            why = g.get("incomplete_reason") if g.get("incomplete") is True else None
            if isinstance(why, str) and isinstance(whole, str) and whole:
                why = "" if why == whole else why.removeprefix(whole + "; ")
            if why:
                s.incomplete, s.incomplete_reason = True, why
                s.flag_note = "incomplete: " + s.incomplete_reason
    if os.path.isdir(path):
        run.incomplete_reason, w = incomplete_run(path, csvs, summary)
        run.warnings += w
        if run.incomplete_reason:
            for s in run.steps:  # before summary.json's flags, which never clear `incomplete`
                s.incomplete_reason = (run.incomplete_reason + "; " + s.incomplete_reason if s.incomplete
                                       and s.incomplete_reason else run.incomplete_reason)
                s.incomplete = True
                s.flag_note = "incomplete: " + s.incomplete_reason
    if summary is not None:
        run.warnings += apply_step_flags(run.name(), run.steps, openloop.ramp_summary(summary, n_conf))
        if n_conf:
            run.warnings += apply_step_flags(run.name(), run.confirmation.steps,
                                             openloop.conf_summary(summary, n_conf))
    if any(s.tester_bound and not s.tester_bound_advice for s in run.steps):
        # a summary.json without the advice (or with a damaged one): credhub-perf's for the same steps
        theirs = without_credhub_perf(run, "the advice on tester-bound steps", {"summary": {}},
                                      lambda: credhub_doc(run, opts, "the advice on tester-bound steps"))
        theirs = theirs["summary"].get("steps")
        for s, t in (match_summary_steps(run.steps, theirs) or []) if isinstance(theirs, list) else []:
            if s.tester_bound and not s.tester_bound_advice and isinstance(t, dict):
                s.tester_bound_advice = _advice(t.get("tester_bound_advice"))
    if summary is not None:
        stopped = summary.get("stopped")
        # A run that did not finish its plan reads as finished without this line
        # ("stopped after 3 of 8 planned steps (...; cleaned up later by credhub-perf cleanup ...)").
        if isinstance(stopped, str) and stopped.strip():
            run.warnings.append(f"{run.name()}: {stopped.strip()[:400]}")
    warm_steady = warmup_steady(meta)
    for s in run.steps:
        if s.steady is None and not s.unjudged:
            s.unjudged = analysis.unjudged_by_rule(s)
            if s.unjudged:
                s.flag_note = "; ".join(x for x in (s.flag_note, f"not judged steady ({s.unjudged})") if x)
        s.counts_unjudged = warm_steady
    evaluate(run, opts)
    w = meta.get("warmup") if isinstance(meta, dict) else None
    if isinstance(w, dict) and w.get("mode") == "off" and (run.max_tput is not None or run.no_capacity_why):
        label = without_credhub_perf(run, "the cold-target label", {},
                                     lambda: credhub_summary(run, opts, "the cold-target label")).get("capacity_label")
        run.capacity_label = _clean_text(label)[:400] if isinstance(label, str) else ""
    if summary is not None:
        run.warnings += check_summary(run, openloop.ramp_summary(summary, n_conf))
    w = warmup_warning(run.name(), meta)
    if w:
        run.warnings.insert(0, w)


def split_confirmation(run: Run, opts: Options) -> None:
    """Move the open-loop confirmation's steps and rows out of the run, with credhub-perf's verdict on it
    (openloop.py), so the ramp's figures come from the ramp alone."""
    if not openloop.has_both_kinds([s.rate for s in run.steps]):
        return
    doc = without_credhub_perf(run, "the open-loop confirmation", {},
                               lambda: credhub_summary(run, opts, "the open-loop confirmation"))
    idx, warn = openloop.confirmation_indices(run.steps, doc)
    if warn:
        run.warnings.append(f"{run.name()}: {warn}")
    if not doc:
        # No credhub-perf to name and judge the confirmation: its steps still leave the ramp (they are no
        # part of the closed-loop curve), shown without a verdict.
        idx = openloop.trailing_open(run.steps)
    if not idx:
        return
    first = idx[0]
    conf, ramp = openloop.split(run.steps, run.latency, run.offset, run.error, run.step, first)
    run.latency, run.offset, run.error, run.step, run.x = (run.latency[ramp], run.offset[ramp], run.error[ramp],
                                                           run.step[ramp], run.x[ramp])
    keep = run.win_step < first
    run.win_t0, run.win_width, run.win_count = run.win_t0[keep], run.win_width[keep], run.win_count[keep]
    run.win_errors, run.win_max, run.win_step = run.win_errors[keep], run.win_max[keep], run.win_step[keep]
    run.by_request = [b for b in run.by_request if b["step"] < first]
    run.steps = run.steps[:first]
    openloop.attach(conf, doc)
    run.confirmation = conf


# Steps of one results file at most (see load_run).
MAX_STEPS = 1000


# A meta.json's largest `testers` believed (results.maxTesters): a hostile value must not list millions.
MAX_TESTERS = 1000


def missing_testers(planned: int, have: set) -> list[int]:
    """The testers of a run of `planned` (meta.json's `testers`) that left no results file, in order
    (results.MissingTesters in Go)."""
    return [t for t in range(planned) if t not in have]


def missing_testers_reason(planned: int, missing: list[int]) -> str:
    """The incomplete_reason of a run whose testers `missing` (of `planned`) left no results file
    (results.MissingTestersReason in Go; both held to results/testdata/missing-testers/answers.json)."""
    if len(missing) == 1:
        return f"tester {missing[0]} of {planned} left no results file: its load is in no figure"
    named = ", ".join(str(t) for t in missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
    return f"testers {named} of {planned} left no results file: their load is in no figure"


def _int(v) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def planned_testers(path: str) -> tuple[int, list[str]]:
    """How many testers the run directory's meta.json and meta-<i>.json say it had (the largest; one per
    tester, meta.json first, as results.testerMetas reads them), 0 past MAX_TESTERS with a warning."""
    seen, planned = set(), 0
    for p in [os.path.join(path, "meta.json")] + sorted(glob.glob(os.path.join(path, "meta-*.json"))):
        try:
            m = _load_json(p)
        except InputError:
            continue  # missing or unreadable: Go leaves it out too (with its own warning)
        if not isinstance(m, dict) or _int(m.get("tester", 0)) is None or m.get("tester", 0) in seen:
            continue
        seen.add(m.get("tester", 0))
        planned = max(planned, _int(m.get("testers", 0)) or 0)
    if planned > MAX_TESTERS:
        return 0, [f"{path}: a meta.json says {planned} testers, more than {MAX_TESTERS}: not checked for "
                   "missing results files"]
    return planned, []


def incomplete_run(path: str, csvs: list[str], summary: dict | None) -> tuple[str, list[str]]:
    """Why the run directory is incomplete, its testers missing results files ("" when it is not), and warnings.

    summary.json says (`missing_testers`, `incomplete_reason`) when credhub-perf computed it from these very
    files (its `sources`); a tester's own summary.json (only tester 0's files collected by hand) or an older
    one does not, and the same rule is applied here (results.checkTesters in Go)."""
    if computed_from(summary, csvs) and isinstance(summary.get("missing_testers"), list):
        if summary.get("incomplete") is not True:
            return "", []
        why = summary.get("incomplete_reason")
        if isinstance(why, str) and why:
            return why, []
    planned, warnings = planned_testers(path)
    if len(csvs) < 2 and planned < 2:
        return "", warnings
    missing = missing_testers(planned, {_file_tester(c, i) for i, c in enumerate(csvs)})
    return (missing_testers_reason(planned, missing) if missing else ""), warnings


def request_bounds(path: str, meta: dict) -> tuple[dict, list[str]]:
    """meta.json's slo.latency_by_request_s: {type: seconds > 0} for known types; anything else is left
    out with a warning (the type is then held to the run's SLO)."""
    slo = meta.get("slo")
    raw = slo.get("latency_by_request_s") if isinstance(slo, dict) else None
    if raw is None:
        return {}, []
    if not isinstance(raw, dict):
        return {}, [f"{path}: meta.json slo.latency_by_request_s is not an object: per-type bounds ignored, "
                    "every type held to the run's SLO"]
    out, bad = {}, []
    for k, v in raw.items():
        if (k in REQUEST_TYPES and isinstance(v, (int, float)) and not isinstance(v, bool)
                and math.isfinite(v) and v > 0):
            out[k] = float(v)
        else:
            bad.append(str(k)[:20])
    named = ", ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
    w = [f"{path}: meta.json slo.latency_by_request_s: ignored {named} (a request type with a bound "
         "in seconds > 0): held to the run's SLO"] if bad else []
    return out, w


def by_request_figures(step: int, latency: np.ndarray, error: np.ndarray, request: np.ndarray, duration_s: float,
                       opts: Options, bounds: dict | None = None) -> list[dict]:
    """One step's figures per request type, when it held more than one (a mix); [] otherwise.

    Throughput is the type's requests over the step's duration, so the types add up to the step.
    bounds: a type's own latency bound (seconds), else opts.slo_s."""
    codes = np.unique(request[request >= 0])
    if len(codes) < 2:
        return []
    out = []
    for c in codes:
        m = request == c
        lat, n = latency[m], int(m.sum())
        errors = int(error[m].sum())
        p = analysis.percentiles(lat, [50, 95, 99, opts.slo_percentile])
        rate = errors / n
        name = REQUEST_TYPES[int(c)]
        bound = (bounds or {}).get(name, opts.slo_s)
        out.append({"step": step, "request": name, "requests": n, "errors": errors,
                    "error_rate": rate, "throughput": n / duration_s if duration_s > 0 else 0.0,
                    "p50_s": float(p[0]), "p95_s": float(p[1]), "p99_s": float(p[2]), "slo_s": float(p[3]),
                    "slo_bound_s": float(bound), "meets_slo": bool(p[3] <= bound and rate <= opts.max_error_rate)})
    return out


def _fraction(v) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v) or not 0 <= v <= 100:
        return None
    return float(v)


def apply_step_flags(label: str, steps: list[analysis.Step], summary: dict) -> list[str]:
    """Copy each step's `steady`, `tester_bound` and `incomplete` from summary.json (matched by concurrency
    and rate: match_summary_steps).

    Runs written before these fields have none: their steps stay unflagged (None). `incomplete` is only
    ever written true (absent: complete), so a run with a summary.json that has the other flags has its
    steps marked complete."""
    ss = summary.get("steps")
    if not isinstance(ss, list) or not any(isinstance(t, dict) and ("steady" in t or "tester_bound" in t
                                                                    or "incomplete" in t) for t in ss):
        return []
    if len(ss) != len(steps):
        return [f"{label}: summary.json lists {len(ss)} steps, the CSV has {len(steps)}: its steady, "
                "tester-bound and incomplete flags are not applied"]
    pairs = match_summary_steps(steps, ss)
    if pairs is None:
        return [f"{label}: summary.json's steps do not have the CSV's concurrency and rate: its steady, "
                "tester-bound and incomplete flags are not applied"]
    for s, t in pairs:
        if not isinstance(t, dict):
            continue
        notes = []
        st = t.get("stationarity") if isinstance(t.get("stationarity"), dict) else {}
        if "steady" in t and t["steady"] is None or isinstance(t.get("steady"), bool) and st.get("judged") is False:
            # not judged: too short or too few requests (an older summary.json wrote steady: true for these)
            why = st.get("not_judged")
            s.steady = None
            s.unjudged = why if why in ("too short", "too few requests") else analysis.unjudged_by_rule(s) or "too short"
            notes.append("not judged steady (" + s.unjudged + ")")
        elif isinstance(t.get("steady"), bool):
            s.steady = t["steady"]
            if not s.steady:
                parts = []
                if st.get("p50_drift") and _fraction(abs(st.get("p50_change", 0) or 0)) is not None:
                    parts.append(f"p50 {st['p50_change']:+.0%}")
                if st.get("throughput_drift") and _fraction(abs(st.get("throughput_change", 0) or 0)) is not None:
                    parts.append(f"throughput {st['throughput_change']:+.0%}")
                notes.append("not steady" + (f" ({', '.join(parts)} from the first half to the second)"
                                             if parts else ""))
        if isinstance(t.get("tester_bound"), bool):
            s.tester_bound = t["tester_bound"]
            if s.tester_bound:
                if isinstance(t.get("tester_bound_reason"), str):
                    s.tester_bound_reason = t["tester_bound_reason"]
                s.tester_bound_advice = _advice(t.get("tester_bound_advice"))
                notes.append("tester-bound" + (f": {s.tester_bound_reason}" if s.tester_bound_reason else ""))
        inc = t.get("incomplete", False)
        if inc is True:
            why = t.get("incomplete_reason")
            s.incomplete, s.incomplete_reason = True, why if isinstance(why, str) else ""
        elif inc is False and not s.incomplete:
            # a step some tester's rows are absent from stays incomplete, whatever an older summary.json says
            s.incomplete = False
        if s.incomplete:
            notes.append("incomplete" + (f": {s.incomplete_reason}" if s.incomplete_reason else ""))
        s.tester_cpu = _fraction(t.get("tester_cpu"))
        s.host_cpu = _fraction(t.get("host_cpu"))
        s.flag_note = "; ".join(notes)
    return []


def _load_key(t) -> tuple[int, float] | None:
    """summary.json step's (concurrency, rate), or None when either is missing or not a number."""
    if not isinstance(t, dict):
        return None
    c, r = t.get("concurrency"), t.get("rate", 0)
    if isinstance(c, bool) or not isinstance(c, int) or isinstance(r, bool) or not isinstance(r, (int, float)) \
            or not np.isfinite(r):
        return None
    return c, float(r)


def match_summary_steps(steps: list, ss: list) -> list | None:
    """Pairs each CSV step with summary.json's step of the same concurrency and rate, in order among equal
    ones. credhub-perf's summary orders a capacity search's steps by load, while the CSV holds them as
    probed (16, then 12...): paired by position, one step's flags would land on another. Steps without the two
    figures on either side (older runs, hey CSVs, hostile values) pair by position; None when the figures
    are there but do not correspond."""
    keys = [_load_key(t) for t in ss]
    if any(k is None for k in keys) or any(getattr(s, "concurrency", None) is None for s in steps):
        return list(zip(steps, ss))
    free = list(range(len(ss)))
    out = []
    for s in steps:
        rate = float(s.rate or 0.0)
        hit = next((i for i in free if keys[i][0] == s.concurrency
                    and abs(keys[i][1] - rate) <= 1e-6 * max(1.0, abs(rate)) + 1e-3), None)
        if hit is None:
            return None
        free.remove(hit)
        out.append((s, ss[hit]))
    return out


def warmup_steady(meta: dict) -> bool:
    """The run warm-up was judged steady (auto, three agreeing windows): only then do steps too short to
    judge count as capacity (results.Summary.WarmupSteady)."""
    w = meta.get("warmup") if isinstance(meta, dict) else None
    return isinstance(w, dict) and w.get("mode") == "auto" and w.get("steady") is True


def warmup_note(meta: dict) -> str:
    """Why steps too short to judge do not count: the warm-up's state (results.Summary.warmupNote)."""
    w = meta.get("warmup") if isinstance(meta, dict) else None
    if not isinstance(w, dict):
        return "no run warm-up recorded"
    if w.get("mode") == "off":
        return "the run warm-up was off"
    if w.get("mode") == "fixed":
        return "the fixed run warm-up was not judged steady"
    return "the run warm-up was not judged steady"


def warmup_headline(meta: dict) -> str:
    """A run warm-up that was off or not judged steady, for the headline (results.WarmupHeadline); ""
    for a steady auto or a fixed warm-up, and when none is recorded."""
    w = meta.get("warmup") if isinstance(meta, dict) else None
    if not isinstance(w, dict):
        return ""
    if w.get("mode") == "off":
        return "warm-up off: the first steps may measure a cold JVM"
    if w.get("mode") == "auto" and w.get("steady") is not True:
        return (f"warm-up not steady ({_clean_text(str(w.get('reason') or 'no reason recorded'))}): the first steps "
                "may measure a JVM still warming up")
    return ""


def warmup_warning(label: str, meta: dict) -> str | None:
    """The warning for an auto warm-up that ended before the target was steady (None otherwise)."""
    w = meta.get("warmup")
    if not isinstance(w, dict) or w.get("mode") != "auto" or w.get("steady") is not False:
        return None
    d = w.get("duration_s")
    took = f" after {d:.0f} s" if isinstance(d, (int, float)) and np.isfinite(d) else ""
    return (f"{label}: the run warm-up ended{took} before the target was steady: the first steps may measure "
            "a target still warming up (see their flags), or raise warmup.max")


def _short(msg: str) -> str:
    # Group messages that differ only in numbers (ports, ids, counters).
    msg = re.sub(r"\d+", "N", msg.strip())
    return msg if len(msg) <= 120 else msg[:117] + "..."


def evaluate(run: Run, opts: Options) -> None:
    """Knee, max throughput at SLO and warnings, from the run's steps."""
    st = run.steps
    ok = np.array([s.counts(opts.max_error_rate) for s in st], dtype=bool)
    xs = np.array([s.throughput for s in st])
    # Past saturation a closed loop's throughput only wobbles (or falls) while latency climbs; a
    # monotone curve cannot follow that, so each step counts at the highest throughput reached so far.
    plateau = np.maximum.accumulate(np.where(ok, xs, 0.0)) if len(xs) else xs
    run.knee = analysis.fit_knee(plateau[ok], np.array([s.mean_s for s in st])[ok], opts.knee_elasticity)
    if run.by_request:
        # A mix is within the SLO where the step and every type meet their own bounds: the curve is the
        # worst latency-to-bound ratio, and the bound 1 (summary.json's rule, results.Summary.Finish).
        run.max_tput, run.max_tput_how = analysis.max_throughput_at_slo(
            xs, analysis.slo_ratio([s.slo_s for s in st], opts.slo_s, run.by_request, opts.max_error_rate), ok, 1.0)
    else:
        run.max_tput, run.max_tput_how = analysis.max_throughput_at_slo(
            xs, np.array([s.slo_s for s in st]), ok, opts.slo_s)
    w = run.warnings
    name = run.name()
    if run.incomplete_reason:  # every step is flagged already; no figure even if one were not
        run.max_tput, run.max_tput_how, run.knee = None, "incomplete run", None
    run.lower_bound_reason, run.lower_bound_top = lower_bound(run, opts, ok)
    if run.capacity_is_lower_bound:
        w.append(f"{name}: capacity at the SLO is a LOWER BOUND: {run.capacity_text()}; treat it as conservative")
    run.not_judged = analysis.not_judged_text(st)
    if run.not_judged:
        w.append(f"{name}: {run.not_judged}; " + ("they count as capacity: the run warm-up was judged steady"
                                                  if warmup_steady(run.meta) else
                                                  "they are not counted as capacity: " + warmup_note(run.meta)))
    if warmup_headline(run.meta).startswith("warm-up off"):
        w.append(f"{name}: {warmup_headline(run.meta)} (set warmup.run: auto)")
    run.no_capacity_why = no_capacity_reason(run, opts)
    if run.no_capacity_why:
        w.append(f"{name}: NO CAPACITY at the SLO: {run.no_capacity_why}. This run is left out of the capacity "
                 "table's figures, the scalability fit and the recommendation")
    if not run.has_failures_column:
        fmts = ", ".join(sorted({t.format for t in run.files}))
        w.append(f"{name}: this file had no status/error column ({fmts} format): failed requests were not "
                 "recorded, so error rates show 0 and latency covers successes only")
    bad = [s for s in st if s.error_rate > opts.max_error_rate]
    if bad:
        w.append(f"{name}: {len(bad)} step(s) over the {opts.max_error_rate:.1%} error limit (at concurrency "
                 f"{', '.join(str(s.concurrency) for s in bad[:6])}); they do not count towards capacity")
    elif sum(s.errors for s in st):
        w.append(f"{name}: {sum(s.errors for s in st)} failed request(s), all steps within the "
                 f"{opts.max_error_rate:.1%} error limit")
    advice = "; ".join(dict.fromkeys(a for s in st if s.tester_bound for a in s.tester_bound_advice))
    for flag, what, why in ((lambda s: s.steady is False, "not steady",
                             "latency or throughput moved within the step (a target still warming up, or "
                             "changing under load)"),
                            (lambda s: s.tester_bound is True, "tester-bound",
                             "the tester was short of CPU (its own or its host's), so these steps measured the tester"
                             + (": " + advice if advice else "")),
                            (lambda s: s.incomplete is True, "incomplete",
                             "some tester did not load them for their whole slot (it stopped, crashed, started "
                             "late or left no results file; see the step table's flags), so their throughput "
                             "undercounts the load the target carried")):
        hit = [s for s in st if flag(s)]
        if hit:
            w.append(f"{name}: {len(hit)} step(s) {what} (step {', '.join(str(s.index + 1) for s in hit[:8])}"
                     f"{', ...' if len(hit) > 8 else ''}): {why}; they do not count towards capacity and are "
                     "marked in the plots")
    off = [s for s in st if s.littles_residual is not None and abs(s.littles_residual) > opts.littles_tolerance]
    if off:
        worst = max(off, key=lambda s: abs(s.littles_residual))
        if worst.littles_residual > 0:
            why = ("workers spent that share of the time outside requests: the tester is a bottleneck "
                   "(CPU, connection setup, GC) - check its load, or add testers")
        else:
            why = "more requests in flight than workers: clock problem or mislabelled concurrency"
        w.append(f"{name}: Little's law residual {worst.littles_residual:+.0%} at concurrency {worst.concurrency} "
                 f"(in flight {worst.in_flight:.1f} vs {worst.concurrency} workers; {len(off)} step(s) beyond "
                 f"\u00b1{opts.littles_tolerance:.0%}): {why}")
    for s in st:
        if s.rate and s.throughput < 0.9 * s.rate:
            w.append(f"{name}: step at rate {s.rate:g} req/s reached only {s.throughput:.0f} req/s "
                     "(target saturated or tester too slow)")
        if s.sched_lag_p99_s is not None and s.sched_lag_p99_s > 0.010:
            w.append(f"{name}: step at rate {s.rate:g} req/s: p99 schedule lag {s.sched_lag_p99_s * 1000:.0f} ms "
                     "- the generator fell behind; latencies include that lag")
    if run.by_request:
        w.append(f"{name}: a mix: its capacity at the SLO is the highest load at which every request type meets "
                 "its bound; it has no interval (the bootstrap does not yet resample per type)")
    if run.knee is None and len(st) >= 1:
        w.append(f"{name}: fewer than 3 usable steps, no knee fitted")


def no_capacity_reason(run: Run, opts: Options) -> str:
    """Why a run has no capacity at the SLO although some of its steps met it, or why an incomplete run has none
    ("" otherwise): credhub-perf's sentence at opts' SLO (summary.txt's), without its "unknown: ". A current
    summary.json (computed from these files at this SLO) holds it, unless the run is incomplete and the summary
    does not say so (a tester's own, which cannot see the others); an older one, without the key, sends the
    question to credhub-perf summary --json."""
    if not run.incomplete_reason and (run.max_tput is not None or not any(s.slo_s <= opts.slo_s for s in run.steps)):
        return ""  # a capacity, or no step within the SLO: nothing to explain (credhub-perf not needed)
    what = "the reason a run has no capacity"

    def ask() -> dict:
        if computed_from(run.summary, run.csvs) and credhubperf.slo_matches(run.summary, *_slo_key(opts)) \
                and isinstance(run.summary.get("no_capacity_reason"), str) \
                and (not run.incomplete_reason or run.summary.get("incomplete") is True):
            return run.summary
        return credhub_doc(run, opts, what)
    why = without_credhub_perf(run, what, {"no_capacity_reason": NOT_ADDED}, ask).get("no_capacity_reason")
    return _clean_text(why).removeprefix("unknown: ")[:400] if isinstance(why, str) else ""


# The reason headroom-plot gives where credhub-perf's is missing: which rule applied is its to say.
NOT_ADDED = "why is credhub-perf's to say, and it was not found (see the note)"


def without_credhub_perf(run: Run, what: str, instead, ask):
    """ask()'s answer from credhub-perf, or `instead` when there is no credhub-perf, with `what` (for this run)
    added to the things the note says were not added."""
    try:
        return ask()
    except credhubperf.NotFound:
        run.not_added.append((what, run.name()))
        return instead


def lower_bound(run: Run, opts: Options, ok: np.ndarray) -> tuple[str, float | None]:
    """Why the run's capacity is only a lower bound, and the most throughput such a step carried: steps at a
    higher load (concurrency, then rate) than the counted step the capacity comes from met the SLO but were
    left out ("", None when none was, or without a capacity). The reason is credhub-perf's
    (summary.json's lower_bound_reason), which also decides whether the capacity is a lower bound."""
    st = run.steps
    if run.max_tput is None or not st:
        return "", None
    if run.by_request:
        ratio = analysis.slo_ratio([s.slo_s for s in st], opts.slo_s, run.by_request, opts.max_error_rate)
    else:
        ratio = np.array([s.slo_s for s in st]) / opts.slo_s
    meets = [bool(ratio[i] <= 1.0) and s.error_rate <= opts.max_error_rate and s.requests > 0
             for i, s in enumerate(st)]
    order = sorted(range(len(st)), key=lambda i: (st[i].concurrency or 0, st[i].rate or 0.0, i))
    best, best_pos = -math.inf, -1
    for pos, i in enumerate(order):
        if meets[i] and ok[i] and st[i].throughput >= best:
            best, best_pos = st[i].throughput, pos
    above = [st[i] for i in order[best_pos + 1:] if meets[i] and not ok[i]]
    if best_pos < 0 or not above:
        return "", None
    theirs = without_credhub_perf(run, "the reason a capacity is a lower bound",
                                  {"capacity_is_lower_bound": True, "lower_bound_reason": NOT_ADDED},
                                  lambda: credhub_summary(run, opts, "the reason a capacity is a lower bound"))
    why = theirs.get("lower_bound_reason") if theirs.get("capacity_is_lower_bound") is True else None
    return (why, max(s.throughput for s in above)) if isinstance(why, str) and why else ("", None)


def check_summary(run: Run, summary: dict) -> list[str]:
    """Cross-check against the Go side's summary.json (same definitions, histogram percentiles)."""
    ss = summary.get("steps")
    if not isinstance(ss, list):
        return []
    if len(ss) != len(run.steps):
        return [f"{run.label}: summary.json lists {len(ss)} steps, the CSV has {len(run.steps)}"]
    out = []
    for mine, theirs in zip(run.steps, ss):
        if not isinstance(theirs, dict):
            continue
        if theirs.get("requests") not in (None, mine.requests):
            out.append(f"{run.label}: step {mine.index + 1}: summary.json has {theirs.get('requests')} requests, "
                       f"the CSV {mine.requests}")
        tp = theirs.get("throughput")
        if isinstance(tp, (int, float)) and tp > 0 and abs(tp - mine.throughput) / tp > 0.01:
            out.append(f"{run.label}: step {mine.index + 1}: throughput {mine.throughput:.1f} req/s differs from "
                       f"summary.json's {tp:.1f} by more than 1%")
    return out[:5]
