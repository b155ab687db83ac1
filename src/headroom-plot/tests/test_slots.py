"""Several testers' steps are paired by slot (same concurrency and rate, overlapping time), not by position:
credhub-perf merges them (results.pairSlots) and headroom-plot shows its merge; the same fixtures and answers
as Go's results/merge_test.go (TestMerge*)."""
from __future__ import annotations

import json

import pytest

from conftest import our_row, write_meta, write_ours
from headroom_plot import credhubperf, report
from headroom_plot.csvread import InputError
from headroom_plot.runs import Options, load_run

OPTS = Options(slo_percentile=95, slo_s=0.100)


def _slots(conc, shift=0.0):
    """One tester's rows: slot i is the 10 s from shift + 10 i s, 100 requests of conc[i] ms at concurrency
    conc[i]; no rows when conc[i] is 0 (the tester missed the slot)."""
    return [our_row(shift + si * 10 + j * 0.1, c / 1000, concurrency=c)
            for si, c in enumerate(conc) if c for j in range(100)]


def _run(tmp, *testers):
    d = tmp / "run"
    d.mkdir()
    for i, rows in enumerate(testers):
        write_ours(d / f"results-{i}.csv", rows)
    write_meta(d, testers=len(testers))
    return load_run(str(d), OPTS)


def _check(run, want):
    got = [(s.concurrency, s.requests, round(s.mean_s * 1000, 3), s.incomplete_reason if s.incomplete else "")
           for s in run.steps]
    assert len(got) == len(want), got
    for g, (c, n, mean, why) in zip(got, want):
        assert g[:3] == (c, n, mean), got
        assert (g[3] == "") == (why == "") and why in g[3], got


def test_a_missed_slot_leaves_the_later_steps_paired(tmp):
    run = _run(tmp, _slots([1, 2, 3, 4]), _slots([1, 0, 3, 4]))
    _check(run, [(2, 200, 1, ""), (2, 100, 2, "tester 1 sent no load in it"), (6, 200, 3, ""), (8, 200, 4, "")])
    assert not any("steps" in w and "testers" in w for w in run.warnings)


def test_own_incomplete_mark_is_in_the_flags_and_survives_an_older_summary(tmp):
    run = _run(tmp, _slots([1, 2, 3]), _slots([1, 0, 3]))
    _, rows = report.step_table(run, OPTS)
    assert rows[1][-1] == "incomplete: tester 1 sent no load in it - not counted as capacity"
    # tester 0's own summary.json (it cannot see the others): steady flags, no incomplete
    with open(tmp / "run" / "summary.json", "w") as f:
        json.dump({"steps": [{"steady": True, "tester_bound": False}] * 3}, f)
    run = load_run(str(tmp / "run"), OPTS)
    assert [s.incomplete for s in run.steps] == [False, True, False]
    assert run.steps[1].flag_note == "incomplete: tester 1 sent no load in it"


def test_a_tester_that_stopped_leaves_the_last_step_last(tmp):
    run = _run(tmp, _slots([1, 2, 3]), _slots([1, 2]))
    _check(run, [(2, 200, 1, ""), (4, 200, 2, ""), (3, 100, 3, "tester 1 sent no load in it")])
    # the incomplete step does not count: capacity from the complete ones
    assert [s.counts(OPTS.max_error_rate) for s in run.steps] == [True, True, False]


def test_a_slot_with_another_concurrency_stays_apart(tmp):
    run = _run(tmp, _slots([1, 2, 3]), _slots([1, 5, 3]))
    _check(run, [(2, 200, 1, ""), (2, 100, 2, "tester 1 sent no load in it (its rows in this slot say concurrency 5)"),
                 (6, 200, 3, ""), (5, 100, 5, "tester 0 sent no load in it (its rows in this slot say concurrency 2)")])
    plan = [w for w in run.warnings if "same plan" in w]
    assert plan == ["in the slot at offsets 10.0-19.9 s tester 0's rows say concurrency 2, tester 1's concurrency 5: "
                    "the testers did not run the same plan; the two steps are kept apart, each incomplete"]


def test_overlapping_slots_pair_by_concurrency(tmp):
    run = _run(tmp, _slots([1, 2, 3]), _slots([1, 2, 3], shift=5.0))
    # both testers in every step, each for part of its slot: credhub-perf's span rule marks them incomplete
    half = "tester 0 sent load for 9.9 of the step's 14.9 s (stopped 5.0 s early); tester 1 sent load for 9.9 of " \
        "the step's 14.9 s (started 5.0 s late)"
    _check(run, [(2, 200, 1, half), (4, 200, 2, half), (6, 200, 3, half)])
    assert not any("same plan" in w for w in run.warnings)


def test_rows_out_of_order_are_refused_as_the_go_reader_does(tmp):
    """credhub-perf writes each step's rows together: a step's row after the next step's began is a sorted or
    concatenated file, refused by both readers (results.ReadCSV) rather than counted."""
    rows = ([our_row(j * 0.1, 0.001, concurrency=1) for j in range(99)]
            + [our_row(10 + j * 0.1, 0.002, concurrency=2) for j in range(50)]
            + [our_row(9.9, 0.001, concurrency=1)]
            + [our_row(10 + j * 0.1, 0.002, concurrency=2) for j in range(50, 100)])
    with pytest.raises(InputError, match=r"results-1.csv:151: rows of the step at concurrency 1, rate 0 appear "
                                         r"again after another step \(first at line 2\)"):
        _run(tmp, _slots([1, 2]), rows)


def _spans(*spans):
    """One tester's rows: for each (conc, start, n), n requests of conc ms at concurrency conc, 100 ms apart."""
    return [our_row(a + j * 0.1, c / 1000, concurrency=c) for c, a, n in spans for j in range(n)]


def test_a_slot_with_a_gap_between_testers_is_one_step(tmp):
    # one tester stops 0.5 s into the last slot, the other sends its first request of it 1 s in: one step,
    # incomplete as neither loaded it for the whole slot
    stopped, late = _spans((1, 0, 100), (2, 10, 100), (3, 20, 5)), _spans((1, 0, 100), (2, 10, 100), (3, 21, 90))
    for n, order in enumerate(((stopped, late), (late, stopped))):
        (tmp / str(n)).mkdir()
        run = _run(tmp / str(n), *order)
        _check(run, [(2, 200, 1, ""), (4, 200, 2, ""),
                     (6, 95, 3, "of the step's 9.9 s (stopped 9.5 s early)")])
        assert not any("same plan" in w for w in run.warnings)


def test_a_gap_with_another_step_between_stays_apart(tmp):
    run = _run(tmp, _spans((1, 0, 100), (2, 10, 5)), _spans((1, 0, 100), (3, 10, 100), (2, 20, 100)))
    _check(run, [(2, 200, 1, ""), (2, 5, 2, "tester 1 sent no load in it (its rows in this slot say concurrency 3)"),
                 (2, 100, 2, "tester 0 sent no load in it"),
                 (3, 100, 3, "tester 0 sent no load in it (its rows in this slot say concurrency 2)")])
    assert [w for w in run.warnings if "same plan" in w] == [
        "in the slot at offsets 10.0-10.4 s tester 0's rows say concurrency 2, tester 1's concurrency 3: "
        "the testers did not run the same plan; the two steps are kept apart, each incomplete"]


def test_complete_run_unchanged_by_pairing(tmp):
    run = _run(tmp, _slots([1, 2, 3]), _slots([1, 2, 3]))
    _check(run, [(2, 200, 1, ""), (4, 200, 2, ""), (6, 200, 3, "")])
    assert all(s.incomplete is None for s in run.steps)


def test_without_credhub_perf_a_merge_says_how_to_get_it(tmp, monkeypatch):
    """Several testers' steps are merged by credhub-perf: without it, one line naming where it looked and the fix."""
    monkeypatch.setenv("CREDHUB_PERF", str(tmp / "no-such-credhub-perf"))
    with pytest.raises(InputError, match=r"^CREDHUB_PERF=.*no-such-credhub-perf is not an executable "
                                         r"file, and headroom-plot needs credhub-perf for merging the steps of several "
                                         r"testers: build it with make build, or set "
                                         r"CREDHUB_PERF=/path/to/credhub-perf$"):
        _run(tmp, _slots([1, 2]), _slots([1, 2]))
    monkeypatch.delenv("CREDHUB_PERF")
    monkeypatch.setenv("PATH", str(tmp))
    monkeypatch.setattr(credhubperf, "places", lambda: [("PATH", str(tmp))])
    with pytest.raises(InputError, match=r"^credhub-perf not found \(looked at \$CREDHUB_PERF, PATH\), and "
                                         r"headroom-plot needs credhub-perf for merging the steps of several testers: build it "
                                         r"with make build, or set CREDHUB_PERF=/path/to/credhub-perf$"):
        load_run(str(tmp / "run"), OPTS)
