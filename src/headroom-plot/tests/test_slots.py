"""Several testers' steps are paired by slot (same concurrency and rate, overlapping time), not by position:
the same fixtures and answers as Go's results/merge_test.go (TestMerge*)."""
from __future__ import annotations

import json

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import our_row, write_meta, write_ours
from headroom_plot import analysis, report
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
    # both testers in every step (the span rule for partial slots is summary.json's, credhub-perf's)
    _check(run, [(2, 200, 1, ""), (4, 200, 2, ""), (6, 200, 3, "")])
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
    # one tester stops 0.5 s into the last slot, the other sends its first request of it 1 s in
    stopped, late = _spans((1, 0, 100), (2, 10, 100), (3, 20, 5)), _spans((1, 0, 100), (2, 10, 100), (3, 21, 90))
    for n, order in enumerate(((stopped, late), (late, stopped))):
        (tmp / str(n)).mkdir()
        run = _run(tmp / str(n), *order)
        _check(run, [(2, 200, 1, ""), (4, 200, 2, ""), (6, 95, 3, "")])
        assert not any("same plan" in w for w in run.warnings)


def test_a_gap_with_another_step_between_stays_apart(tmp):
    run = _run(tmp, _spans((1, 0, 100), (2, 10, 5)), _spans((1, 0, 100), (3, 10, 100), (2, 20, 100)))
    _check(run, [(2, 200, 1, ""), (2, 5, 2, "tester 1 sent no load in it (its rows in this slot say concurrency 3)"),
                 (2, 100, 2, "tester 0 sent no load in it"),
                 (3, 100, 3, "tester 0 sent no load in it (its rows in this slot say concurrency 2)")])
    assert [w for w in run.warnings if "same plan" in w] == [
        "in the slot at offsets 10.0-10.4 s tester 0's rows say concurrency 2, tester 1's concurrency 3: "
        "the testers did not run the same plan; the two steps are kept apart, each incomplete"]


def test_pair_slots_gap_known_answer():
    # tester 0 stopped 0.1 s into (3, 0); tester 1 began it 0.2 s in; tester 2 repeats (1, 0) after (2, 0)
    local = [[(0, (1, 0.0), 0.0, 0.9, 1.0), (0, (2, 0.0), 1.0, 1.9, 2.0), (0, (3, 0.0), 2.0, 2.1, 2.1)],
             [(1, (1, 0.0), 0.0, 0.9, 1.0), (1, (2, 0.0), 1.0, 1.9, 2.0), (1, (3, 0.0), 2.2, 2.9, 3.0)],
             [(2, (3, 0.0), 3.5, 3.9, 4.0), (2, (1, 0.0), 4.0, 4.9, 5.0)]]
    maps, slots, warnings = analysis.pair_slots(local)
    assert maps == [[0, 2, 3], [0, 2, 3], [3, 1]]
    assert [(g.key[0], g.testers) for g in slots] == [(1, [0, 1]), (1, [2]), (2, [0, 1]), (3, [0, 1, 2])]
    assert warnings == []


def test_complete_run_unchanged_by_pairing(tmp):
    run = _run(tmp, _slots([1, 2, 3]), _slots([1, 2, 3]))
    _check(run, [(2, 200, 1, ""), (4, 200, 2, ""), (6, 200, 3, "")])
    assert all(s.incomplete is None for s in run.steps)


def test_pair_slots_known_answer():
    # tester 1 missed key (2, 0); tester 2's rows say (9, 0) in tester 0's (3, 0) slot
    local = [[(0, (1, 0.0), 0.0, 9.9, 10.0), (0, (2, 0.0), 10.0, 19.9, 20.0), (0, (3, 0.0), 20.0, 29.9, 30.0)],
             [(1, (1, 0.0), 0.0, 9.9, 10.0), (1, (3, 0.0), 20.0, 29.9, 30.0)],
             [(2, (1, 0.0), 0.0, 9.9, 10.0), (2, (2, 0.0), 10.0, 19.9, 20.0), (2, (9, 0.0), 20.0, 29.9, 30.0)]]
    maps, slots, warnings = analysis.pair_slots(local)
    assert maps == [[0, 1, 2], [0, 2], [0, 1, 3]]
    assert [(g.key[0], g.testers) for g in slots] == [(1, [0, 1, 2]), (2, [0, 2]), (3, [0, 1]), (9, [2])]
    assert slots[2].strange == {2: "its rows in this slot say concurrency 9"}
    assert slots[3].strange == {0: "its rows in this slot say concurrency 3", 1: "its rows in this slot say concurrency 3"}
    assert len(warnings) == 1 and "tester 0's rows say concurrency 3, tester 2's concurrency 9" in warnings[0]


@settings(max_examples=150, deadline=None, database=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(1, 4), st.integers(0, 255), st.integers(0, 19)),
                max_size=300))
def test_pair_slots_hostile_steps(raw):
    """Whatever the testers' steps (keys, times, overlaps): every step lands in one merged step of its own key,
    a tester once per merged step, and merged steps come in key order (Go's FuzzPairSlots, same invariants)."""
    local = [[], [], []]
    for f, c, start, length in raw:
        local[f].append((f, (c, 0.0), float(start), float(start + length), start + length + 0.001))
    maps, slots, warnings = analysis.pair_slots(local)
    assert [len(m) for m in maps] == [len(x) for x in local]
    for steps, m in zip(local, maps):
        for (tester, key, *_), i in zip(steps, m):
            assert slots[i].key == key and tester in slots[i].testers
    for g in slots:
        assert len(set(g.testers)) == len(g.testers)
    assert [g.key for g in slots] == sorted(g.key for g in slots)
    assert all("same plan" in w for w in warnings)
