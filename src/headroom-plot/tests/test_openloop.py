"""The open-loop confirmation: which steps it is, what to size with, taken from credhub-perf (openloop.py)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from conftest import closed_step, write_meta, write_ours
from headroom_plot import analysis, openloop
from headroom_plot.runs import Options, load_run


def _step(conc, rate):
    return SimpleNamespace(concurrency=conc, rate=rate)


def test_has_both_kinds():
    assert openloop.has_both_kinds([0, 0, 150.0])
    assert not openloop.has_both_kinds([0, 0])
    assert not openloop.has_both_kinds([100.0, 200.0])
    assert not openloop.has_both_kinds([None, 100.0])


def test_confirmation_indices_known_answer():
    steps = [_step(1, 0.0), _step(2, 0.0), _step(38, 150.0), _step(63, 250.0)]
    doc = {"open_loop": {"steps": [3, 4]},
           "steps": [{"step": 1, "concurrency": 1, "rate": 0}, {"step": 2, "concurrency": 2, "rate": 0},
                     {"step": 3, "concurrency": 38, "rate": 150.0}, {"step": 4, "concurrency": 63, "rate": 250.0}]}
    assert openloop.confirmation_indices(steps, doc) == ([2, 3], "")
    assert openloop.confirmation_indices(steps, {"steps": doc["steps"]}) == ([], "")
    # hostile: steps named that the CSV does not have, or not at its end
    bad = dict(doc, open_loop={"steps": [3, 4, "x", True, None]})
    assert openloop.confirmation_indices(steps, bad)[0] == [2, 3]
    moved = [_step(38, 150.0), _step(1, 0.0), _step(2, 0.0), _step(63, 250.0)]
    idx, warn = openloop.confirmation_indices(moved, doc)
    assert idx == [] and "not the CSV's last steps" in warn
    idx, warn = openloop.confirmation_indices(steps, {"open_loop": {"steps": "3"}, "steps": doc["steps"]})
    assert idx == [] and warn


def test_size_with_rules():
    c = openloop.Confirmation(steps=[], latency=np.empty(0), offset=np.empty(0), error=np.empty(0),
                              step=np.empty(0))
    openloop.attach(c, {"open_loop": {"capacity": 183.3, "agree": False}, "size_with": 183.3, "headline": "h"})
    assert openloop.sized_by(c) == "open loop" and openloop.size_with(300.0, c) == 183.3
    openloop.attach(c, {"open_loop": {"capacity": 295.0, "agree": True}, "size_with": 300.0})
    assert openloop.sized_by(c) == "closed loop" and openloop.size_with(301.5, c) == 301.5
    openloop.attach(c, {"open_loop": {"capacity": None, "note": "no open-loop step met the SLO"}, "size_with": None})
    assert openloop.sized_by(c) == "open loop" and openloop.size_with(300.0, c) is None
    assert openloop.sized_by(None) == "closed loop" and openloop.size_with(300.0, None) == 300.0
    # hostile verdicts: not a dict, NaN, booleans
    openloop.attach(c, {"open_loop": [1], "size_with": float("nan"), "headline": 7})
    assert c.verdict == {} and c.size_with is None and c.headline == "" and openloop.sized_by(c) == "closed loop"


def test_scale_replicates():
    r = openloop.scale_replicates(np.array([90.0, 100.0, 110.0]), 100.0, 50.0)
    assert np.allclose(r, [45.0, 50.0, 55.0])
    assert len(openloop.scale_replicates(None, 100.0, 50.0)) == 0
    assert len(openloop.scale_replicates(np.array([1.0]), 0.0, 50.0)) == 0


def _open_rows(t0, rate, duration, latency_of):
    rows = []
    n = int(rate * duration)
    for i in range(n):
        lat = latency_of(i)
        rows.append((t0 + i / rate, lat, 200, int(rate // 4), rate))
    rows.sort(key=lambda r: r[0] + r[1])
    return rows


def test_run_with_confirmation(tmp):
    """A ramp of 1-3 workers at 10 ms (300 req/s within p95 <= 20 ms), then open steps at 150 req/s (5 ms) and
    250 req/s (every fifth request 50 ms): the ramp's figures come from the ramp alone, the confirmation's
    verdict from credhub-perf, and the capacity table sizes with the open-loop figure."""
    d = tmp / "run"
    d.mkdir()
    rows = []
    t = 0.0
    for c in (1, 2, 3):
        rows += closed_step(t, c, 0.01, 300 * c)
        t += 3.5
    rows += _open_rows(t, 150.0, 3.0, lambda i: 0.005)
    t += 3.5
    rows += _open_rows(t, 250.0, 3.0, lambda i: 0.05 if i % 5 == 0 else 0.005)
    write_ours(d / "results.csv", rows)
    write_meta(d, slo={"percentile": 95, "latency_s": 0.02})
    run = load_run(str(d), Options(slo_percentile=95, slo_s=0.02))
    assert len(run.steps) == 3 and run.confirmation is not None and len(run.confirmation.steps) == 2
    assert run.max_tput is not None and 280 < run.max_tput < 310
    assert len(run.latency) == sum(s.requests for s in run.steps)
    assert int(run.win_step.max()) == 2
    c = run.confirmation
    assert not c.agree and c.capacity is not None and 150 < c.capacity < 250
    assert "size with" in c.headline and openloop.sized_by(c) == "open loop"
    from headroom_plot.cli import _open_loop
    table = analysis.capacity_table([{"scenario": "get", "instances": 1, "label": "t", "max_tput": run.max_tput,
                                      "how": run.max_tput_how, "why": "", "knee": None, **_open_loop(run)}])
    assert table[0].sized_by == "open loop" and table[0].size_with == c.size_with
    assert table[0].open_loop == c.capacity and table[0].headlines == [c.headline]


def test_confirmation_view_drawn(tmp):
    """The time view of a run with a confirmation: one image, named for the run; none without one."""
    from headroom_plot import timeview
    d = tmp / "run"
    d.mkdir()
    rows = []
    t = 0.0
    for c in (1, 2):
        rows += closed_step(t, c, 0.01, 300 * c)
        t += 3.5
    rows += _open_rows(t, 150.0, 3.0, lambda i: 0.005 if i % 100 > 10 else 0.06 - 0.005 * (i % 100))
    write_ours(d / "results.csv", rows)
    write_meta(d, slo={"percentile": 95, "latency_s": 0.02})
    opts = Options(slo_percentile=95, slo_s=0.02)
    run = load_run(str(d), opts)
    run.slug = "get-t"
    assert run.confirmation is not None and len(run.confirmation.notes) == 1
    out = tmp / "out"
    out.mkdir()
    paths = timeview.draw(run, opts, str(out), ["png"])
    assert [p.rsplit("/", 1)[1] for p in paths] == ["confirmation-get-t.png"]
    run.confirmation = None
    assert timeview.draw(run, opts, str(out), ["png"]) == []


def test_cold_target_labelled(tmp):
    """Warm-up off and a target whose median falls as the load rises: credhub-perf's label reaches the run,
    the capacity table and capacity.json's row."""
    d = tmp / "cold"
    d.mkdir()
    rows, t = [], 0.0
    for c, lat in ((1, 0.018), (2, 0.012), (3, 0.008)):
        rows += closed_step(t, c, lat, int(3.0 / lat) * c)
        t += 3.5
    write_ours(d / "results.csv", rows)
    write_meta(d, slo={"percentile": 95, "latency_s": 0.05},
               warmup={"mode": "off", "concurrency": 1, "duration_s": 0, "requests": 0, "errors": 0, "steady": False,
                       "reason": "off (warmup.run: 0)"})
    run = load_run(str(d), Options(slo_percentile=95, slo_s=0.05))
    assert run.capacity_label.startswith("warm-up off: the capacity may be a cold target's (step 1")
    from headroom_plot.cli import _open_loop
    table = analysis.capacity_table([{"scenario": "get", "instances": 1, "label": "t", "max_tput": run.max_tput,
                                      "how": run.max_tput_how, "why": "", "knee": None, **_open_loop(run)}])
    assert table[0].capacity_labels == [run.capacity_label]
    from headroom_plot import report
    _, rows_ = report.capacity(table, "get")
    assert "[warm-up off: may be a cold target's]" in rows_[0][2]


def test_sized_by_reads_the_kind_and_never_sizes_with_a_miss():
    """size_with_kind decides; a null size_with after a confirmation of a closed-loop capacity is no figure at
    all, never the closed-loop one; agree is "confirmed"."""
    c = openloop.Confirmation(steps=[], latency=np.empty(0), offset=np.empty(0), error=np.empty(0),
                              step=np.empty(0))
    # touching brackets: held at 383, missed at 506 (the closed-loop figure): sized with 383, open loop
    openloop.attach(c, {"open_loop": {"closed_loop": 506.0, "capacity": 450.0, "held": 383.0, "agree": False},
                        "size_with": 383.0, "size_with_kind": "open_loop", "closed_loop_capacity": 506.0})
    assert (openloop.sized_by(c), openloop.size_with(506.0, c), c.held, c.closed_loop) == ("open loop", 383.0,
                                                                                           383.0, 506.0)
    assert not c.agree and not c.no_figure
    openloop.attach(c, {"open_loop": {"closed_loop": 506.0, "capacity": 540.0, "held": 520.0, "agree": True},
                        "size_with": 506.0, "size_with_kind": "closed_loop", "closed_loop_capacity": 506.0})
    assert openloop.sized_by(c) == "closed loop" and c.agree and openloop.size_with(505.0, c) == 505.0
    # none held: no figure, whatever the ramp's
    openloop.attach(c, {"open_loop": {"closed_loop": 506.0, "capacity": None, "held": None, "agree": False},
                        "size_with": None, "closed_loop_capacity": 506.0})
    assert openloop.sized_by(c) == "open loop" and openloop.size_with(506.0, c) is None and c.no_figure
    # the ramp found no capacity at this SLO: nothing to confirm, nothing to size with
    openloop.attach(c, {"open_loop": {"closed_loop": None, "capacity": 200.0, "agree": False}, "size_with": None,
                        "closed_loop_capacity": None})
    assert openloop.sized_by(c) == "closed loop" and openloop.size_with(None, c) is None and not c.no_figure
    # hostile kind: ignored, the figures decide
    openloop.attach(c, {"open_loop": {"closed_loop": 506.0, "capacity": 383.0, "agree": False}, "size_with": 383.0,
                        "size_with_kind": "both"})
    assert c.size_with_kind == "" and openloop.sized_by(c) == "open loop"


def _confirmed_run(tmp, name, open_steps):
    """A ramp of 1-3 workers at 10 ms (SLO p95 <= 20 ms), then open steps (rate, latency of request i), judged
    by the real credhub-perf."""
    d = tmp / name
    d.mkdir()
    rows, t = [], 0.0
    for c in (1, 2, 3):
        rows += closed_step(t, c, 0.01, 300 * c)
        t += 3.5
    for rate, lat in open_steps:
        rows += _open_rows(t, rate, 3.0, lat)
        t += 3.5
    write_ours(d / "results.csv", rows)
    write_meta(d, slo={"percentile": 95, "latency_s": 0.02})
    return load_run(str(d), Options(slo_percentile=95, slo_s=0.02))


def test_real_summaries_sized_as_credhub_perf_says(tmp):
    """credhub-perf's own verdicts on three confirmations: held above the closed-loop figure (confirmed), held
    at no rate tried (no figure: never the closed loop's), and in the capacity table, report and compare."""
    from headroom_plot import comparesizing, report
    from headroom_plot.cli import _open_loop
    ok = _confirmed_run(tmp, "ok", [(150.0, lambda i: 0.005), (320.0, lambda i: 0.005)])
    c = ok.confirmation
    doc = ok.credhub[1]["summary"]
    assert doc["size_with_kind"] == "closed_loop" and doc["closed_loop_capacity"] == doc["open_loop"]["closed_loop"]
    assert c.agree and openloop.sized_by(c) == "closed loop" and c.closed_loop == doc["closed_loop_capacity"]
    assert c.held == 320.0 and openloop.size_with(ok.max_tput, c) == ok.max_tput

    slow = _confirmed_run(tmp, "none", [(150.0, lambda i: 0.05 if i % 5 == 0 else 0.005),
                                        (250.0, lambda i: 0.05 if i % 5 == 0 else 0.005)])
    c = slow.confirmation
    doc = slow.credhub[1]["summary"]
    assert doc["size_with"] is None and doc["open_loop"]["held"] is None and doc["closed_loop_capacity"] > 0
    assert "size below 150 req/s" in c.headline and not c.agree
    assert openloop.sized_by(c) == "open loop" and c.no_figure and openloop.size_with(slow.max_tput, c) is None

    rows = [{"scenario": "get", "instances": n, "label": r.label, "max_tput": r.max_tput, "how": r.max_tput_how,
             "why": "", "knee": None, **_open_loop(r)} for n, r in ((1, ok), (2, slow))]
    table = analysis.capacity_table(rows)
    assert [(t.sized_by, t.size_with) for t in table] == [("closed loop", ok.max_tput), ("open loop", None)]
    head, cells = report.capacity(table, "get")
    assert head[-1] == "size with (req/s)" and all(len(r) == len(head) for r in cells)
    assert cells[0][-1].endswith("(closed loop)") and cells[1][-1] == openloop.NO_FIGURE
    s = comparesizing.sizing(table[1], [slow])
    assert s.value is None and s.gap and s.status.startswith("open loop: no figure to size with")
    assert comparesizing.sizing(table[0], [ok]).status == "closed loop, confirmed by open arrivals"


def test_no_figure_says_why():
    """No rate held, or no step of the confirmation counted: no figure either way, each said in its words."""
    from headroom_plot import comparesizing
    c = openloop.Confirmation(steps=[], latency=np.empty(0), offset=np.empty(0), error=np.empty(0),
                              step=np.empty(0))
    openloop.attach(c, {"open_loop": {"closed_loop": 500.0, "capacity": None, "agree": False,
                                      "note": "no open-loop step met the SLO; the lowest, rate 250/s, missed it"},
                        "size_with": None, "closed_loop_capacity": 500.0})
    assert c.why_no_figure == openloop.NO_FIGURE
    openloop.attach(c, {"open_loop": {"closed_loop": 500.0, "capacity": None, "agree": False,
                                      "note": "no step counts: 2 not steady"},
                        "size_with": None, "closed_loop_capacity": 500.0})
    assert c.why_no_figure == "no figure to size with (open arrivals unconfirmed: no step counts: 2 not steady)"
    row = analysis.CapacityRow(scenario="get", group="1", instances=1, runs=1, max_tput=500.0, knee=None,
                               efficiency=None, size_with=None, sized_by="open loop", no_figure=c.why_no_figure)
    s = comparesizing.sizing(row, [SimpleNamespace(confirmation=c)])
    assert s.status == "open loop: no figure to size with (open arrivals unconfirmed: no step counts: 2 not steady)"
    openloop.attach(c, {"open_loop": {"closed_loop": 500.0, "capacity": 400.0, "held": 380.0, "agree": False},
                        "size_with": 380.0, "size_with_kind": "open_loop"})
    assert c.why_no_figure == "" and not c.no_figure
