"""The time-ordered bootstrap behind the capacity and knee intervals."""
import numpy as np
import pytest

from headroom_plot import analysis, bootstrap

import synth


@pytest.mark.parametrize("k", [1, 2, 8, 20, 31])
def test_block_weights_draw_k_slices_each_equally_often(k):
    w = bootstrap.block_weights(k, 4000, np.random.default_rng(1))
    assert w.shape == (4000, k) and np.all(w.sum(axis=1) == k)
    # circular blocks: every slice has the same expected weight (1)
    assert np.allclose(w.mean(axis=0), 1.0, atol=0.08)


def test_block_weights_keep_neighbours_together():
    w = bootstrap.block_weights(30, 2000, np.random.default_rng(2))
    # how often a slice is drawn goes with how often its neighbour is, not with a far slice
    assert np.corrcoef(w[:, 10], w[:, 11])[0, 1] > 0.5
    assert np.corrcoef(w[:, 10], w[:, 25])[0, 1] < 0


def test_capacity_columns_match_the_scalar_definition():
    rng = np.random.default_rng(3)
    for _ in range(300):
        s = rng.integers(1, 7)
        x = np.sort(rng.uniform(10, 1000, s))
        p = rng.uniform(0.005, 0.05, s)
        ok = rng.random(s) > 0.2
        want, _ = analysis.max_throughput_at_slo(x, p, ok, 0.025)
        got = bootstrap.capacity_columns(x[:, None], p[:, None], ok[:, None], 0.025)[0]
        assert (want is None and np.isnan(got)) or got == pytest.approx(want)


def test_step_replicates_centre_on_the_step():
    rng = np.random.default_rng(4)
    off, lat = synth.step_rows(rng, 0.0, 200.0, 0.01, 15.0)
    r = bootstrap.step_replicates(lat, off, np.zeros(len(lat), bool), 95, 1.0, 2000, np.random.default_rng(5))
    s = analysis.step_stats(0, lat, off, np.zeros(len(lat), bool), None, 1.0, 95)
    assert np.median(r["pct"]) == pytest.approx(s.slo_s, rel=0.02)
    assert np.mean(r["throughput"]) == pytest.approx(s.throughput, rel=0.01)
    assert np.mean(r["mean"]) == pytest.approx(s.mean_s, rel=0.01)


def test_capacity_intervals_cover_the_truth():
    """Seeded coverage on steps with load and latency correlated over about a second.

    The truth is the capacity the estimator converges to: the SLO crossing
    of the steps' true throughput and true p95. 400 repetitions: a method
    that covers 95 % lands within 3 binomial standard errors,
    3 sqrt(0.95 * 0.05 / 400) = 3.3 points, with probability 99.7 %; the
    seeds are fixed, so the figure is the same on every run (92.25 % here:
    docs/design.md says where the remaining shortfall comes from). The plain
    percentile interval, before studentize(), covered 87 % on the same data.
    """
    rng = np.random.default_rng(20261124)
    rates, medians, p = synth.ramp_for(150.0, 0.025)
    truth = synth.crossing(rates, p, 0.025)
    hits, m = 0, 400
    for i in range(m):
        lat, off, err, st = synth.steps(rng, rates, medians, duration=15.0)
        cap, _ = bootstrap.run_replicates(lat, off, err, st, 95, 0.025, 0.01, knee_reps=0, seed=i)
        lo, hi = bootstrap.interval(cap)
        hits += lo <= truth <= hi
    tolerance = 3 * np.sqrt(0.95 * 0.05 / m)
    assert abs(hits / m - 0.95) <= tolerance, hits / m


def test_t_quantile_known_values():
    # Student t 97.5 % points from the tables
    for df, want in [(2, 4.303), (3, 3.182), (6, 2.447), (10, 2.228), (30, 2.042), (1e9, 1.960)]:
        assert bootstrap.t_quantile(df) == pytest.approx(want, rel=0.01)


def test_studentize_widens_about_the_point_and_keeps_nan():
    reps = np.array([90.0, 100.0, 110.0, np.nan])
    out = bootstrap.studentize(reps, 100.0, 6)
    assert out[1] == 100.0 and np.isnan(out[3])
    assert out[2] - 100 == pytest.approx(10 * 2.4468 / 1.95996, rel=1e-3)
    assert bootstrap.studentize(reps, float("nan"), 6) is reps
    assert bootstrap.degrees_of_freedom(3.0) == 6.0 and bootstrap.degrees_of_freedom(1.0) == 2.0


def test_knee_replicates_bracket_the_knee():
    rng = np.random.default_rng(6)
    rates, medians, _ = synth.ramp_for(150.0, 0.025)
    lat, off, err, st = synth.steps(rng, rates, medians, duration=15.0)
    cap, knee = bootstrap.run_replicates(lat, off, err, st, 95, 0.025, 0.01, reps=200, knee_reps=50, seed=1)
    assert len(cap) == 200 and len(knee) == 50
    xs = np.array([np.sum(st == k) / 15.0 for k in range(8)])
    means = np.array([lat[st == k].mean() for k in range(8)])
    point = analysis.fit_knee(np.maximum.accumulate(xs), means).throughput
    lo, hi = bootstrap.interval(knee)
    assert lo < hi and lo <= point * 1.02 and hi >= point * 0.98


def test_combining_runs_widens_with_their_spread():
    rng = np.random.default_rng(7)
    a = 100 + rng.standard_normal(400)
    same = bootstrap.combine([a, 100 + rng.standard_normal(400), 100 + rng.standard_normal(400)])
    apart = bootstrap.combine([a, 120 + rng.standard_normal(400), 80 + rng.standard_normal(400)])
    w_same = np.subtract(*bootstrap.interval(same)[::-1])
    w_apart = np.subtract(*bootstrap.interval(apart)[::-1])
    assert w_apart > 5 * w_same
    assert np.median(apart) == pytest.approx(100, abs=3)
    assert bootstrap.combine([a]) is a


def test_never_met_replicates_are_nan_and_few_give_no_interval():
    assert bootstrap.interval(np.full(100, np.nan)) == (None, None)
    assert bootstrap.interval(np.arange(5.0)) == (None, None)


def test_unusable_steps_never_count_in_replicates():
    rng = np.random.default_rng(8)
    rates, medians, p = synth.ramp_for(150.0, 0.025)
    lat, off, err, st = synth.steps(rng, rates, medians, duration=8.0)
    usable = np.ones(8, dtype=bool)
    usable[3:] = False           # e.g. tester-bound from step 4: capacity only from the first three steps
    cap, _ = bootstrap.run_replicates(lat, off, err, st, 95, 0.025, 0.01, reps=100, knee_reps=0, usable=usable)
    assert np.nanmax(cap) <= rates[2] * 1.1
    full, _ = bootstrap.run_replicates(lat, off, err, st, 95, 0.025, 0.01, reps=100, knee_reps=0)
    assert np.nanmedian(full) > rates[3]


@pytest.mark.parametrize("seed", range(6))
def test_bins_below_is_the_whole_products_count(seed):
    """The bisection finds, for every replicate, what counting over the whole product found (the
    percentile's bin), on steps of 1 to 300 slices and 1 to 4000 bins, ranks at the edges included."""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        k, nb, reps = int(rng.integers(1, 300)), int(rng.integers(1, 4000)), int(rng.integers(1, 60))
        # counts 0 to 5 of a uniform draw (Poisson draws of this many cells were most of the test's time)
        hist = rng.integers(0, int(rng.integers(1, 7)), size=(k, nb), dtype=np.int8).astype(np.float64)
        hist[:, rng.random(nb) < 0.5] = 0  # empty bins: flat stretches of the cumulative histogram
        W = bootstrap.block_weights(k, reps, rng)
        n = W @ hist.sum(axis=1)
        rank = np.maximum(np.ceil(rng.choice([0.0, 50.0, 95.0, 99.9, 100.0, 101.0]) / 100.0 * n), 1)
        want = (np.cumsum(W @ hist, axis=1) < rank[:, None]).sum(axis=1)
        got = bootstrap.bins_below(W, np.cumsum(hist, axis=1), rank)
        assert np.array_equal(got, want)


# sums of the 400 replicates of test_step_replicates_known_answer's step, recorded from this implementation
# to catch unintended changes; equal to what cumsum(W @ hist) counted over every bin gives
KNOWN_STEP_SUMS = [44649.4938204489, 4.499425693360788, 3.9239016101094135, 6.229822280419178]


def test_step_replicates_known_answer():
    """The replicates of a fixed, seeded step, to the bit (KNOWN_STEP_SUMS)."""
    rng = np.random.default_rng(7)
    off, lat = synth.step_rows(rng, 0.0, 120.0, 0.01, 20.0)
    err = rng.random(len(lat)) < 0.01
    r = bootstrap.step_replicates(lat, off, err, 95, 1.0, 400, np.random.default_rng(8))
    got = [float(np.sum(r[key])) for key in ("throughput", "error_rate", "mean", "pct")]
    assert got == KNOWN_STEP_SUMS, got
