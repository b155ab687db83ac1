"""headroom-plot compare: the difference's intervals on data of known capacity, the verdict's words, and
the comparison end to end on synthetic run directories."""
import json
import os

import numpy as np
import pytest

from headroom_plot import bootstrap, cli, compare
from headroom_plot.runs import Options, load_run

import synth

# The SLO sits where the queue is 92 % busy, so p95 climbs steeply through it, as on a real target near
# its capacity (at 50 % busy a 20 % difference hides in the run-to-run noise of each step's p95).
SLO = 0.25


def mm1_ramp(capacity, slo_s=SLO, delay=0.02, fractions=(0.3, 0.5, 0.7, 0.85, 0.95, 1.03, 1.06)):
    """Step rates and medians whose true p95 follows an M/M/1 queue: a request's time in the system is
    exponential with rate mu - lambda, so p95 = delay + ln(20) / (mu - lambda), with mu chosen so that p95
    reaches slo_s at `capacity` (the steps stay below mu, where the queue would grow without end: mu is
    capacity + 13 req/s here, so capacities up to about 200 req/s). Returns (rates, medians, true p95 per step)."""
    mu = capacity + np.log(20) / (slo_s - delay)
    rates = capacity * np.array(fractions)
    p95 = delay + np.log(20) / np.maximum(mu - rates, 1e-3)
    medians = p95 / np.exp(synth.Z95 * np.sqrt(synth.S_ROW ** 2 + synth.TAU ** 2))
    return rates, medians, p95


def truth(capacity):
    """What the estimator converges to on mm1_ramp(capacity): the crossing of the true points at the SLO."""
    rates, _, p = mm1_ramp(capacity)
    return synth.crossing(rates, p, SLO)


def write_run(path, rng, capacity, label, duration=10.0, instances=2):
    """A credhub-perf run directory of open-loop steps on mm1_ramp(capacity)."""
    rates, medians, _ = mm1_ramp(capacity)
    lat, off, _, stp = synth.steps(rng, rates, medians, duration)
    os.makedirs(path, exist_ok=True)
    order = np.lexsort((off + lat, stp))   # completion order within each step, as the tester writes
    lat, off, stp = lat[order], off[order], stp[order]
    rate_col = np.rint(rates[stp]).astype(int)
    lines = [synth.HEADER]
    lines += [f"2026-11-18T10:00:00Z,{a:.6f},0,0,0,{a:.6f},0,200,{o:.6f},64,{r},0.000000,,get\n"
              for o, a, r in zip(off, lat, rate_col)]
    with open(os.path.join(path, "results.csv"), "w") as f:
        f.write("".join(lines))
    meta = {"tool_version": "synthetic", "scenario": "get", "label": label, "instances": instances, "mode": "open",
            "slo": {"percentile": 95, "latency_s": SLO}, "started_at": "2026-11-18T10:00:00Z",
            "warmup": {"mode": "auto", "steady": True, "duration_s": 10, "requests": 100}}
    with open(os.path.join(path, "meta.json"), "w") as f:
        json.dump(meta, f)
    return str(path)


# ---------------------------------------------------------------- the numbers

def test_difference_of_independent_replicates():
    rng = np.random.default_rng(1)
    a = 100 + 5 * rng.standard_normal(4000)
    b = 80 + 5 * rng.standard_normal(4000)
    d = compare.difference(100.0, a, 80.0, b)
    assert d.diff.value == -20 and d.ratio.value == pytest.approx(0.8)
    # the spreads add: sd of B - A is 5 sqrt(2), so the interval is about +-1.96 * 7.07
    lo, hi = d.diff.interval
    assert lo == pytest.approx(-20 - 13.9, abs=1.0) and hi == pytest.approx(-20 + 13.9, abs=1.0)
    assert d.shows == compare.LOWER
    # the smallest detectable difference: (1.96 + 0.84) standard errors of B / A
    se = (d.ratio.interval[1] - d.ratio.interval[0]) / (2 * 1.96)
    assert d.detectable == pytest.approx(2.80 * se, rel=0.01)


def test_difference_without_a_side_or_replicates():
    d = compare.difference(None, np.empty(0), 80.0, np.full(50, 80.0))
    assert d.diff.value is None and d.shows == compare.CANNOT
    d = compare.difference(100.0, np.empty(0), 80.0, np.empty(0))
    assert d.diff.value == -20 and d.diff.interval is None and d.shows == compare.CANNOT


def _d(ratio_lo, ratio_hi, value=None):
    value = value if value is not None else (ratio_lo + ratio_hi) / 2
    return compare.Difference(compare.Estimate(100.0), compare.Estimate(100 * value),
                              compare.Estimate(100 * (value - 1), (100 * (ratio_lo - 1), 100 * (ratio_hi - 1))),
                              compare.Estimate(value, (ratio_lo, ratio_hi)), 0.05)


@pytest.mark.parametrize("lo,hi,floors,word,needle", [
    (0.76, 0.86, ("", ""), "lower", "B carries 19 % less than A (95 % interval 14 % to 24 % less)"),
    (1.1, 1.4, ("", ""), "higher", "B carries 25 % more than A"),
    (0.95, 1.04, ("", ""), compare.SAME, "these runs could show a difference of about 5.0 % or more"),
    (1.12, 1.3, ("", "tester-bound"), "higher", "B is at least 12 % higher than A"),
    (0.7, 0.9, ("", "tester-bound"), compare.CANNOT, "B's capacity is only a lower bound (tester-bound)"),
    (0.7, 0.9, ("not steady", ""), "lower", "B is at least 10 % lower than A"),
    (1.1, 1.3, ("not steady", ""), compare.CANNOT, "A's capacity is only a lower bound (not steady)"),
    (1.1, 1.3, ("x", "y"), compare.CANNOT, "both capacities are lower bounds"),
])
def test_verdict_words_and_floors(lo, hi, floors, word, needle):
    w, text, at_least = compare.verdict("A", "B", _d(lo, hi), a_floor=floors[0], b_floor=floors[1])
    assert w == word and needle in text, text
    assert at_least == ("at least" in text)


def test_verdict_unknown_capacity_names_the_side_and_reason():
    w, text, _ = compare.verdict("before", "after", _d(0.8, 0.9), a_unknown="tester 1 of 2 left no results file")
    assert w == compare.CANNOT
    assert text == "cannot compare: before's capacity is unknown because tester 1 of 2 left no results file"


def test_interpolate_columns_is_interpolate_per_column():
    rng = np.random.default_rng(2)
    x = np.sort(rng.uniform(10, 100, (6, 50)), axis=0)
    y = rng.uniform(0.01, 0.1, (6, 50))
    at = np.array([5.0, 20.0, 50.0, 80.0, 99.0, 150.0])
    want = np.array([np.interp(at, x[:, r], y[:, r], left=np.nan, right=np.nan) for r in range(50)])
    assert np.allclose(compare.interpolate_columns(x, y, at), want, equal_nan=True)
    assert np.allclose([compare.interpolate(x[:, r], y[:, r], at) for r in range(50)], want, equal_nan=True)


def test_interpolation_follows_load_order_on_a_plateau():
    # a saturated step (throughput 99, latency 80) after the knee (100, 20): latency at 99 is the knee's
    # side of the curve, not the saturated step's
    x = np.array([50.0, 100.0, 99.0])
    y = np.array([0.010, 0.020, 0.080])
    got = compare.interpolate(x, y, np.array([75.0, 99.0, 100.0, 101.0]))
    assert np.allclose(got[:3], [0.015, 0.0198, 0.020]) and np.isnan(got[3])


def test_rising_keeps_the_curve_a_function_of_throughput():
    assert compare.rising(np.array([10, 20, 30, 29, 31, 31])).tolist() == [0, 1, 2, 4]


def test_detectable_is_half_width_at_half_power():
    assert compare.detectable(-0.1, 0.1, power=0.5) == pytest.approx(0.1)


# ---------------------------------------------------------------- coverage on data of known capacity

def _cap_reps(rng, capacity, seed):
    rates, medians, _ = mm1_ramp(capacity)
    lat, off, err, st = synth.steps(rng, rates, medians, duration=10.0)
    cap, _ = bootstrap.run_replicates(lat, off, err, st, 95, SLO, 0.01, knee_reps=0, seed=seed)
    own = bootstrap.capacity_columns(*_own(lat, off, st), SLO)[0]
    return float(own), cap


def _own(lat, off, st):
    from headroom_plot import analysis
    xs, ps = [], []
    for k in np.unique(st):
        m = st == k
        s = analysis.step_stats(int(k), lat[m], off[m], np.zeros(int(m.sum()), bool), None, 1.0, 95)
        xs.append(s.throughput)
        ps.append(s.slo_s)
    n = len(xs)
    return np.array(xs)[:, None], np.array(ps)[:, None], np.ones((n, 1), bool)


def test_difference_interval_covers_the_true_difference():
    """Seeded coverage of B - A's 95 % interval, both sides of known capacity (an M/M/1 curve, load and
    latency correlated over about a second): same capacity (truth 0) and 20 % less (truth -20 %). 150 pairs
    each: a method that covers 95 % lands within 3 binomial standard errors (5.3 points) with probability
    99.7 %; the seeds are fixed, so the figures are the same on every run."""
    rng = np.random.default_rng(20261203)
    m = 150
    for cap_b in (150.0, 120.0):
        true_ratio = truth(cap_b) / truth(150.0)
        hits = 0
        for i in range(m):
            a, ra = _cap_reps(rng, 150.0, 2 * i)
            b, rb = _cap_reps(rng, cap_b, 2 * i + 1)
            d = compare.difference(a, ra, b, rb)
            hits += d.ratio.interval[0] <= true_ratio <= d.ratio.interval[1]
        assert abs(hits / m - 0.95) <= 3 * np.sqrt(0.95 * 0.05 / m), (cap_b, hits / m)


# ---------------------------------------------------------------- end to end

def _verdict(a_dir, b_dir, opts=None):
    opts = opts or Options(slo_percentile=95, slo_s=SLO)
    c = compare.build([load_run(a_dir, opts)], [load_run(b_dir, opts)], opts, bootstrap.REPLICATES,
                      {"A": "A", "B": "B"})
    return c.items[0]


def test_repeats_of_one_set_up_show_no_difference(tmp):
    """Two repeats of the same set-up, 20 times: no difference the data can show in at least 19 (a 95 %
    interval that leaves out the truth 1 time in 20)."""
    rng = np.random.default_rng(35)
    same = 0
    for i in range(20):
        item = _verdict(write_run(tmp / f"a{i}", rng, 150.0, "a"), write_run(tmp / f"b{i}", rng, 150.0, "b"))
        same += item.verdict == compare.SAME
    assert same >= 19, same


def test_twenty_percent_less_is_lower_every_time(tmp):
    """B's true capacity 20 % below A's: "lower" with an interval that holds the true ratio, 5 pairs of 5."""
    rng = np.random.default_rng(36)
    true_ratio = truth(120.0) / truth(150.0)
    for i in range(5):
        item = _verdict(write_run(tmp / f"a{i}", rng, 150.0, "a"), write_run(tmp / f"b{i}", rng, 120.0, "b"))
        lo, hi = item.capacity.ratio.interval
        assert item.verdict == compare.LOWER and lo <= true_ratio <= hi, (item.text, true_ratio)
        assert item.text.startswith("lower: B carries")


def test_cli_writes_the_table_json_report_and_plot(tmp, capsys):
    rng = np.random.default_rng(37)
    for i in range(2):
        write_run(tmp / "before" / f"r{i}", rng, 150.0, "before")
        write_run(tmp / "after" / f"r{i}", rng, 120.0, "after")
    out = tmp / "out"
    rc = cli.main(["compare", "--a", str(tmp / "before" / "*"), "--b", str(tmp / "after"), "--out", str(out),
                   "--format", "png", "--replicates", "200"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "verdict: lower: after carries" in printed and "latency at matched throughput" in printed
    doc = json.load(open(out / "comparison.json"))
    assert doc["sides"]["A"]["label"] == "before" and len(doc["sides"]["B"]["runs"]) == 2
    cap = doc["comparisons"][0]["capacity"]
    assert cap["verdict"] == "lower" and cap["ratio"]["interval"][1] < 1
    assert {p["percentile"] for p in doc["comparisons"][0]["latency"]} == {50, 95, 99}
    html = open(out / "report.html").read()
    assert "Verdict:" in html and "data:image/png;base64," in html
    assert (out / "comparison-get.png").exists()


def test_cli_label_names_the_sides(tmp, capsys):
    rng = np.random.default_rng(38)
    a = write_run(tmp / "x", rng, 150.0, "same")
    b = write_run(tmp / "y", rng, 150.0, "same")
    rc = cli.main(["compare", a, b, "--label", "A=2.15.19,B=2.15.20", "--out", str(tmp / "o"), "--format", "png",
                   "--replicates", "100"])
    assert rc == 0
    assert "B = 2.15.20 (1 run) against A = 2.15.19" in capsys.readouterr().out


def test_a_run_directory_named_compare_keeps_its_meaning(tmp, monkeypatch, capsys):
    rng = np.random.default_rng(39)
    write_run(tmp / "compare", rng, 150.0, "c")
    monkeypatch.chdir(tmp)
    assert cli.main(["compare", "--out", "o", "--format", "png", "--replicates", "0"]) == 0
    assert os.path.exists(tmp / "o" / "capacity.json")


def test_a_directory_named_compare_that_is_no_run_leaves_the_subcommand(tmp, monkeypatch, capsys):
    rng = np.random.default_rng(40)
    a = write_run(tmp / "x", rng, 150.0, "x")
    b = write_run(tmp / "y", rng, 150.0, "y")
    (tmp / "compare").mkdir()   # an earlier comparison's --out
    monkeypatch.chdir(tmp)
    assert cli.main(["compare", a, b, "--out", "compare", "--format", "png", "--replicates", "50"]) == 0
    assert os.path.exists(tmp / "compare" / "comparison.json")


def test_two_scaling_studies_compare_per_count_and_their_usl(tmp, capsys):
    """Both sides measured 1 and 2 instances: each count is compared, and the two USL fits (B scales worse:
    its 2-instance capacity is 20 % lower)."""
    rng = np.random.default_rng(41)
    for side, caps in (("a", (100.0, 180.0)), ("b", (100.0, 144.0))):   # below mm1_ramp's 200 req/s limit
        for n, cap in zip((1, 2), caps):
            write_run(tmp / side / f"n{n}", rng, cap, f"{n}-instances", instances=n)
    out = tmp / "o"
    assert cli.main(["compare", str(tmp / "a"), str(tmp / "b"), "--out", str(out), "--format", "png",
                     "--replicates", "200"]) == 0
    doc = json.load(open(out / "comparison.json"))
    got = {(c["a"]["instances"], c["b"]["instances"]): c["capacity"]["verdict"] for c in doc["comparisons"]}
    assert got == {(1, 1): compare.SAME, (2, 2): compare.LOWER}, got
    usl = doc["usl"]["get"]
    assert usl["a_instance_counts"] == [1, 2] and usl["kappa_fitted"] is False
    assert usl["sigma"]["b"]["value"] > usl["sigma"]["a"]["value"]
    assert "Universal Scalability Law" in capsys.readouterr().out
