"""Every headline figure labelled honestly: lower bounds, steps too short to judge steady, a cold warm-up,
extrapolated fits (known answers)."""
from __future__ import annotations

import json

from conftest import STEADY_WARMUP, closed_step, usage_steps, write_meta, write_ours
from headroom_plot import cli, plots, report
from headroom_plot.runs import Options, load_run

OPTS = Options(slo_percentile=95, slo_s=0.100)
OFF = {"mode": "off", "concurrency": 4, "duration_s": 0, "requests": 0, "errors": 0, "steady": False,
       "reason": "off (warmup.run: 0)"}
CONCS = (1, 2, 4, 8)


def _ramp(d, seconds, warmup, summary=None, label="r"):
    """Closed-loop steps of `seconds` each at 10 ms: 100 x concurrency req/s, all within the SLO."""
    d.mkdir()
    rows, t = [], 0.0
    for c in CONCS:
        rows += closed_step(t, c, 0.010, int(c * seconds / 0.010))
        t += seconds + 0.5
    write_ours(d / "results.csv", rows)
    write_meta(d, label=label, instances=1, warmup=warmup, steps=usage_steps(CONCS, summary or [{}] * len(CONCS)))
    if summary is not None:
        (d / "summary.json").write_text(json.dumps({"steps": summary}))
    return str(d)


def test_one_second_steps_are_not_judged(tmp):
    run = load_run(_ramp(tmp / "short", 1.0, OFF), OPTS)
    assert [s.unjudged for s in run.steps] == ["too short"] * 4
    assert not any(s.steady is True for s in run.steps)
    assert run.max_tput is None and run.no_capacity_why == (
        "4 of 4 steps met the SLO but none counts: 4 too short to judge steady, and the run warm-up was off")
    assert run.not_judged == ("4 of 4 steps could not be judged steady: steps of 1 s are too short to judge (their "
                              "requests must start over at least 2 s): use steps.duration of 3 s or more")
    text = "\n".join(run.warnings)
    assert "get run r: warm-up off: the first steps may measure a cold JVM" in text
    assert "get run r: 4 of 4 steps could not be judged steady" in text
    banners = plots.run_banners(run)
    assert banners[0] == "Warm-up off: the first steps may measure a cold JVM"
    assert banners[1] == "4 of 4 steps could not be judged steady (steps of 1 s are too short); not counted as capacity"


def test_summary_json_null_steady_is_not_judged(tmp):
    # credhub-perf's verdict for steps too short to judge: steady null, stationarity.not_judged
    flags = [{"concurrency": c, "rate": 0, "steady": None, "tester_bound": False,
              "stationarity": {"judged": False, "not_judged": "too short"}} for c in CONCS]
    run = load_run(_ramp(tmp / "short", 1.0, OFF, flags), OPTS)
    assert all(s.steady is None and s.unjudged == "too short" for s in run.steps)
    assert run.max_tput is None
    # after a run warm-up judged steady the same steps count, still marked
    run = load_run(_ramp(tmp / "warm", 1.0, STEADY_WARMUP, flags), OPTS)
    assert run.max_tput is not None and abs(run.max_tput - 800) < 40 and not run.capacity_is_lower_bound
    assert run.steps[0].flag_note == "not judged steady (too short)"
    assert not plots.run_banners(run)[0].startswith("Warm-up")


def test_capacity_is_a_lower_bound_when_higher_steps_are_left_out(tmp):
    ok = {"steady": True, "tester_bound": False}
    tb = {"steady": True, "tester_bound": True, "tester_bound_reason": "tester CPU 93 % of 2 core(s)",
          "tester_cpu": 0.93}
    flags = [dict(f, concurrency=c, rate=0) for c, f in zip(CONCS, (ok, ok, tb, tb))]
    run = load_run(_ramp(tmp / "bound", 3.0, STEADY_WARMUP, flags), OPTS)
    assert abs(run.max_tput - 200) < 10 and run.capacity_is_lower_bound
    assert run.lower_bound_reason == "2 tester-bound (tester CPU 93 %): add testers or use a bigger VM"
    assert abs(run.lower_bound_top - 800) < 40
    assert run.capacity_text() == (f"at least {run.max_tput:,.0f} req/s (steps up to {run.lower_bound_top:,.0f} req/s "
                                   "within the SLO were not counted: 2 tester-bound (tester CPU 93 %): add testers "
                                   "or use a bigger VM)")
    assert plots.run_banners(run) == [f"Capacity is a LOWER BOUND: at least {run.max_tput:,.0f} req/s (steps up to "
                                      f"{run.lower_bound_top:,.0f} req/s within the SLO were not counted: 2 "
                                      "tester-bound (tester CPU 93 %))"]
    # a left-out step below the best one is no reason for a lower bound
    flags = [dict(f, concurrency=c, rate=0) for c, f in zip(CONCS, (tb, ok, ok, ok))]
    run = load_run(_ramp(tmp / "low", 3.0, STEADY_WARMUP, flags), OPTS)
    assert not run.capacity_is_lower_bound and run.capacity_text() == f"{run.max_tput:,.0f} req/s"


def test_report_and_capacity_json_say_lower_bound_and_unjudged(tmp):
    ok = {"steady": True, "tester_bound": False}
    tb = {"steady": True, "tester_bound": True, "tester_bound_reason": "tester CPU 93 % of 2 core(s)"}
    bound = _ramp(tmp / "bound", 3.0, STEADY_WARMUP, [dict(f, concurrency=c, rate=0)
                                                      for c, f in zip(CONCS, (ok, ok, tb, tb))], label="bound")
    short = _ramp(tmp / "short", 1.0, OFF, label="short")
    out = tmp / "out"
    assert cli.main([bound, short, "--out", str(out), "--format", "png", "--quiet", "--target-rps", "150",
                     "--replicates", "20"]) == 0
    cap = json.loads((out / "capacity.json").read_text())["scenarios"]["get"]
    row = [c for c in cap["capacity"] if c["group"] == "1"][0]
    assert row["capacity_is_lower_bound"] is True
    assert row["lower_bound_reason"] == "bound: 2 tester-bound (tester CPU): add testers or use a bigger VM"
    assert "conservative" in cap["recommendation"]["text"]
    md = (out / "report.md").read_text()
    assert "\u2265 200 (lower bound: steps above it not counted, see below)" in md
    assert "Warm-up off: the first steps may measure a cold JVM." in md
    assert "Steadiness: 4 of 4 steps could not be judged steady" in md
    assert "every step was judged steady" not in md and "every step was steady" not in md


def test_report_never_says_every_step_steady_when_some_were_not_judged(tmp):
    run = load_run(_ramp(tmp / "warm", 1.0, STEADY_WARMUP), OPTS)
    out = tmp / "out"
    out.mkdir()
    report.write(str(out), [run], [], [], {}, {}, [], OPTS, None)
    md = (out / "report.md").read_text()
    assert "every step was judged steady" not in md and "too short to judge steady" in md


def test_fitted_curve_beyond_the_measured_steps_is_labelled_extrapolated(tmp, monkeypatch):
    from test_cli import _run_dir
    run = load_run(str(_run_dir(tmp, "ramp", 1, 1)), Options(slo_s=0.020))
    assert run.knee is not None and run.knee.b > 0
    figs = []
    monkeypatch.setattr(plots, "_save", lambda fig, *a, **k: figs.append(fig) or [])
    plots.headroom(run, Options(slo_s=0.020), str(tmp), ["png"])
    ax = figs[0].axes[0]
    labels = [ln.get_label() for ln in ax.get_lines()]
    inside = [ln for ln in ax.get_lines() if ln.get_label().startswith("fitted queueing curve over the measured")]
    assert inside and max(inside[0].get_xdata()) <= run.knee.measured_max * (1 + 1e-9)
    outside = [ln for ln in ax.get_lines() if "EXTRAPOLATED" in ln.get_label()]
    assert outside and min(outside[0].get_xdata()) >= run.knee.measured_max * (1 - 1e-9), labels
    knee = [ln for ln in ax.get_lines() if ln.get_label().startswith("knee")]
    for ln in knee:  # a knee is drawn only within the measured steps, or says it is extrapolated
        x = ln.get_xdata()[0]
        assert x <= run.knee.measured_max * 1.0001 or "EXTRAPOLATED" in ln.get_label()


def test_legend_is_off_the_data_and_the_extrapolated_curve_is_short(tmp, monkeypatch):
    """The legend hangs below the headroom axes (inside, it hid the lightest steps and the SLO line), and the
    fit beyond the measured steps is drawn only a little way, without naming its asymptote."""
    import numpy as np
    import synth
    d = synth.run_dir(str(tmp / "ramp"), np.random.default_rng(3), capacity=400.0, instances=1, duration=6.0)
    run = load_run(d, Options(slo_s=0.025))
    figs = []
    monkeypatch.setattr(plots, "_save", lambda fig, *a, **k: figs.append(fig) or [])
    plots.headroom(run, Options(slo_s=0.025), str(tmp), ["png"])
    fig = figs[0]
    ax = fig.axes[0]
    fig.canvas.draw()
    legend, axes = ax.get_legend().get_window_extent(), ax.get_window_extent()
    assert legend.y1 < axes.y0, (legend, axes)
    outside = [ln for ln in ax.get_lines() if "EXTRAPOLATED" in ln.get_label()]
    assert outside and max(outside[0].get_xdata()) <= run.knee.measured_max * (1 + plots.EXTRAPOLATE) * (1 + 1e-9)
    assert "asymptote" not in outside[0].get_label() and "not measured" in outside[0].get_label()
    assert run.knee.xmax > run.knee.measured_max * (1 + plots.EXTRAPOLATE)  # else the bound was not tested


def test_a_stopped_run_says_so_in_the_warnings_and_report(tmp):
    """summary.json's `stopped` (a run that did not finish its plan) reaches the warnings, naming the
    scenario, so the report never shows such a run as finished."""
    d = _ramp(tmp / "stopped", 3.0, STEADY_WARMUP)
    line = ("stopped after 3 of 8 planned steps (interrupted; cleaned up later by `credhub-perf cleanup`: "
            "1830 credentials removed)")
    (tmp / "stopped" / "summary.json").write_text(json.dumps({"stopped": line}))
    run = load_run(d, OPTS)
    assert f"get run r: {line}" in run.warnings
    out = tmp / "out"
    assert cli.main([d, "--out", str(out), "--format", "png", "--quiet"]) == 0
    assert line in (out / "report.md").read_text()
