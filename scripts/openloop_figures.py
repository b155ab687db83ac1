"""The figures of scripts/bench-openloop: the generators' records, their
statistics, the ceiling search, the targets' verdicts and the report's
rows. Nothing here starts a process or reads the clock, so
src/headroom-plot/tests/test_bench_openloop.py checks it on known answers;
the script runs the processes and hands their outputs here."""

import csv
import re
from dataclasses import dataclass

import numpy as np

from headroom_plot.csvread import InputError, read_csv  # noqa: F401 (InputError: for the script)

STATION_SERVERS = 4
STATION_SERVICE_MS = 5.0
CAPACITY_STATION = STATION_SERVERS * 1000.0 / STATION_SERVICE_MS
ACCURACY_FRACTIONS = (0.1, 0.5, 0.8)
LAG_FRACTIONS = (0.1, 0.25, 0.5)
CEIL_P99_MS = 10.0
CEIL_LAG_P99_MS = 1.0
CEIL_ACHIEVED = 0.99
LABELS = {"ours": "hey (ours) -fast-http", "ours-std": "hey (ours) net/http",
          "vegeta": "vegeta", "base": "hey (BENCH_OL_BASE)"}
CLIENT = {"ours": "-fast-http", "ours-std": "net/http"}
# The clients the open-loop targets are judged on: both of ours (the
# script's docstring, "Which targets apply to which client").
JUDGED = ("ours", "ours-std")
# cpuload.DefaultLimits' tester CPU bound (hey's tester-bound warning).
CPU_BOUND = 0.80
# Capacity probes further apart than this (max - min, % of the median) are
# flagged in the report.
CAP_SPREAD_WARN = 10.0
def fmt(v, spec):
    return format(v, spec) if v is not None else "-"


def pct(sorted_vals, p):
    """Nearest rank on sorted values (pacer-floor ranks the same way)."""
    if len(sorted_vals) == 0:
        return None
    return float(sorted_vals[min(len(sorted_vals) - 1, int(p / 100.0 * len(sorted_vals)))])


def median(vals):
    v = sorted(vals)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def peak_in_flight(starts, ends):
    """The most intervals [start, end) open at once; one ending when
    another starts does not overlap it."""
    t = np.concatenate([np.asarray(starts, float), np.asarray(ends, float)])
    d = np.concatenate([np.ones(len(starts), int), -np.ones(len(ends), int)])
    order = np.lexsort((d, t))  # by time, an end before a start at the same time
    return int(max(0, np.cumsum(d[order]).max(initial=0)))


@dataclass
class Records:
    """One run's requests, in seconds: latencies of the successes, every
    request's sched-lag, the failures' count, each request's time in flight
    and (ours only: vegeta records no phases) the successes' connection
    waits."""
    latency: np.ndarray
    lag: np.ndarray
    errors: int
    starts: np.ndarray
    ends: np.ndarray
    waits: np.ndarray | None


def conn_wait(rt, lag, phases):
    """The part of a response time that no phase column covers: the wait
    for a connection (net/http's for an idle one, the lean client's in its
    pool) plus the client's own few µs to it. Each column is rounded to
    1 µs; the clamp keeps that noise from going negative."""
    return np.maximum(0.0, np.asarray(rt) - np.asarray(lag) - np.asarray(phases))


def read_ours(path):
    """Records of our hey's results CSV. A request is in flight from the
    end of its connection wait to its end: one still waiting for a
    connection holds none, so "connections <= peak in flight + 4" compares
    connections with requests that used one. A failure's phases stop where
    it failed, so the rest of its time is not a wait."""
    t = read_csv(path, phases=True)
    rt, off = t.latency, t.offset
    lag = np.round(t.sched_lag.astype(float), 6)  # the reader's float32 back to the CSV's whole µs
    failed = (t.status < 200) | (t.status >= 400)
    if t.error is not None:
        failed |= t.error
    if t.phases is None:
        raise ValueError(f"{path}: no phase columns (DNS+dialup ... Response-read): not our hey's CSV")
    wait = np.where(failed, 0.0, conn_wait(rt, lag, t.phases))
    ok = ~failed
    return Records(latency=rt[ok], lag=lag, errors=int(failed.sum()),
                   starts=off + lag + wait, ends=off + rt, waits=wait[ok])


def read_vegeta(text, rate):
    """Records of `vegeta encode -to csv` output: no header, one hit per
    line as timestamp (unix ns), code, latency (ns), bytes out, bytes in,
    error, body, attack, seq, ...; not a results CSV, which is why the
    package reader cannot read it. vegeta schedules hit i at
    began + (i+1)/rate and does not record `began`: hit 0 stands for it
    (taken as on time), so lag_i = timestamp_i - timestamp_0 - i/rate. Its
    latency is measured from the actual send, so its lag is not in it."""
    hits = sorted((int(r[8]), int(r[0]), int(r[2]), int(r[1]), r[5]) for r in csv.reader(text.splitlines()))
    if not hits:
        empty = np.empty(0)
        return Records(empty, empty, 0, empty, empty, None)
    seq, ts, lat, code, err = (np.array(c) for c in zip(*hits))
    since = (ts - ts[0]) / 1e9
    failed = (err != "") | (code < 200) | (code >= 400)
    return Records(latency=lat[~failed] / 1e9, lag=np.maximum(0.0, since - seq / rate), errors=int(failed.sum()),
                   starts=since, ends=since + lat / 1e9, waits=None)


def figures(rec):
    """What a run's report rows and verdicts read of its records."""
    lat, lags = np.sort(rec.latency), np.sort(rec.lag)
    res = dict(requests=len(lags), errors=rec.errors,
               client_mean_us=float(lat.mean()) * 1e6 if len(lat) else None,
               p99_ms=pct(lat, 99) * 1e3 if len(lat) else None,
               lag_p50_us=pct(lags, 50) * 1e6 if len(lags) else None,
               lag_p99_us=pct(lags, 99) * 1e6 if len(lags) else None,
               lag_max_ms=float(lags[-1]) * 1e3 if len(lags) else None,
               peak_in_flight=peak_in_flight(rec.starts, rec.ends))
    if rec.waits is not None and len(rec.waits):
        w = np.sort(rec.waits)
        res.update(wait_p50_us=pct(w, 50) * 1e6, wait_mean_us=float(w.mean()) * 1e6, wait_p99_us=pct(w, 99) * 1e6)
    return res


def tester_bound_warning(stderr):
    """hey's own verdict on its CPU (cpuload's bounds, as credhub-perf
    judges a step): the reason of "WARNING: tester-bound: <reason>"."""
    m = re.search(r"^WARNING: tester-bound: (.*)$", stderr, re.M)
    return m.group(1).strip() if m else None


def parse_proc_stat(text):
    """{core: (busy, steal, total)} clock ticks of /proc/stat's text."""
    ticks = {}
    for m in re.finditer(r"^cpu(\d+) (.*)$", text, re.M):
        v = [int(x) for x in m.group(2).split()]
        # user nice system idle iowait irq softirq steal ...
        idle = v[3] + (v[4] if len(v) > 4 else 0)
        steal = v[7] if len(v) > 7 else 0
        total = sum(v[:8])
        ticks[int(m.group(1))] = (total - idle - steal, steal, total)
    return ticks


def core_share(before, after, core):
    """(busy %, steal %) of one core between two parse_proc_stat readings."""
    if core not in before or core not in after:
        return None, None
    b, s, t = (a - c for a, c in zip(after[core], before[core]))
    return (100.0 * b / t, 100.0 * s / t) if t > 0 else (None, None)


def lag_rate(cap, frac):
    """A lag run's rate: rounded to 100 req/s for readable tables, but
    never to 0 (hey -rate 0 is a closed loop) when a disturbed machine read
    a capacity of a few hundred."""
    return round(cap * frac / 100) * 100 if cap >= 2000 else max(1, round(cap * frac))


class Search:
    """Doubling, then bisection, for the highest passing rate."""

    def __init__(self, start, steps, ceiling=320000, floor=250):
        self.lo, self.hi, self.rate = None, None, float(start)
        self.steps, self.ceiling, self.floor = steps, ceiling, floor
        self.probes = []

    def done(self):
        return self.rate is None

    def record(self, ok, res):
        self.probes.append((self.rate, ok, res))
        if ok:
            self.lo = self.rate
        else:
            self.hi = self.rate
        if self.hi is None:
            self.rate = self.rate * 2 if self.rate * 2 <= self.ceiling else None
        elif self.lo is None:
            self.rate = self.rate / 2 if self.rate / 2 >= self.floor else None
        elif self.steps > 0:
            self.steps -= 1
            self.rate = round((self.lo + self.hi) / 2 / 100) * 100
            if self.rate in (self.lo, self.hi):
                self.rate = None
        else:
            self.rate = None


def ceiling_ok(res, rate, duration):
    """(held, why not) of one ceiling probe."""
    reasons = []
    if res.get("errors"):
        reasons.append("errors")
    if res["answered"] < CEIL_ACHIEVED * rate * duration:
        reasons.append(f"answered {res['answered']} < 99% of {rate * duration:.0f}")
    if res.get("p99_ms") is None or res["p99_ms"] >= CEIL_P99_MS:
        reasons.append(f"p99 {fmt(res.get('p99_ms'), '.2f')} ms")
    lag = res.get("lag_p99_us")
    if lag is None or lag >= CEIL_LAG_P99_MS * 1000:
        reasons.append(f"sched-lag p99 {fmt(lag / 1000 if lag is not None else None, '.2f')} ms")
    return not reasons, ", ".join(reasons)


def lag_ok(res):
    """The sched-lag target on one run (p50 < 100 µs, p99 < 500 µs): None
    when unmeasured."""
    if res.get("lag_p50_us") is None:
        return None
    return res["lag_p50_us"] < 100 and res["lag_p99_us"] < 500


def machine_bound(ok, floor):
    """A sched-lag miss the machine made: the pacer floor, on the same
    core in the same minutes, missed the same target."""
    return ok is False and lag_ok(floor) is False


class Verdicts:
    """The targets' table. A miss given a bound does not count as one:
    "TESTER-BOUND", missed by a client whose tester ran out of CPU (hey
    said so) while the other client of ours met the same target on the
    same tester; "MACHINE-BOUND", a sched-lag target the pacer floor missed
    too, on the same core at the same rate."""

    def __init__(self):
        self.rows, self.missed = [], False

    def add(self, target, ok, detail, bound=None):
        v = "NOT MEASURED" if ok is None else ("met" if ok else (bound or "MISSED"))
        self.missed = self.missed or (ok is False and not bound)
        self.rows.append(dict(target=target, verdict=v, detail=detail))

    def table(self):
        return (["### Targets", "", "| target | verdict | figures |", "|---|---|---|"]
                + [f"| {v['target']} | {v['verdict']} | {v['detail']} |" for v in self.rows])


def us(res, key):
    return fmt(res.get(key), ".0f")


def ms(res, key):
    return fmt(res.get(key), ".2f")


def core_cell(res):
    """The generator's CPU (% of its core) and its core's steal share: "23 (3.1)"."""
    return f"{us(res, 'gen_cpu_pct')} ({fmt(res.get('gen_core_steal_pct'), '.1f')})"


def note(res):
    return f"  [{res['note']}]" if res.get("note") else ""


def row(*cells):
    return "| " + " | ".join(str(c) for c in cells) + " |"


def waits(res):
    return us(res, "wait_p50_us"), us(res, "wait_mean_us"), us(res, "wait_p99_us")


def wait_log(res):
    return "conn wait p50 {} mean {} p99 {} µs  ".format(*waits(res))


def floor_detail(fl):
    return (f"; pacer floor on the same core: p50 {us(fl, 'lag_p50_us')} µs, p99 {us(fl, 'lag_p99_us')} µs, "
            f"{fmt(fl.get('over_500us'), 'd')} wake-ups over 500 µs late" + (f" [{fl['note']}]" if fl.get("note") else ""))


def floor_log(part, fl, rate):
    return (f"  {part:8} {'pacer floor (no load)':21} {rate:6.0f}/s  lag p50 {us(fl, 'lag_p50_us')} "
            f"p99 {us(fl, 'lag_p99_us')} µs max {ms(fl, 'lag_max_ms')} ms  core {core_cell(fl)}" + note(fl))


WAIT_COLUMNS = "| conn wait p50 µs | conn wait mean µs | conn wait p99 µs | connections "


def accuracy_header(duration):
    return [f"### Accuracy: M/M/{STATION_SERVERS} station, {STATION_SERVICE_MS:g} ms mean service "
            f"(capacity {CAPACITY_STATION:.0f} req/s), {duration} s per run", "",
            "| generator | offered req/s | answered | client mean µs | server mean µs | client − server µs "
            "| sched-lag p50 µs | sched-lag p99 µs " + WAIT_COLUMNS + "| peak in flight | generator CPU % (core steal %) |",
            "|---|" + "---:|" * 13]


def accuracy_log(tool, rate, res):
    return (f"  accuracy {LABELS[tool]:21} {rate:6.0f}/s  client-server {fmt(res.get('diff_us'), '7.0f')} µs  "
            f"lag p50 {us(res, 'lag_p50_us')} p99 {us(res, 'lag_p99_us')} µs  " + wait_log(res)
            + f"conns {res.get('conns')} peak {res.get('peak_in_flight')}" + note(res))


def accuracy_row(tool, rate, res):
    return row(LABELS[tool], f"{rate:.0f}", res["answered"], *(us(res, k) for k in (
        "client_mean_us", "server_mean_us", "diff_us", "lag_p50_us", "lag_p99_us")), *waits(res),
        res.get("conns"), res.get("peak_in_flight"), core_cell(res))


def accuracy_floor_row(rate, fl):
    return row("pacer floor (no load)", f"{rate:.0f}", *"----", us(fl, "lag_p50_us"), us(fl, "lag_p99_us"),
               *"-----", core_cell(fl))


def accuracy_verdicts(verdicts, acc, tools):
    """The station's targets on each judged client of acc, {(tool, "vegeta"
    or "floor", fraction): figures}."""
    for frac in ACCURACY_FRACTIONS:
        v = acc.get(("vegeta", frac), {})
        for tool in (t for t in JUDGED if t in tools):
            o, who = acc.get((tool, frac), {}), CLIENT[tool]
            ok = None
            if o.get("diff_us") is not None and v.get("diff_us") is not None:
                ok = o["diff_us"] <= v["diff_us"]
            verdicts.add(f"{who}: client − server latency at {frac:.0%} of capacity ≤ vegeta's",
                         ok, f"ours {us(o, 'diff_us')} µs, vegeta {us(v, 'diff_us')} µs")
            c, peak = o.get("conns"), o.get("peak_in_flight")
            verdicts.add(f"{who}: connections at {frac:.0%} ≤ peak in flight + 4",
                         None if c is None or peak is None else c <= peak + 4, f"{c} connections, peak {peak} in flight")
            ok, fl = lag_ok(o), acc.get(("floor", frac), {})
            detail = f"p50 {us(o, 'lag_p50_us')} µs, p99 {us(o, 'lag_p99_us')} µs"
            if ok is False:
                detail += f"; generator CPU % of its core (core steal %) {core_cell(o)}" + floor_detail(fl)
            verdicts.add(f"{who}: sched-lag at {frac:.0%} of station capacity: p50 < 100 µs, p99 < 500 µs", ok,
                         detail, "MACHINE-BOUND" if machine_bound(ok, fl) else None)


def capacity_text(cap, info, cfg):
    """The report's paragraph on the null server's capacity."""
    probes = info["probes"]
    if not probes:
        return f"Null server capacity: {cap:,.0f} req/s, given by BENCH_OL_CAPACITY (not probed)."

    def side(who):
        return "; ".join(f"{us(p, who + '_cpu_pct')} of {us(p, who + '_core_busy_pct')} "
                         f"({fmt(p[who + '_core_steal_pct'], '.1f')}), {fmt(p[who + '_cpu_us_per_req'], '.1f')} µs"
                         for p in probes)

    text = (f"Null server capacity: {cap:,.0f} req/s, the median of {len(probes)} probes "
            f"(our hey -fast-http, closed loop, {cfg['cap_conns']} connections, {cfg['cap_duration']} s each, "
            f"a fresh server each): {' / '.join(fmt(p.get('rps'), ',.0f') for p in probes)} req/s, "
            f"spread {info['spread_pct']:.0f} % of the median. Per probe, the server's CPU % of its core, of the "
            f"core's busy % (steal %), and its CPU µs per request: {side('server')}; the generator's: {side('gen')}.")
    if info["spread_pct"] > CAP_SPREAD_WARN:
        text += (f" **The probes disagree by more than {CAP_SPREAD_WARN:g} %: the machine was not quiet "
                 "while they ran, so the lag part's rates are uncertain by as much.**")
    return text


def capacity_probe_log(p, cfg):
    def side(who, core):
        return (f"{us(p, who + '_cpu_pct')} % CPU (core {core} busy {us(p, who + '_core_busy_pct')} %, "
                f"steal {fmt(p[who + '_core_steal_pct'], '.1f')} %)")

    return (f"  capacity probe {p['probe']}: {fmt(p.get('rps'), ',.0f')} req/s  server "
            f"{side('server', cfg['server_cpu'])}  generator {side('gen', cfg['gen_cpu'])}  CPU/request server "
            f"{fmt(p['server_cpu_us_per_req'], '.1f')} µs, generator {fmt(p['gen_cpu_us_per_req'], '.1f')} µs" + note(p))


def lag_header(duration):
    return [f"### Sched-lag against the null server, {duration} s per run", "",
            "| generator | offered req/s | % of capacity | answered | p99 latency ms | sched-lag p50 µs | sched-lag p99 µs "
            "| max ms " + WAIT_COLUMNS + "| generator CPU % (core steal %) |",
            "|---|" + "---:|" * 12]


def lag_floor_row(rate, frac, fl):
    return row("pacer floor (no load)", f"{rate:,.0f}", f"{frac:.0%}", "-", "-", us(fl, "lag_p50_us"),
               us(fl, "lag_p99_us"), ms(fl, "lag_max_ms"), *"----", core_cell(fl))


def lag_log(tool, rate, res):
    return (f"  lag      {LABELS[tool]:21} {rate:6.0f}/s  lag p50 {us(res, 'lag_p50_us')} "
            f"p99 {us(res, 'lag_p99_us')} µs max {ms(res, 'lag_max_ms')} ms  " + wait_log(res)
            + f"p99 {ms(res, 'p99_ms')} ms" + note(res))


def lag_row(tool, rate, frac, res):
    return row(LABELS[tool], f"{rate:,.0f}", f"{frac:.0%}", res["answered"], ms(res, "p99_ms"), us(res, "lag_p50_us"),
               us(res, "lag_p99_us"), ms(res, "lag_max_ms"), *waits(res), res.get("conns"), core_cell(res))


def lag_verdict(verdicts, tool, frac, rate, res, fl, met, cpu_per_req):
    """The sched-lag target on one judged client's lag run, TESTER-BOUND or
    MACHINE-BOUND as the script's docstring says. met {(tool, fraction):
    ok} and cpu_per_req {tool: CPU s per request at its lowest rate hey did
    not call tester-bound} carry what the earlier runs found."""
    ok = lag_ok(res)
    met[(tool, frac)] = ok
    detail = f"p50 {us(res, 'lag_p50_us')} µs, p99 {us(res, 'lag_p99_us')} µs"
    if ok is False:
        detail += f"; generator CPU % of its core (core steal %) {core_cell(res)}"
    if not res.get("tester_bound") and res.get("cpu_s") and res["answered"] and tool not in cpu_per_req:
        cpu_per_req[tool] = res["cpu_s"] / res["answered"]
    other = [t for t in JUDGED if t != tool and met.get((t, frac)) is True]
    bound = ok is False and bool(res.get("tester_bound")) and bool(other)
    if bound:
        per = cpu_per_req.get(tool)
        need = rate * per if per else None
        detail += (f"; hey: tester-bound: {res['tester_bound']}; {CLIENT[other[0]]} met this rate on the same tester"
                   f"; at its CPU per request at a lower rate ({fmt(per and per * 1e6, '.0f')} µs) "
                   f"this rate needs {fmt(need and need * 100, '.0f')} % of its one core")
        if need is None or need <= CPU_BOUND:
            bound = False  # it fits the core: the CPU went elsewhere (its dials' handshakes, most often)
            detail += f", yet it was saturated ({res.get('conns')} connections: its dials?)"
        else:
            detail += ": the scheduler keeps time, this client's CPU per request does not fit"
    if ok is False:
        detail += floor_detail(fl)
    kind = "TESTER-BOUND" if bound else ("MACHINE-BOUND" if machine_bound(ok, fl) else None)
    verdicts.add(f"{CLIENT[tool]}: sched-lag at {frac:.0%} of null capacity ({rate:.0f}/s): "
                 f"p50 < 100 µs, p99 < 500 µs", ok, detail, kind)


def ceiling_log(tool, rate, res, ok, why):
    return (f"  ceiling  {LABELS[tool]:10} {rate:7.0f}/s  {'holds' if ok else 'fails: ' + why}  "
            f"(p99 {ms(res, 'p99_ms')} ms, lag p99 {us(res, 'lag_p99_us')} µs, answered {res['answered']})" + note(res))


def ceiling_table(searches, duration):
    lines = [f"### Open-loop ceiling against the null server: no errors, achieved rate within 1 % "
             f"(≥ 99 % answered), p99 latency < {CEIL_P99_MS:g} ms, sched-lag p99 < {CEIL_LAG_P99_MS:g} ms; "
             f"{duration} s per probe", "",
             "| generator | highest rate held | lowest rate failed | probes (rate: verdict) |", "|---|---:|---:|---|"]
    for tool, s in searches.items():
        probes = "; ".join(f"{r:,.0f}: {'ok' if ok else 'fail (' + ceiling_ok(res, r, duration)[1] + ')'}"
                           for r, ok, res in s.probes)
        lines.append(row(LABELS[tool], fmt(s.lo, ",.0f"), fmt(s.hi, ",.0f"), probes))
    return lines + [""]


def ceiling_verdict(verdicts, searches):
    o, v = searches["ours"].lo, searches["vegeta"].lo if "vegeta" in searches else None
    verdicts.add("open-loop ceiling ≥ 1.5x vegeta's", None if not o or not v else o >= 1.5 * v,
                 f"ours {fmt(o, ',.0f')}, vegeta {fmt(v, ',.0f')} req/s" + (f" ({o / v:.2f}x)" if o and v else ""))
