import math
import os
import sys

import numpy as np
import pytest

from headroom_plot.analysis import (CapacityRow, assign_steps, capacity_table, fit_knee, max_throughput_at_slo,
                                    percentiles, windows)
from headroom_plot.runs import Options, load_run

from conftest import closed_step, write_meta, write_ours

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from gen_csv import mva  # noqa: E402


# ------------------------------------------------------------------ percentiles

def test_percentiles_nearest_rank():
    v = np.arange(1, 101, dtype=float)
    np.random.default_rng(1).shuffle(v)
    assert list(percentiles(v, [50, 90, 95, 99, 100])) == [50, 90, 95, 99, 100]
    assert list(percentiles(np.array([7.0]), [50, 99])) == [7.0, 7.0]
    assert list(percentiles(np.array([1.0, 2.0]), [50, 51])) == [1.0, 2.0]
    assert percentiles(np.array([3.0, 1.0, 2.0, 10.0]), [75])[0] == 3.0


# ------------------------------------------------------------------ steps and windows

def test_windows_cover_the_step_exactly():
    off = np.linspace(10.0, 13.4, 35)
    idx, k, w = windows(off, 10.0, 13.5, 1.0)
    assert k == 3 and w == pytest.approx(3.5 / 3)
    assert idx.min() == 0 and idx.max() == 2
    idx, k, w = windows(np.array([5.0, 5.1]), 5.0, 5.3, 1.0)  # shorter than one window: a window of its own
    assert k == 1 and w == pytest.approx(0.3) and list(idx) == [0, 0]


def test_windows_never_straddle_steps_and_short_steps_stay_apart(tmp):
    # step 1: 4 workers x 100 requests of 10 ms (0 .. 1 s); step 2: a short 0.25 s step at 8 workers
    rows = closed_step(0.0, 4, 0.010, 400) + closed_step(1.0, 8, 0.010, 200)
    d = tmp / "run"
    d.mkdir()
    write_ours(d / "results.csv", rows)
    write_meta(d, instances=1, label="w")
    run = load_run(str(d), Options(window_s=0.4))
    assert [s.concurrency for s in run.steps] == [4, 8]
    assert [s.requests for s in run.steps] == [400, 200]
    for k in range(len(run.steps)):
        rows_k = run.step == k
        wins = run.win_step == k
        t0, t1 = run.win_t0[wins].min(), (run.win_t0 + run.win_width)[wins].max()
        assert t0 == pytest.approx(run.steps[k].t0) and t1 == pytest.approx(run.steps[k].t1)
        assert run.offset[rows_k].min() >= t0 - 1e-9 and run.offset[rows_k].max() <= t1 + 1e-9
    short = run.steps[1]
    assert np.sum(run.win_step == 1) == 1  # 0.25 s step: one window, not merged with step 1
    assert run.x[run.step == 1][0] == pytest.approx(200 / short.duration_s, rel=1e-6)
    assert short.throughput == pytest.approx(200 / (0.25 + 7e-4), rel=1e-6)
    assert run.steps[0].throughput == pytest.approx(400 / (1.0 + 3e-4), rel=1e-3)


def test_assign_steps_handles_stragglers_written_late():
    seg = np.zeros(7, dtype=np.int32)
    conc = np.array([1, 1, 2, 1, 2, 2, 2])  # a c=1 request completed after c=2 ones started
    off = np.array([0.0, 0.1, 1.0, 0.2, 1.1, 1.2, 1.3])
    assert list(assign_steps(seg, conc, None, off)) == [0, 0, 1, 0, 1, 1, 1]
    assert list(assign_steps(np.array([0, 0, 1, 1]), None, None, np.array([0, 1, 0, 1.0]))) == [0, 0, 1, 1]


def test_littles_law_residual_and_warning(tmp):
    d = tmp / "run"
    d.mkdir()
    busy = closed_step(0.0, 4, 0.010, 400)
    # 8 workers that each wait 10 ms between 10 ms requests: half the time outside requests
    idle = sorted([(2.0 + i * 0.020 + w * 1e-4, 0.010, 200, 8) for w in range(8) for i in range(100)],
                  key=lambda r: r[0] + r[1])
    write_ours(d / "results.csv", busy + idle)
    run = load_run(str(d), Options())
    assert abs(run.steps[0].littles_residual) < 0.01
    assert run.steps[1].littles_residual == pytest.approx(0.5, abs=0.02)
    assert any("Little's law residual +" in w and "tester is a bottleneck" in w for w in run.warnings)


# ------------------------------------------------------------------ knee

def _elasticity_knee(x, r, e=1.0):
    keep = np.concatenate(([True], np.diff(x) > 1e-9))  # MVA throughput stops changing deep in saturation
    x, r = x[keep], r[keep]
    el = np.gradient(np.log(r), np.log(x))
    return x[np.argmax(el >= e)]


def test_knee_mm1_known_answer():
    mu, s, delay = 500.0, 1 / 500.0, 0.005
    x = np.linspace(50, 480, 12)
    r = delay + s / (1 - x / mu)
    k = fit_knee(x, r)
    # exact: x * r'(x) / r(x) = 1 on the model curve
    dense = np.linspace(1, 499.9, 200000)
    want = _elasticity_knee(dense, delay + s / (1 - dense / mu))
    assert k.throughput == pytest.approx(want, rel=0.01)
    assert k.xmax == pytest.approx(mu, rel=0.01) and k.p == pytest.approx(1.0, rel=0.05)


def test_knee_closed_mva_model():
    demand, delay = 0.0025, 0.008  # capacity 400 req/s
    dense = np.array([mva(n, demand, delay) for n in range(1, 400)])
    want = _elasticity_knee(dense[:, 0], dense[:, 1])
    steps = np.array([mva(n, demand, delay) for n in (1, 2, 3, 5, 6, 10, 16, 25, 40, 64)])
    k = fit_knee(steps[:, 0], steps[:, 1])
    assert k.throughput == pytest.approx(want, rel=0.06)
    assert 300 < want < 400


def test_knee_mmc_erlang_model():
    c, s = 4, 0.010  # 4 servers of 10 ms: capacity 400 req/s, flat then sudden

    def resp(lam):
        a = lam * s
        tail = a ** c / math.factorial(c) / (1 - a / c)
        erlang_c = tail / (sum(a ** i / math.factorial(i) for i in range(c)) + tail)
        return s + erlang_c * s / (c - a)
    dense = np.linspace(1, 399.99, 40000)
    want = _elasticity_knee(dense, np.array([resp(v) for v in dense]))
    x = np.linspace(20, 390, 12)
    k = fit_knee(x, np.array([resp(v) for v in x]))
    assert k.throughput == pytest.approx(want, rel=0.05)


# fit_knee's (a, b, xmax, p, estimate) on four seeded noisy ramps, recorded from this implementation to
# catch unintended changes: equal to the bit to what computing xmax / (xmax - x) per grid point gives.
KNOWN_FITS = [(0.0, 0.0012025922843545394, 943.6065855222292, 2.593679109302018, 262.5739685771502),
              (0.0004256264323918083, 0.010366838993251581, 891.6747803317115, 0.917004043204671,
               469.69079232577354),
              (0.0, 0.005582946558761747, 5311.0076605228605, 8.0, 590.1119622803177),
              (0.0, 0.008378300584360622, 1063.569159790325, 1.1892071150027208, 485.82390971673925)]


def test_knee_fit_known_answers_to_the_bit():
    rng = np.random.default_rng(20261125)
    got = []
    for _ in range(4):
        n = int(rng.integers(4, 14))
        x = np.sort(rng.uniform(10, 1000, n))
        cap = x.max() * rng.uniform(1.01, 2)
        r = rng.uniform(0.001, 0.01) / (1 - x / cap) ** rng.uniform(0.3, 3) * rng.lognormal(0, 0.1, n)
        k = fit_knee(x, r)
        got.append((k.a, k.b, k.xmax, k.p, k.estimate))
    assert got == KNOWN_FITS


def test_knee_not_reached_when_latency_is_flat():
    x = np.array([10.0, 20, 30, 40])
    k = fit_knee(x, np.array([0.010, 0.010, 0.0101, 0.010]))
    assert k.throughput is None
    assert fit_knee(x[:2], np.array([0.01, 0.01])) is None


def test_knee_through_the_whole_pipeline_on_generated_data(tmp):
    from gen_csv import generate
    d = tmp / "run"
    d.mkdir()
    generate(str(d / "results.csv"), 60_000, 10, 0.0025, 0.008, 64, 0.0, seed=3)
    run = load_run(str(d), Options())
    dense = np.array([mva(n, 0.0025, 0.008) for n in range(1, 400)])
    want = _elasticity_knee(dense[:, 0], dense[:, 1])
    assert run.knee.throughput == pytest.approx(want, rel=0.08)
    assert run.steps[-1].throughput == pytest.approx(400, rel=0.05)


# ------------------------------------------------------------------ SLO

def test_mix_capacity_every_type_meets_its_bound():
    """Known answers (as results.TestMixCapacityEveryTypeMeetsItsSLO): a mix is within the SLO where the
    step and every type meet their bounds, interpolated on the worst latency-to-bound ratio."""
    from headroom_plot.analysis import slo_ratio
    x, ok = np.array([100.0, 200, 300]), np.ones(3, bool)
    step = [0.05, 0.06, 0.2]

    def rows(set_bound, set_err=(0, 0, 0)):
        return ([{"step": k, "request": "get", "slo_s": p, "slo_bound_s": 0.1, "error_rate": 0}
                 for k, p in enumerate((0.04, 0.05, 0.18))]
                + [{"step": k, "request": "set", "slo_s": p, "slo_bound_s": set_bound, "error_rate": e}
                   for k, (p, e) in enumerate(zip((0.08, 0.12, 0.3), set_err))])
    r = slo_ratio(step, 0.1, rows(0.1), 0.01)
    assert r == pytest.approx([0.8, 1.2, 3.0])
    # set over its bound at 200 req/s although the step's own p95 (60 ms) is within 100 ms
    assert max_throughput_at_slo(x, r, ok, 1.0) == (pytest.approx(150.0), "interpolated")
    assert max_throughput_at_slo(x, np.array(step), ok, 0.1)[0] == pytest.approx(200 + 40 / 140 * 100)
    # set's own bound of 150 ms: ratios max(0.5, 0.4, 0.533), max(0.6, 0.5, 0.8), 2
    r = slo_ratio(step, 0.1, rows(0.15), 0.01)
    assert r == pytest.approx([0.08 / 0.15, 0.8, 2.0])
    assert max_throughput_at_slo(x, r, ok, 1.0) == (pytest.approx(200 + 0.2 / 1.2 * 100), "interpolated")
    # a type over the error limit: the step fails and is not interpolated into
    r = slo_ratio(step, 0.1, rows(0.15, (0, 0.5, 0)), 0.01)
    assert np.isinf(r[1])
    assert max_throughput_at_slo(x, r, ok, 1.0) == (100.0, "measured")


def test_max_throughput_at_slo_interpolates():
    x = np.array([100.0, 200, 300])
    p = np.array([0.050, 0.150, 0.300])
    ok = np.ones(3, bool)
    assert max_throughput_at_slo(x, p, ok, 0.100) == (150.0, "interpolated")
    assert max_throughput_at_slo(x, p, ok, 0.400) == (300.0, "lower bound")  # SLO never crossed
    assert max_throughput_at_slo(x, np.array([0.05, 0.08, 0.09]), ok, 0.09) == (300.0, "lower bound")
    assert max_throughput_at_slo(np.array([100.0, 300, 200]), np.array([0.05, 0.08, 0.3]), ok, 0.1)[0] == 300.0
    assert max_throughput_at_slo(x, p, ok, 0.010) == (None, "never met")
    # every step tester-bound or failing: nothing is known about the SLO, and the report says so
    assert max_throughput_at_slo(x, p, np.zeros(3, bool), 0.400) == (None, "no usable step")
    rows = [{"scenario": "get", "instances": 2, "label": "a", "max_tput": None, "how": "no usable step", "knee": None}]
    assert capacity_table(rows)[0].unusable
    rows.append({"scenario": "get", "instances": 2, "label": "b", "max_tput": None, "how": "never met", "knee": None})
    assert not capacity_table(rows)[0].unusable
    # a step over the error limit neither counts nor is interpolated into
    assert max_throughput_at_slo(x, p, np.array([True, False, True]), 0.100) == (100.0, "measured")
    # overload: throughput falls while latency rises; the best measured step stands
    assert max_throughput_at_slo(np.array([100.0, 300, 250]), np.array([0.02, 0.09, 0.5]), np.ones(3, bool),
                                 0.1)[0] == 300.0


# ------------------------------------------------------------------ capacity

def _rows():
    return [{"scenario": "get", "instances": 1, "label": "a", "max_tput": 100.0, "knee": 80.0},
            {"scenario": "get", "instances": 2, "label": "b", "max_tput": 190.0, "knee": 150.0},
            {"scenario": "get", "instances": 4, "label": "c", "max_tput": 360.0, "knee": 300.0},
            {"scenario": "get", "instances": 4, "label": "c2", "max_tput": 340.0, "knee": None},
            {"scenario": "set", "instances": None, "label": "x", "max_tput": 50.0, "knee": None}]


def test_capacity_table_and_efficiency():
    t = capacity_table(_rows())
    get = [c for c in t if c.scenario == "get"]
    assert [c.instances for c in get] == [1, 2, 4]
    assert [c.max_tput for c in get] == [100.0, 190.0, 350.0]  # median of the two 4-instance runs
    assert [round(c.efficiency, 4) for c in get] == [1.0, 0.95, 0.875]
    assert get[2].runs == 2 and get[2].knee == 300.0
    other = [c for c in t if c.scenario == "set"][0]
    assert other.group == "x" and other.efficiency is None


def test_open_loop_warnings_rate_missed_and_schedule_lag(tmp):
    d = tmp / "open"
    d.mkdir()
    rows = []
    # asked for 200 req/s, the target only managed 100 req/s and requests left up to 50 ms late
    for i in range(200):
        rows.append((i * 0.01, 0.005, 200, 8, 200, 0.05 if i % 2 else 0.0))
    write_ours(d / "results.csv", rows)
    run = load_run(str(d), Options())
    s = run.steps[0]
    assert s.rate == 200 and s.littles_residual is None and s.sched_lag_p99_s == pytest.approx(0.05)
    assert any("reached only 100 req/s" in w for w in run.warnings)
    assert any("p99 schedule lag 50 ms" in w for w in run.warnings)
