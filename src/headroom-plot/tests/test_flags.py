"""Steps flagged by credhub-perf (not steady, tester-bound) never count as capacity; older runs still read."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import STEADY_WARMUP, closed_step, go_testdata, usage_steps, write_meta, write_ours
from headroom_plot import analysis, report, runs
from headroom_plot.runs import Options, apply_step_flags, load_run, warmup_warning

OPTS = Options(slo_percentile=95, slo_s=0.100)
# credhub-perf's advice for tester_bound_reasons (results/advice_test.go holds Go to it)
with open(os.path.join(go_testdata("."), "tester_bound_advice.json")) as f:
    ADVICE = json.load(f)


def _run_dir(tmp, summary_steps=None, warmup=None, name="run", concurrencies=(1, 2, 4, 8), **meta):
    d = tmp / name
    d.mkdir()
    rows, t = [], 0.0
    # each concurrency at 10 ms: throughput 100 x concurrency req/s (100, 200, 400, 800), all within the SLO
    for c in concurrencies:
        rows += closed_step(t, c, 0.010, 200 * c)
        t += 2.5
    write_ours(d / "results.csv", rows)
    if warmup is not None:
        meta["warmup"] = warmup
    if summary_steps is not None and "steps" not in meta:
        # the tester's usage as the run recorded it, from which credhub-perf judges a step tester-bound
        meta["steps"] = usage_steps(concurrencies, [t if isinstance(t, dict) else {} for t in summary_steps])
    write_meta(d, **meta)
    if summary_steps is not None:
        with open(d / "summary.json", "w") as f:
            json.dump({"steps": summary_steps}, f)
    return str(d)


def _summary(flags):
    return [{"requests": 200 * c, **f} for c, f in zip((1, 2, 4, 8), flags)]


def test_flagged_steps_leave_capacity(tmp):
    ok = {"steady": True, "tester_bound": False}
    flags = [ok, ok,
             {"steady": False, "tester_bound": False,
              "stationarity": {"p50_drift": True, "p50_change": -0.25, "throughput_drift": False}},
             {"steady": True, "tester_bound": True, "tester_bound_reason": "tester CPU 93 % of 2 core(s)",
              "tester_cpu": 0.93}]
    run = load_run(_run_dir(tmp, _summary(flags)), OPTS)
    assert [s.counts(OPTS.max_error_rate) for s in run.steps] == [True, True, False, False]
    # the SLO was never crossed by a counted step: capacity is at least step 2's 200 req/s, not 800
    assert run.max_tput is not None and abs(run.max_tput - 200) < 10
    assert run.steps[2].flag_note == "not steady (p50 -25% from the first half to the second)"
    assert run.steps[3].flag_note == "tester-bound: tester CPU 93 % of 2 core(s)"
    assert run.steps[3].tester_cpu == 0.93
    text = "\n".join(run.warnings)
    assert "1 step(s) not steady (step 3)" in text and "1 step(s) tester-bound (step 4)" in text
    head, rows = report.step_table(run, OPTS)
    assert head[-2:] == ["tester CPU", "flags (not steady, not judged steady, tester-bound, incomplete)"]
    assert rows[3][-2] == "93%" and rows[3][-1].endswith("not counted as capacity")


def test_runs_before_the_flags_read_unchanged(tmp):
    # these 2 s steps are too short to judge steady: they count after a run warm-up judged steady
    run = load_run(_run_dir(tmp, _summary([{}] * 4), warmup={"mode": "auto", "steady": True}), OPTS)
    assert all(s.steady is None and s.tester_bound is None for s in run.steps)
    assert run.max_tput is not None and abs(run.max_tput - 800) < 40
    assert not any("not steady" in w or "tester-bound" in w for w in run.warnings)


def test_flags_with_mismatched_steps_are_not_applied(tmp):
    steps = [type("S", (), {"steady": None, "tester_bound": None})() for _ in range(3)]
    out = apply_step_flags("x", steps, {"steps": [{"steady": False}] * 2})
    assert out and "not applied" in out[0]
    assert all(s.steady is None for s in steps)


def test_hostile_flag_values_are_ignored(tmp):
    flags = [{"steady": "no", "tester_bound": 1, "tester_cpu": "x"},
             {"steady": None, "tester_cpu": -3}, {"tester_cpu": 1e300}, {"host_cpu": "x"}]
    run = load_run(_run_dir(tmp, _summary(flags)), OPTS)
    assert all(s.steady is None and s.tester_bound is None and s.tester_cpu is None for s in run.steps)


@pytest.mark.parametrize("value,text", [(float("nan"), "NaN"), (1e309, "Infinity")])
def test_flag_values_json_cannot_hold_are_refused(tmp, value, text):
    """json.dump writes NaN and Infinity, which are not JSON: the file is refused, naming the key."""
    flags = [{"steady": True}, {"tester_cpu": value}, {}, {}]
    with pytest.raises(runs.InputError, match=rf"summary.json: steps\[1\].tester_cpu: {text} is not a number"):
        load_run(_run_dir(tmp, _summary(flags)), OPTS)


def test_warmup_warning_and_report_line(tmp):
    not_steady = {"mode": "auto", "steady": False, "duration_s": 180.0, "requests": 54321,
                  "reason": "not steady by warmup.max 3m0s", "concurrency": 5}
    assert "ended after 180 s before the target was steady" in warmup_warning("r", {"warmup": not_steady})
    assert warmup_warning("r", {"warmup": dict(not_steady, steady=True)}) is None
    assert warmup_warning("r", {}) is None
    assert report.warmup_text({"warmup": not_steady}) == \
        "Run warm-up (auto): 54,321 unrecorded requests over 180 s, not steady by warmup.max 3m0s."
    assert report.warmup_text({"warmup": {"mode": "off"}}) == "Run warm-up: off."
    assert report.warmup_text({}) == ""
    run = load_run(_run_dir(tmp, None, warmup=not_steady), OPTS)
    assert "warm-up ended" in run.warnings[0]


def _counted_run(tmp, name, instances, flags):
    return _run_dir(tmp, _summary(flags), name=name, instances=instances, label=f"{instances}-instances")


def _host_bound(cpu):
    return {"steady": True, "tester_bound": True, "host_cpu": cpu,
            "tester_bound_reason": f"host CPU {cpu * 100:.0f} % busy on the tester's core(s)"}


def test_a_count_whose_steps_were_all_host_bound_is_named_not_dropped(tmp, capsys):
    """The single-host demo on a busy machine: every step of the 2-instance run met the SLO but was
    tester-bound by the host's CPU. Its capacity is unknown, and the report, capacity.json, the
    recommendation and stderr say so, why, and what to do; the advice is not 'a bigger VM'."""
    from headroom_plot import cli
    ok = {"steady": True, "tester_bound": False}
    one = _counted_run(tmp, "one", 1, [ok] * 4)
    two = _counted_run(tmp, "two", 2, [_host_bound(c) for c in (0.95, 0.97, 0.99, 0.99)])
    run = load_run(two, OPTS)
    assert run.max_tput is None
    assert run.no_capacity_why.startswith("4 of 4 steps met the SLO but none counts: 4 tester-bound "
                                          "(host CPU 95-99 % busy): other work kept the tester's CPUs busy: "
                                          "run on a quiet machine")
    assert "bigger VM" not in " ".join(run.warnings)
    out = tmp / "out"
    assert cli.main([one, two, "--out", str(out), "--target-rps", "100", "--format", "png"]) == 0
    err = capsys.readouterr().err
    assert "2-instances: NO CAPACITY at the SLO: 4 of 4 steps met the SLO" in err
    md = (out / "report.md").read_text()
    assert "| 2 | 1 | unknown: no step counts (see below) |" in md
    assert ("NO CAPACITY for 2 instance(s): 4 of 4 steps met the SLO but none counts: 4 tester-bound "
            "(host CPU 95-99 % busy)") in md
    assert "the scalability fit and the recommendation use only 1 instance(s)" in md
    assert "without 2 instance(s), whose capacity is unknown" in md
    caps = json.loads((out / "capacity.json").read_text())["scenarios"]["get"]["capacity"]
    assert caps[0]["no_capacity_reason"] is None and caps[0]["capacity_rps"] is not None
    assert caps[1]["capacity_rps"] is None and "host CPU 95-99 % busy" in caps[1]["no_capacity_reason"]


def test_a_count_that_never_met_the_slo_has_no_reason(tmp):
    """Not every missing capacity is unknown: steps that counted and missed the SLO mean 'never met'."""
    ok = {"steady": True, "tester_bound": False}
    run = load_run(_counted_run(tmp, "slow", 1, [ok] * 4), Options(slo_percentile=95, slo_s=0.001))
    assert run.max_tput is None and run.no_capacity_why == ""


def _two_testers(tmp, summary_steps, stop_at=None, name="two"):
    """Two testers at concurrency 1, 2, 4, 8 each (10 ms): merged 200, 400, 800, 1600 req/s. Tester 0
    stops sending at offset stop_at (within the last step, which runs from 7.5 s to 9.5 s)."""
    d = tmp / name
    d.mkdir()
    for tester in (0, 1):
        rows, t = [], 0.0
        for c in (1, 2, 4, 8):
            rows += closed_step(t, c, 0.010, 200 * c)
            t += 2.5
        if tester == 0 and stop_at is not None:
            rows = [r for r in rows if r[0] < stop_at]
        write_ours(d / f"results-{tester}.csv", rows)
    write_meta(d, testers=2, tester=0)
    with open(d / "summary.json", "w") as f:
        json.dump({"steps": summary_steps, "testers": 2}, f)
    return str(d)


INCOMPLETE = ("tester 0 sent load for 1.0 of the step's 2.0 s (stopped 1.0 s early): failed: step 4: "
              "the VM went away")


def test_incomplete_step_leaves_capacity(tmp):
    """Tester 0 stops halfway through the last step: the merged step holds 2400 requests over 2 s, 1200
    req/s, which would pass for the capacity; summary.json marks it incomplete, so capacity is at least
    the 800 req/s of the last complete step, and the step is named in the warnings and the step table."""
    ok = {"steady": True, "tester_bound": False}
    flags = [ok, ok, ok, {"steady": True, "tester_bound": False, "incomplete": True,
                          "incomplete_reason": INCOMPLETE}]
    d = _two_testers(tmp, [{"requests": n, **f} for n, f in zip((400, 800, 1600, 2400), flags)], stop_at=8.5)
    run = load_run(d, OPTS)
    assert [s.counts(OPTS.max_error_rate) for s in run.steps] == [True, True, True, False]
    assert abs(run.steps[3].throughput - 1200) < 30  # what the step alone would claim
    assert run.max_tput is not None and abs(run.max_tput - 800) < 20
    assert run.steps[3].incomplete is True and run.steps[3].flag_note == "incomplete: " + INCOMPLETE
    assert "1 step(s) incomplete (step 4): some tester did not load them" in "\n".join(run.warnings)
    head, rows = report.step_table(run, OPTS)
    assert rows[3][-1] == "incomplete: " + INCOMPLETE + " - not counted as capacity"
    # a summary.json without the mark: credhub-perf's merge marks the step all the same
    unmarked = load_run(_two_testers(tmp, [{"requests": n, **ok} for n in (400, 800, 1600, 2400)], stop_at=8.5,
                                     name="unmarked"), OPTS)
    assert unmarked.steps[3].incomplete is True and "tester 0 sent load for 1.0 of the step's 2.0 s (stopped " \
        "1.0 s early)" in unmarked.steps[3].incomplete_reason
    assert unmarked.max_tput is not None and abs(unmarked.max_tput - 800) < 20


def test_all_incomplete_is_unknown_capacity(tmp):
    """Tester 0 stops halfway through every step: credhub-perf marks each merged step incomplete (and drifting),
    and the run's no-capacity reason is its sentence (summary.txt's), as credhub-perf summary --json gives it."""
    d = tmp / "two"
    d.mkdir()
    for tester in (0, 1):
        rows, t = [], 0.0
        for c in (1, 2, 4, 8):
            rows += [r for r in closed_step(t, c, 0.010, 400 * c) if tester or r[0] < t + 2.0]
            t += 4.5
        write_ours(d / f"results-{tester}.csv", rows)
    write_meta(d, testers=2, warmup=STEADY_WARMUP)
    run = load_run(str(d), OPTS)
    assert run.max_tput is None and all(s.incomplete for s in run.steps)
    said = json.loads(subprocess.run([os.environ.get("CREDHUB_PERF") or "credhub-perf", "summary", "--json", str(d)],
                                     capture_output=True, check=True).stdout)["no_capacity_reason"]
    assert said.startswith("unknown: 4 of 4 steps met the SLO but none counts: ")
    assert run.no_capacity_why == said.removeprefix("unknown: ")


def test_hostile_incomplete_values_are_ignored(tmp):
    flags = [{"steady": True, "incomplete": "yes"}, {"steady": True, "incomplete": 1},
             {"steady": True, "incomplete": True, "incomplete_reason": 5}, {"steady": True, "incomplete": None}]
    run = load_run(_run_dir(tmp, _summary(flags)), OPTS)
    assert [s.incomplete for s in run.steps] == [None, None, True, None]
    assert run.steps[2].flag_note == "incomplete"


def test_flags_follow_their_step_in_a_capacity_search(tmp):
    """A capacity search probes 1, 8, 2, 4 (as the CSV holds them); credhub-perf's summary.json lists the
    steps by load (1, 2, 4, 8). The tester-bound flag of concurrency 8 must land on the CSV's second step,
    not on its fourth (concurrency 4), as pairing by position would put it."""
    ok = {"steady": True, "tester_bound": False}
    bound = {"steady": True, "tester_bound": True, "tester_bound_reason": "tester CPU 95 % of 1 core(s)"}
    summary = [{"concurrency": c, "rate": 0, **(bound if c == 8 else ok)} for c in (1, 2, 4, 8)]
    run = load_run(_run_dir(tmp, summary, concurrencies=(1, 8, 2, 4)), OPTS)
    assert [s.concurrency for s in run.steps] == [1, 8, 2, 4]
    assert [s.tester_bound for s in run.steps] == [False, True, False, False]
    assert abs(run.max_tput - 400) < 20  # concurrency 4; the tester-bound 800 req/s does not count


def test_flags_whose_steps_do_not_correspond_are_not_applied(tmp):
    steps = [type("S", (), {"steady": None, "tester_bound": None, "concurrency": c, "rate": 0.0})() for c in (1, 2)]
    out = apply_step_flags("x", steps, {"steps": [{"concurrency": 1, "rate": 0, "steady": False},
                                                  {"concurrency": 3, "rate": 0, "steady": False}]})
    assert out and "do not have the CSV's concurrency and rate" in out[0]
    assert all(s.steady is None for s in steps)


def test_the_report_gives_summary_jsons_advice(tmp):
    """A run's summary.json says what to do about its tester-bound steps; the report passes it on."""
    said = {"steady": True, "tester_bound": True, "tester_bound_reason": "tester CPU 95 % of 2 core(s)",
            "tester_cpu": 0.95, "tester_bound_advice": ["run the tester on its own VM"]}
    run = load_run(_run_dir(tmp, _summary([said] * 4)), OPTS)
    assert all(s.tester_bound_advice == ["run the tester on its own VM"] for s in run.steps)
    # the no-capacity sentence is credhub-perf's own, from the run's files
    assert run.no_capacity_why == ("4 of 4 steps met the SLO but none counts: 4 tester-bound (tester CPU 95 %): "
                                   "add testers or use a bigger VM")
    assert "so these steps measured the tester: run the tester on its own VM; they do not count" in \
        "\n".join(run.warnings)


def test_hostile_advice_falls_back_to_the_reasons(tmp):
    """tester_bound_advice that is not a list of strings is not shown: the step gets credhub-perf's advice for
    its reason (results/testdata/tester_bound_advice.json's)."""
    bound = {"steady": True, "tester_bound": True, "tester_bound_reason": "host CPU 97 % busy on the tester's core(s)"}
    flags = [dict(bound, tester_bound_advice=v) for v in ("run elsewhere", [1, None], [], {"a": "b"})]
    run = load_run(_run_dir(tmp, _summary(flags)), OPTS)
    want = [c["advice"] for c in ADVICE["advice"] if c["reason"] == bound["tester_bound_reason"]]
    assert want and all(s.tester_bound_advice == want[0] for s in run.steps)
    assert "run on a quiet machine" in run.no_capacity_why
