"""scripts/openloop_figures.py, the pure part of scripts/bench-openloop, on known answers."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from conftest import OURS

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "..", "scripts"))
import openloop_figures as of  # noqa: E402


def test_pct_is_nearest_rank():
    v = list(range(1, 101))  # 1..100
    assert of.pct(v, 50) == 51 and of.pct(v, 99) == 100 and of.pct(v, 0) == 1
    assert of.pct([7], 99) == 7
    assert of.pct([], 50) is None


def test_peak_in_flight_counts_touching_intervals_apart():
    assert of.peak_in_flight([0, 1, 2], [1, 2, 3]) == 1  # each ends as the next starts
    assert of.peak_in_flight([0, 0.5, 0.6, 2], [1, 1.5, 0.7, 3]) == 3
    assert of.peak_in_flight([], []) == 0


def test_conn_wait_is_the_uncovered_time_clamped_at_zero():
    assert round(float(of.conn_wait(0.010, 0.001, 0.0 + 0.0001 + 0.005 + 0.0009)) * 1e6) == 3000
    assert float(of.conn_wait(0.002, 0.0, 0.0005 + 0.0001 + 0.001 + 0.000401)) == 0.0


def ours_csv(tmp_path, rows):
    """rows: (offset, response-time, dial, write, delay, read, status, lag, error)."""
    lines = [OURS]
    for off, rt, dial, write, delay, read, status, lag, err in rows:
        lines.append(f"2026-11-18T10:00:00Z,{rt:.6f},{dial:.6f},0.000000,{write:.6f},{delay:.6f},{read:.6f},"
                     f"{status},{off:.6f},8,100,{lag:.6f},{err},get")
    p = tmp_path / "results.csv"
    p.write_text("\n".join(lines) + "\n")
    return str(p)


def test_read_ours_figures(tmp_path):
    path = ours_csv(tmp_path, [
        # a success that waited 3 ms for a connection after 1 ms of lag
        (0.000, 0.010, 0.0, 0.0001, 0.005, 0.0009, 200, 0.001, ""),
        # a success with no wait
        (0.005, 0.002, 0.0, 0.0001, 0.0018, 0.0001, 200, 0.000, ""),
        # a failure by status, and one by error (quoted, with a comma): no latency, no wait
        (0.006, 0.004, 0.0, 0.0001, 0.0010, 0.0001, 503, 0.000, ""),
        (0.007, 0.003, 0.0, 0.0, 0.0, 0.0, 0, 0.002, '"dial tcp: refused, again"'),
    ])
    fig = of.figures(of.read_ours(path))
    assert fig["requests"] == 4 and fig["errors"] == 2
    assert fig["client_mean_us"] == pytest.approx(6000)
    assert fig["p99_ms"] == pytest.approx(10)
    assert fig["lag_p50_us"] == pytest.approx(1000) and fig["lag_max_ms"] == pytest.approx(2)
    assert fig["wait_p50_us"] == pytest.approx(3000) and fig["wait_mean_us"] == pytest.approx(1500)
    # In flight: [0.004, 0.010), [0.005, 0.007), [0.006, 0.010), [0.009, 0.010): three at 0.006 and at 0.009.
    assert fig["peak_in_flight"] == 3


def test_read_ours_refuses_what_the_package_reader_refuses(tmp_path):
    p = tmp_path / "results.csv"
    p.write_text(OURS + "\n" + "not,a,row\n")
    with pytest.raises(of.InputError):
        of.read_ours(str(p))


def test_read_vegeta_lag_from_hit_zero():
    # timestamp ns, code, latency ns, bytes out, bytes in, error, body, attack, seq: at 1000/s hit i is due
    # 1 ms after hit i-1; hit 2 started 0.5 ms late, hit 3 failed (and early: its lag clamps at 0).
    t0 = 1_700_000_000_000_000_000
    text = "\n".join([
        f"{t0 + 2_500_000},200,3000000,0,0,,,,2",
        f"{t0},200,1000000,0,0,,,,0",
        f"{t0 + 1_000_000},200,2000000,0,0,,,,1",
        f"{t0 + 2_900_000},0,500000,0,0,\"connection refused, twice\",,,3",
    ])
    rec = of.read_vegeta(text, 1000)
    assert rec.errors == 1 and rec.waits is None
    assert np.allclose(rec.lag, [0, 0, 0.0005, 0])
    fig = of.figures(rec)
    assert fig["client_mean_us"] == pytest.approx(2000) and fig["lag_max_ms"] == pytest.approx(0.5)
    assert fig["peak_in_flight"] == 3  # hits 0-2 overlap at 2.5 ms; hit 3 starts after hit 1 ended
    assert "wait_p50_us" not in fig
    assert of.figures(of.read_vegeta("", 1000))["lag_p50_us"] is None


def test_proc_stat_and_core_share():
    before = of.parse_proc_stat("cpu  1 2 3 4\ncpu0 100 0 50 800 50 0 0 0\ncpu1 10 0 0 90 0 0 0 0 0 0\n")
    after = of.parse_proc_stat("cpu0 150 0 100 850 50 0 0 50\ncpu1 10 0 0 190 0 0 0 0\n")
    assert before[0] == (150, 0, 1000)
    assert of.core_share(before, after, 0) == (50.0, 25.0)
    assert of.core_share(before, after, 1) == (0.0, 0.0)
    assert of.core_share(before, after, 2) == (None, None)
    assert of.core_share(before, before, 0) == (None, None)


def test_search_doubles_then_bisects():
    s = of.Search(5000, steps=2)
    while not s.done():
        s.record(s.rate <= 13000, {})  # the highest rate that holds: 13,000
    assert [r for r, _, _ in s.probes] == [5000, 10000, 20000, 15000, 12500]
    assert (s.lo, s.hi) == (12500, 15000)


def test_search_halves_from_a_failing_start_and_stops_at_its_floor():
    s = of.Search(1000, steps=4)
    while not s.done():
        s.record(False, {})
    assert [r for r, _, _ in s.probes] == [1000, 500, 250] and s.lo is None and s.hi == 250


def test_search_stops_at_its_ceiling():
    s = of.Search(100000, steps=4)
    while not s.done():
        s.record(True, {})
    assert [r for r, _, _ in s.probes] == [100000, 200000] and s.hi is None


def test_ceiling_ok_names_every_reason():
    good = dict(answered=5000, errors=0, p99_ms=2.0, lag_p99_us=300)
    assert of.ceiling_ok(good, 1000, 5) == (True, "")
    ok, why = of.ceiling_ok(dict(answered=4900, errors=3, p99_ms=12.5, lag_p99_us=1500), 1000, 5)
    assert not ok and why == "errors, answered 4900 < 99% of 5000, p99 12.50 ms, sched-lag p99 1.50 ms"
    assert of.ceiling_ok(dict(answered=5000), 1000, 5) == (False, "p99 - ms, sched-lag p99 - ms")


def test_lag_rate_rounds_but_never_to_zero():
    assert of.lag_rate(24453, 0.25) == 6100
    assert of.lag_rate(300, 0.1) == 30 and of.lag_rate(4, 0.1) == 1


def test_verdicts_bound_misses_do_not_count():
    v = of.Verdicts()
    v.add("a", True, "x")
    v.add("b", None, "y")
    v.add("c", False, "z", "MACHINE-BOUND")
    assert not v.missed
    v.add("d", False, "w")
    assert v.missed
    assert v.table()[-4:] == ["| a | met | x |", "| b | NOT MEASURED | y |", "| c | MACHINE-BOUND | z |",
                              "| d | MISSED | w |"]


def lag_res(p50, p99, **kw):
    return dict(lag_p50_us=p50, lag_p99_us=p99, answered=1000, conns=4, gen_cpu_pct=90.0,
                gen_core_steal_pct=0.0, **kw)


def test_lag_verdict_tester_bound_only_when_the_rate_cannot_fit_the_core():
    good_floor = dict(lag_p50_us=0, lag_p99_us=100, over_500us=0)
    verdicts, met, per = of.Verdicts(), {}, {}
    # At 10 %: both met; net/http's CPU per request, 100 µs, is remembered.
    of.lag_verdict(verdicts, "ours", 0.1, 1000, lag_res(10, 100, cpu_s=0.05), good_floor, met, per)
    of.lag_verdict(verdicts, "ours-std", 0.1, 1000, lag_res(10, 100, cpu_s=0.1), good_floor, met, per)
    assert per == {"ours": 0.00005, "ours-std": 0.0001}
    # At 50 %: -fast-http met 10,000/s; net/http missed it, tester-bound, and needs 100 % of its core.
    of.lag_verdict(verdicts, "ours", 0.5, 10000, lag_res(10, 100, cpu_s=0.5), good_floor, met, per)
    of.lag_verdict(verdicts, "ours-std", 0.5, 10000, lag_res(10, 900, cpu_s=1.0, tester_bound="CPU 95 %"),
                   good_floor, met, per)
    last = verdicts.rows[-1]
    assert last["verdict"] == "TESTER-BOUND" and not verdicts.missed
    assert last["target"] == "net/http: sched-lag at 50% of null capacity (10000/s): p50 < 100 µs, p99 < 500 µs"
    assert "needs 100 % of its one core: the scheduler keeps time" in last["detail"]
    # At 25 %, 5,000/s fits 50 % of the core: a tester-bound miss there is the engine's own.
    of.lag_verdict(verdicts, "ours", 0.25, 5000, lag_res(10, 100), good_floor, met, per)
    of.lag_verdict(verdicts, "ours-std", 0.25, 5000, lag_res(10, 900, tester_bound="CPU 95 %"), good_floor, met, per)
    assert verdicts.rows[-1]["verdict"] == "MISSED" and verdicts.missed
    assert "yet it was saturated (4 connections: its dials?)" in verdicts.rows[-1]["detail"]


def test_lag_verdict_machine_bound_when_the_floor_missed_too():
    verdicts = of.Verdicts()
    floor = dict(lag_p50_us=0, lag_p99_us=900, over_500us=12)
    of.lag_verdict(verdicts, "ours", 0.1, 1000, lag_res(20, 800), floor, {}, {})
    assert verdicts.rows[0]["verdict"] == "MACHINE-BOUND" and not verdicts.missed
    assert verdicts.rows[0]["detail"] == ("p50 20 µs, p99 800 µs; generator CPU % of its core (core steal %) 90 (0.0); "
                                          "pacer floor on the same core: p50 0 µs, p99 900 µs, 12 wake-ups over 500 µs late")


def test_accuracy_verdicts_compare_with_vegeta():
    res = dict(diff_us=400.0, conns=6, peak_in_flight=2, lag_p50_us=10, lag_p99_us=100)
    acc = {("ours", f): res for f in of.ACCURACY_FRACTIONS}
    acc.update({("vegeta", f): dict(diff_us=300.0) for f in of.ACCURACY_FRACTIONS})
    verdicts = of.Verdicts()
    of.accuracy_verdicts(verdicts, acc, ["ours", "vegeta"])
    assert [v["verdict"] for v in verdicts.rows[:3]] == ["MISSED", "met", "met"]
    assert verdicts.rows[0]["detail"] == "ours 400 µs, vegeta 300 µs"


def test_rows_keep_the_report_format():
    res = dict(answered=400, client_mean_us=6181.2, server_mean_us=5774.0, diff_us=407.2, lag_p50_us=10.0,
               lag_p99_us=1712.0, wait_p50_us=3.0, wait_mean_us=45.4, wait_p99_us=1779.0, conns=6, peak_in_flight=6,
               gen_cpu_pct=12.4, gen_core_steal_pct=0.0, p99_ms=0.421, lag_max_ms=3.16)
    assert of.accuracy_row("ours", 400.0, res) == (
        "| hey (ours) -fast-http | 400 | 400 | 6181 | 5774 | 407 | 10 | 1712 | 3 | 45 | 1779 | 6 | 6 | 12 (0.0) |")
    assert of.lag_row("ours", 1000, 0.5, res) == (
        "| hey (ours) -fast-http | 1,000 | 50% | 400 | 0.42 | 10 | 1712 | 3.16 | 3 | 45 | 1779 | 6 | 12 (0.0) |")
    fl = dict(lag_p50_us=0, lag_p99_us=2759, lag_max_ms=3.85, gen_cpu_pct=2.0, gen_core_steal_pct=0.0)
    assert of.accuracy_floor_row(80.0, fl) == "| pacer floor (no load) | 80 | - | - | - | - | 0 | 2759 | - | - | - | - | - | 2 (0.0) |"
    assert of.lag_floor_row(1000, 0.5, fl) == "| pacer floor (no load) | 1,000 | 50% | - | - | 0 | 2759 | 3.85 | - | - | - | - | 2 (0.0) |"
    for header in (of.accuracy_header(10), of.lag_header(5)):
        assert header[2].count("|") == header[3].count("|")


def test_capacity_text():
    cfg = dict(cap_conns=50, cap_duration=3)
    assert of.capacity_text(4800.0, dict(probes=[]), cfg) == (
        "Null server capacity: 4,800 req/s, given by BENCH_OL_CAPACITY (not probed).")
    probe = dict(rps=20000.0, server_cpu_pct=99.0, server_core_busy_pct=100.0, server_core_steal_pct=0.5,
                 server_cpu_us_per_req=30.0, gen_cpu_pct=80.0, gen_core_busy_pct=85.0, gen_core_steal_pct=0.0,
                 gen_cpu_us_per_req=40.0)
    text = of.capacity_text(20000.0, dict(probes=[probe, dict(probe, rps=24000.0)], spread_pct=20.0), cfg)
    assert text.startswith("Null server capacity: 20,000 req/s, the median of 2 probes (our hey -fast-http, "
                           "closed loop, 50 connections, 3 s each, a fresh server each): 20,000 / 24,000 req/s, "
                           "spread 20 % of the median.")
    assert "per request: 99 of 100 (0.5), 30.0 µs; 99 of 100 (0.5), 30.0 µs; the generator's: 80 of 85" in text
    assert text.endswith("so the lag part's rates are uncertain by as much.**")


def test_tester_bound_warning():
    assert of.tester_bound_warning("x\nWARNING: tester-bound: CPU 93 % of 1 core \ny") == "CPU 93 % of 1 core"
    assert of.tester_bound_warning("WARNING: something else") is None
