"""headroom-plot compare refuses comparisons that mean nothing, and hostile input, with one line and exit 2."""
import json
import os
import shutil

import numpy as np
import pytest

from headroom_plot import cli

from conftest import STEADY_WARMUP, closed_step, write_meta, write_ours
from test_compare import write_run


@pytest.fixture
def pair(tmp):
    rng = np.random.default_rng(7)
    return write_run(tmp / "a", rng, 150.0, "a"), write_run(tmp / "b", rng, 150.0, "b")


def _refused(capsys, args, *needles):
    rc = cli.main(["compare"] + [str(a) for a in args])
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def _meta(path, **kw):
    p = os.path.join(path, "meta.json")
    m = json.load(open(p))
    m.update(kw)
    json.dump(m, open(p, "w"))


def test_different_slos_are_refused_unless_the_command_line_judges_both(pair, tmp, capsys):
    a, b = pair
    _meta(b, slo={"percentile": 99, "latency_s": 0.25})
    _refused(capsys, [a, b, "--out", tmp / "o"], "A's runs were judged at p95 \u2264 250 ms, B's at p99 \u2264 250 ms",
             "--slo-percentile")
    assert cli.main(["compare", a, b, "--out", str(tmp / "o"), "--slo-percentile", "95", "--slo-ms", "250",
                     "--format", "png", "--replicates", "50"]) == 0


def test_different_slos_within_a_side(pair, tmp, capsys):
    a, b = pair
    c = shutil.copytree(a, tmp / "c")
    _meta(c, slo={"percentile": 95, "latency_s": 0.1})
    _refused(capsys, ["--a", a, "--a", c, "--b", b, "--out", tmp / "o"], "A's runs were judged against different SLOs")


def test_the_same_run_on_both_sides(pair, tmp, capsys):
    a, b = pair
    _refused(capsys, ["--a", a, "--b", b, "--b", a, "--out", tmp / "o"], "is on both sides")
    _meta(a, run_id="20261203T120000Z-abcdef")
    c = shutil.copytree(a, tmp / "copy")
    _refused(capsys, [a, c, "--out", tmp / "o"], "the same run")


def test_no_scenario_in_common(pair, tmp, capsys):
    a, b = pair
    _meta(b, scenario="set")
    _refused(capsys, [a, b, "--out", tmp / "o"], "A ran get, B ran set: no scenario in common")


def test_closed_against_open_loop(pair, tmp, capsys):
    a, _ = pair
    d = tmp / "closed"
    d.mkdir()
    rows, t = [], 0.0
    for c in (1, 2, 4, 8):
        step = closed_step(t, c, 0.01 * (1 + c / 4), 200)
        rows += step
        t = max(r[0] + r[1] for r in step) + 0.01
    write_ours(d / "results.csv", rows)
    write_meta(d, instances=2, label="closed", warmup=STEADY_WARMUP, slo={"percentile": 95, "latency_s": 0.25})
    _refused(capsys, [a, d, "--out", tmp / "o"], "get: A's steps are open loop", "B's closed loop")


def test_one_side_empty(pair, tmp, capsys):
    a, _ = pair
    _refused(capsys, ["--a", a, "--b", str(tmp / "nothing-*"), "--out", tmp / "o"], "side B:", "matches no file")
    (tmp / "empty").mkdir()
    _refused(capsys, [a, tmp / "empty", "--out", tmp / "o"], "side B:", "the side is empty")
    _refused(capsys, [a, "--out", tmp / "o"], "1 side(s) given")
    _refused(capsys, ["--a", a, "--out", tmp / "o"], "side B is empty")


def test_a_run_without_rows(pair, tmp, capsys):
    a, b = pair
    with open(os.path.join(b, "results.csv")) as f:
        header = f.readline()
    with open(os.path.join(b, "results.csv"), "w") as f:
        f.write(header)
    _refused(capsys, [a, b, "--out", tmp / "o"], "no data rows")


def test_a_truncated_run(pair, tmp, capsys):
    a, b = pair
    p = os.path.join(b, "results.csv")
    data = open(p, "rb").read()
    open(p, "wb").write(data[:len(data) // 2 - 7])
    _refused(capsys, [a, b, "--out", tmp / "o"], "killed mid-write", "leave that run out")


def test_a_run_stopped_before_its_plan_ended(pair, tmp, capsys):
    a, b = pair
    json.dump({"stopped": "stopped after 3 of 8 planned steps (interrupted)"},
              open(os.path.join(b, "summary.json"), "w"))
    _refused(capsys, [a, b, "--out", tmp / "o"], "stopped after 3 of 8 planned steps", "re-run it")


def test_a_ramp_the_abort_policy_ended_is_complete(pair, tmp, capsys):
    a, b = pair
    why = "abort policy after step 6 of 7: p99 latency 2100ms above abort.max_latency 2s for 1 consecutive step(s)"
    json.dump({"stopped": f"stopped after 6 of 7 planned steps ({why})", "stopped_reason": why},
              open(os.path.join(b, "summary.json"), "w"))
    assert cli.main(["compare", a, b, "--out", str(tmp / "o"), "--format", "png", "--replicates", "50"]) == 0


@pytest.mark.parametrize("text", ['{"steps": [{"throughput": NaN}]}', '{"capacity_rps": Infinity}',
                                  '{"steps": [{"throughput": 1e999}]}'])
def test_nan_in_a_summary(pair, tmp, capsys, text):
    a, b = pair
    open(os.path.join(a, "summary.json"), "w").write(text)
    _refused(capsys, [a, b, "--out", tmp / "o"], "summary.json")


def test_bad_labels_and_mixed_sides(pair, tmp, capsys):
    a, b = pair
    _refused(capsys, [a, b, "--label", "before,after", "--out", tmp / "o"], "write A=NAME,B=NAME")
    _refused(capsys, [a, b, "--label", "A=x,A=y", "--out", tmp / "o"], "names A or B twice")
    _refused(capsys, [a, b, "--label", "A=" + "x" * 100, "--out", tmp / "o"], "1 to 60 printable characters")
    _refused(capsys, [a, "--b", b, "--out", tmp / "o"], "either as A B or with --a and --b")
    _refused(capsys, [a, b, "--out", tmp / "o", "--replicates", "nan"], "--replicates must be an integer")


def test_out_holding_a_headroom_report_is_refused(pair, tmp, capsys):
    a, b = pair
    (tmp / "report").mkdir()
    (tmp / "report" / "capacity.json").write_text("{}")
    _refused(capsys, [a, b, "--out", tmp / "report"], "holds a headroom report")


def test_a_side_whose_capacity_is_unknown_cannot_be_compared(pair, tmp, capsys):
    """An incomplete run (a tester left no results file): the verdict says so, with the reason."""
    a, b = pair
    os.rename(os.path.join(b, "results.csv"), os.path.join(b, "results-0.csv"))
    _meta(b, tester=0, testers=2)
    assert cli.main(["compare", a, b, "--out", str(tmp / "o"), "--format", "png", "--replicates", "50"]) == 0
    out = capsys.readouterr().out
    assert ("verdict: cannot compare: b's capacity is unknown because incomplete run: tester 1 of 2 left no "
            "results file") in out
    doc = json.load(open(tmp / "o" / "comparison.json"))
    assert doc["comparisons"][0]["capacity"]["verdict"] == "cannot compare"


def test_out_that_cannot_be_created_is_refused(pair, tmp, capsys):
    a, b = pair
    (tmp / "file").write_text("x")
    _refused(capsys, [a, b, "--out", tmp / "file" / "o"], f"--out {tmp / 'file' / 'o'}: cannot create: Not a directory")
