"""A run directory whose meta.json names more testers than left a results file: incomplete everywhere.

The fixture run directories and what credhub-perf summary says about them (answers.json) are shared with
the Go side's tests (src/credhub-perf/results/missing_test.go, `go test ./results -update` rewrites them):
three-testers-one-file (meta.json: 3 testers; only tester 0's files, its own summary.json giving a
capacity, as when only tester 0's tarball was collected) and two-testers-both (the control)."""
import json
import os
import shutil
from pathlib import Path

import pytest

from headroom_plot import cli, runs
from headroom_plot.runs import Options, load_run

from conftest import go_testdata


FIX = Path(go_testdata("missing-testers"))
ANSWERS = json.loads((FIX / "answers.json").read_text())
THREE, TWO = "three-testers-one-file", "two-testers-both"
WHY = "testers 1, 2 of 3 left no results file: their load is in no figure"
OPTS = Options(slo_percentile=95, slo_s=0.100, max_error_rate=0.01)


def _copy(tmp, name: str, summary: dict | None = None) -> str:
    """The fixture run directory; summary: replaces its summary.json (the tester's own)."""
    d = tmp / name
    shutil.copytree(FIX / name, d)
    if summary is not None:
        (d / "summary.json").write_text(json.dumps(summary))
    return str(d)


def _go(name: str) -> dict:
    return ANSWERS["runs"][name]["summary"]


@pytest.mark.parametrize("case", ANSWERS["reasons"], ids=lambda c: f"{c['planned']}-have-{c['have']}")
def test_missing_testers_rule_is_gos(case):
    missing = runs.missing_testers(case["planned"], set(case["have"]))
    assert missing == case["missing"]
    assert (runs.missing_testers_reason(case["planned"], missing) if missing else "") == case["reason"]


@pytest.mark.parametrize("fresh", [False, True], ids=["tester 0's own summary.json", "summary's summary.json"])
def test_missing_testers_make_every_step_incomplete_and_no_capacity(tmp, fresh):
    go = _go(THREE)
    assert go["incomplete"] is True and go["incomplete_reason"] == WHY and go["max_throughput_at_slo"] is None
    run = load_run(_copy(tmp, THREE, go if fresh else None), OPTS)
    assert run.incomplete_reason == WHY
    assert len(run.steps) == len(go["steps"]) == 3
    assert [s.incomplete for s in run.steps] == [True] * 3
    assert [s.incomplete_reason for s in run.steps] == [t["incomplete_reason"] for t in go["steps"]] == [WHY] * 3
    assert all(s.flag_note == "incomplete: " + WHY for s in run.steps)
    assert run.max_tput is None and run.knee is None
    assert run.no_capacity_why == ANSWERS["runs"][THREE]["no_capacity"] == "incomplete run: " + WHY
    text = "\n".join(run.warnings)
    assert f"NO CAPACITY at the SLO: incomplete run: {WHY}." in text
    assert "3 step(s) incomplete (step 1, 2, 3)" in text


def test_summary_jsons_verdict_is_taken(tmp):
    """summary.json computed from the directory's files says why; the plotter says the same, not its own."""
    go = json.loads(json.dumps(_go(THREE)))
    go["incomplete_reason"] = "the Go side's words"
    for t in go["steps"]:
        t["incomplete_reason"] = "the Go side's words"
    run = load_run(_copy(tmp, THREE, go), OPTS)
    assert run.incomplete_reason == "the Go side's words"
    assert {s.incomplete_reason for s in run.steps} == {"the Go side's words"}
    # ...but not from a summary.json of other files: the rule is applied to what is there.
    go["sources"] = ["results-0.csv", "results-1.csv", "results-2.csv"]
    assert load_run(_copy(tmp / "b", THREE, go), OPTS).incomplete_reason == WHY


@pytest.mark.parametrize("fresh", [False, True], ids=["tester 0's own summary.json", "summary's summary.json"])
def test_both_testers_there_is_complete(tmp, fresh):
    go = _go(TWO)
    assert go["missing_testers"] == [] and "incomplete" not in go
    run = load_run(_copy(tmp, TWO, go if fresh else None), OPTS)
    assert run.incomplete_reason == "" and not any(s.incomplete for s in run.steps)
    assert run.max_tput == pytest.approx(go["max_throughput_at_slo"], rel=0.02)
    assert run.no_capacity_why == ANSWERS["runs"][TWO]["no_capacity"] == ""


def test_a_bare_csv_is_not_judged_against_its_directorys_meta(tmp):
    """One tester's CSV given alone is that tester's run (as `credhub-perf summary FILE.csv`)."""
    run = load_run(os.path.join(_copy(tmp, THREE), "results-0.csv"), OPTS)
    assert run.incomplete_reason == "" and run.max_tput is not None


def test_hostile_testers_counts(tmp):
    d = Path(_copy(tmp, THREE))
    meta = json.loads((d / "meta.json").read_text())
    for testers, want in ((True, ""), ("3", ""), (1, ""), (1001, "")):
        meta["testers"] = testers
        (d / "meta.json").write_text(json.dumps(meta))
        run = load_run(str(d), OPTS)
        assert run.incomplete_reason == want, testers
    assert any("more than 1000: not checked" in w for w in run.warnings)
    meta["testers"] = 2
    (d / "meta.json").write_text(json.dumps(meta))
    (d / "meta-7.json").write_text(json.dumps(dict(meta, tester=7, testers=4)))
    assert load_run(str(d), OPTS).incomplete_reason == "testers 1, 2, 3 of 4 left no results file: their load " \
                                                       "is in no figure"


def test_report_and_plots_say_incomplete(tmp, capsys):
    """headroom-plot end to end: the report names the missing testers, gives no capacity and never says
    every tester loaded every step; the overlay's legend and capacity.json say the same."""
    out = tmp / "out"
    assert cli.main([_copy(tmp, THREE), "--out", str(out), "--format", "png"]) == 0
    capsys.readouterr()
    md = (out / "report.md").read_text()
    assert f"INCOMPLETE RUN: {WHY}." in md
    assert "every tester loaded every step" not in md and "no incomplete step" not in md
    assert f"NO CAPACITY for label missing-testers: incomplete run: {WHY}." in md
    assert "| ? (label missing-testers) | 1 | unknown: no step counts (see below) | - | unknown |" in md
    assert md.count(f"incomplete: {WHY} - not counted as capacity") == 3
    assert "Max throughput within the SLO: none (incomplete run); knee: none (incomplete run)" in md
    cap = json.loads((out / "capacity.json").read_text())["scenarios"]["get"]["capacity"]
    assert cap[0]["capacity_rps"] is None and cap[0]["no_capacity_reason"] == "incomplete run: " + WHY
    assert (out / "headroom-get-missing-testers.png").stat().st_size > 1000
