import json
import os
import subprocess
import sys

import numpy as np
import pytest

from headroom_plot import cli, command
from headroom_plot.csvread import InputError
from headroom_plot.runs import Options, load_run

from conftest import BASE, STEADY_WARMUP, closed_step, our_row, rfc3339, write_meta, write_ours


def _run_dir(root, name, instances, capacity_scale, label=None):
    """A closed-loop ramp whose latency grows with concurrency (more instances: flatter)."""
    d = root / name
    d.mkdir()
    rows, t = [], 0.0
    for c in (1, 2, 4, 8, 16):
        lat = 0.005 * (1 + (c / (4 * capacity_scale)) ** 2)
        step = closed_step(t, c, lat, 160, jitter=0.3)
        rows += [(r[0], r[1], 503 if i % 199 == 5 else 200, c) for i, r in enumerate(step)]
        t = max(r[0] + r[1] for r in step) + 0.01
    write_ours(d / "results.csv", rows)
    write_meta(d, instances=instances, label=label or name, warmup=STEADY_WARMUP,
               steps=[{"concurrency": c, "rate": 0, "requests": 160, "duration_s": 1} for c in (1, 2, 4, 8, 16)])
    return d


def test_end_to_end_two_runs_overlay_report_and_recommendation(tmp, capsys):
    a = _run_dir(tmp, "one", 1, 1)
    b = _run_dir(tmp, "two", 2, 2)
    out = tmp / "out"
    rc = cli.main([str(a), str(b), "--out", str(out), "--slo-ms", "20", "--target-rps", "100000"])
    assert rc == 0
    printed = capsys.readouterr().out.split()
    for name in ("headroom-get-one.png", "headroom-get-one.svg", "headroom-get-two.png",
                 "latency-over-time-get-one.png", "overlay-get.png", "overlay-get.svg", "scalability-get.png", "scalability-get.svg", "report.md",
                 "report.html", "capacity.json"):
        assert (out / name).stat().st_size > 1000, name
        assert str(out / name) in printed
    md = (out / "report.md").read_text()
    assert ("| instances | runs | max throughput at SLO (req/s) | 95 % interval | knee (req/s) | knee 95 % interval "
            "| scaling efficiency vs 1 instance |") in md
    # two counts: the USL with kappa = 0, said so; 100000 req/s is beyond its ceiling
    assert "only \u03c3 is fitted and \u03ba is taken as 0" in md
    assert "**Recommendation:** get: no instance count reaches 100000 req/s" in md
    assert "## Request details" in md and "## Warnings" in md
    assert "![overlay get](overlay-get.png)" in md and "![scalability get](scalability-get.png)" in md
    html = (out / "report.html").read_text()
    assert not (out / "latency-over-time-get-one.svg").exists()
    assert html.count("data:image/png;base64,") == 6 and "src=\"headroom" not in html
    one = load_run(str(a), Options(slo_s=0.020))
    two = load_run(str(b), Options(slo_s=0.020))
    assert two.max_tput > one.max_tput > 0
    assert f"| 1 | 1 | {one.max_tput:,.0f} |" in md
    cap = json.loads((out / "capacity.json").read_text(), parse_constant=lambda c: pytest.fail(c))["scenarios"]["get"]
    assert [c["instances"] for c in cap["capacity"]] == [1, 2]
    assert cap["capacity"][0]["capacity_rps"] == pytest.approx(one.max_tput)
    lo, hi = cap["capacity"][0]["interval"]
    assert lo <= one.max_tput <= hi
    assert cap["usl"]["kappa_fitted"] is False and cap["usl"]["kappa"]["value"] == 0
    assert cap["recommendation"]["instances"] is None


def test_help_documents_every_option():
    text = cli.parser().format_help()
    for opt in cli.parser()._actions:
        for s in opt.option_strings:
            assert s in text
    for o in ("--out", "--slo-percentile", "--slo-ms", "--target-rps", "--max-error-rate", "--format", "--title"):
        assert o in text


def test_console_script_runs(tmp):
    exe = os.path.join(os.path.dirname(sys.executable), "headroom-plot")
    if not os.path.exists(exe):
        pytest.skip("console script not installed in this environment")
    r = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "--target-rps" in r.stdout


@pytest.mark.parametrize("make,needle", [
    (lambda d: str(d / "missing"), "no such file or directory"),
    (lambda d: (d / "e.csv").write_text("") and str(d / "e.csv") or str(d / "e.csv"), "e.csv:1: file is empty"),
    (lambda d: (d / "h.csv").write_text("a,b\n1,2\n") and str(d / "h.csv"), "h.csv:1: no recognised CSV header"),
    (lambda d: (d / "u.csv").write_text("start-time,response-time\n" + rfc3339(0) + ",0.01\n" + rfc3339(1) +
                                        ",zzz\n") and str(d / "u.csv"), "u.csv:3: unparseable row"),
    (lambda d: (d / "empty_dir").mkdir() or str(d / "empty_dir"), "no results.csv"),
])
def test_bad_input_exit_2_one_line(tmp, capsys, make, needle):
    arg = make(tmp)
    rc = cli.main([arg, "--out", str(tmp / "out")])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1 and needle in err and err.startswith("headroom-plot: error: ")


def test_bad_meta_json_exit_2(tmp, capsys):
    d = _run_dir(tmp, "r", 1, 1)
    (d / "meta.json").write_text('{"scenario": "get",\n  "label": }')
    assert cli.main([str(d), "--out", str(tmp / "o")]) == 2
    assert "meta.json:2: not valid JSON" in capsys.readouterr().err


def test_bad_format_option(tmp, capsys):
    d = _run_dir(tmp, "r", 1, 1)
    assert cli.main([str(d), "--out", str(tmp / "o"), "--format", "gif"]) == 2


def test_hey_fork_input_warns_failures_invisible(tmp, capsys):
    p = tmp / "fork7.csv"
    lines = []
    for step, c in enumerate((1, 2, 4)):
        lines.append("start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read")
        rows = closed_step(step * 2.0, c, 0.010 * (1 + step), 60)
        lines += [f"{rfc3339(o)},{lat:.4f},0.0000,0.0000,0.0000,{lat:.4f},0.0000" for o, lat, *_ in rows]
    p.write_text("\n".join(lines) + "\n")
    out = tmp / "out"
    assert cli.main([str(p), "--out", str(out), "--format", "png"]) == 0
    err = capsys.readouterr().err
    assert "had no status/error column" in err
    run = load_run(str(p), Options())
    assert [s.requests for s in run.steps] == [60, 60, 60]
    assert run.steps[2].throughput == pytest.approx(4 / 0.030, rel=0.01)
    assert "no status/error column" in (out / "report.md").read_text()
    assert (out / "headroom-custom-fork7.png").exists() and not (out / "headroom-custom-fork7.svg").exists()


def test_multi_tester_merge_adds_throughput(tmp):
    d = tmp / "multi"
    d.mkdir()
    # tester b started 0.5 s later than a; each counts offset from its own start
    late = BASE.replace(microsecond=500000)
    for name, base in (("a", BASE), ("b", late)):
        rows = closed_step(0.0, 4, 0.010, 400) + closed_step(1.0, 8, 0.010, 800)
        with open(d / f"results-{name}.csv", "w") as f:
            f.write("start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,"
                    "status-code,offset,concurrency,rate,sched-lag,error,request\n")
            for r in rows:
                f.write(our_row(*r, base=base) + "\n")
    write_meta(d, testers=2, label="multi", instances=1)
    run = load_run(str(d), Options())
    assert [s.concurrency for s in run.steps] == [8, 16]
    assert [s.requests for s in run.steps] == [800, 1600]
    # the two testers overlap for 0.5 s of each 1 s step, so the merged span is 1.5 s
    assert run.steps[0].t0 == pytest.approx(0.0) and run.steps[0].duration_s == pytest.approx(1.5 + 3e-4, abs=2e-3)
    assert run.steps[0].throughput == pytest.approx(800 / 1.5, rel=0.01)
    single = load_run(str(d / "results-a.csv"), Options())
    assert run.total == 2 * single.total
    # a merged results.csv (credhub-perf merge) is read instead of the per-tester files, never as well
    (d / "results.csv").write_text((d / "results-a.csv").read_text())
    assert load_run(str(d), Options()).total == single.total


def test_summary_json_mismatch_is_reported(tmp):
    d = _run_dir(tmp, "s", 1, 1)
    (d / "summary.json").write_text('{"steps": [{"requests": 1, "throughput": 5.0}], "knee": null}')
    run = load_run(str(d), Options())
    assert any("summary.json lists 1 steps" in w for w in run.warnings)


def test_upstream_hey_concatenated_runs_laid_end_to_end(tmp):
    p = tmp / "hey.csv"
    head = "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset"
    lines = []
    for k in range(2):
        lines.append(head)
        lines += [f"0.0100,0.0000,0.0000,0.0000,0.0100,0.0000,{200 if i else 500},{i * 0.01:.4f}" for i in range(100)]
    p.write_text("\n".join(lines) + "\n")
    run = load_run(str(p), Options())
    assert len(run.steps) == 2
    assert run.steps[1].t0 == pytest.approx(run.steps[0].t1)
    assert [s.errors for s in run.steps] == [1, 1]
    assert np.all(np.diff(run.win_t0) > 0)


def test_slo_defaults_from_meta_unless_given(tmp):
    d = _run_dir(tmp, "m", 1, 1)
    import json
    meta = json.loads((d / "meta.json").read_text())
    meta["slo"] = {"percentile": 99, "latency_s": 0.25}
    (d / "meta.json").write_text(json.dumps(meta))
    args = cli.parser().parse_args([str(d), "--out", "x"])
    assert command.slo_defaults(args, [meta]) == (99.0, 250.0)
    args = cli.parser().parse_args([str(d), "--out", "x", "--slo-ms", "40"])
    assert command.slo_defaults(args, [meta]) == (99.0, 40.0)
    other = dict(meta, slo={"percentile": 95, "latency_s": 0.1})
    assert command.slo_defaults(cli.parser().parse_args([str(d), "--out", "x"]), [meta, other]) == (95.0, 100.0)


def test_mix_report_has_a_per_type_table(tmp):
    """A mixed run: gets at 5 ms, sets at 40 ms in the same steps; the report's per-type table
    gives each type's own throughput and percentiles, and which type misses the SLO."""
    d = tmp / "mix"
    d.mkdir()
    rows = []
    for t0, conc in ((0.0, 2), (1.0, 4)):
        gets = [our_row(*r, request="get") for r in closed_step(t0, conc, 0.005, 160 * conc)]
        sets = [our_row(*r, request="set") for r in closed_step(t0, conc, 0.040, 20 * conc)]
        rows += sorted(gets + sets, key=lambda line: float(line.split(",")[8]))
    write_ours(d / "results.csv", rows)
    write_meta(d, scenario="mix", label="mix")
    out = tmp / "out"
    assert cli.main([str(d), "--out", str(out), "--slo-ms", "20", "--format", "png"]) == 0
    md = (out / "report.md").read_text()
    assert "Per request type" in md
    lines = [ln for ln in md.splitlines() if ln.startswith("| 1 | get") or ln.startswith("| 1 | set")]
    assert len(lines) == 2, md
    get, set_ = ([c.strip() for c in ln.strip("|").split("|")] for ln in lines)
    assert get[2] == "320" and set_[2] == "40"
    assert float(get[7]) == pytest.approx(5.0, abs=0.1) and float(set_[7]) == pytest.approx(40.0, abs=0.1)
    assert get[-1] == "yes" and set_[-1] == "no"
    # the types' throughputs add up to the step's
    run = load_run(str(d), Options(slo_s=0.020))
    step0 = [f for f in run.by_request if f["step"] == 0]
    assert sum(f["throughput"] for f in step0) == pytest.approx(run.steps[0].throughput, rel=1e-6)


def _mix_dir(d, set_latencies, **meta):
    """A mix ramp: gets at 5 ms on conc-1 workers, sets on one worker at set_latencies[k] in step k."""
    d.mkdir()
    rows = []
    for k, ls in enumerate(set_latencies):
        conc = 4 * (k + 1)
        gets = [(o, la, 200, conc) for o, la, _, _ in closed_step(float(k), conc - 1, 0.005, (conc - 1) * 190)]
        sets = [(o, la, 200, conc) for o, la, _, _ in closed_step(float(k), 1, ls, int(0.95 / ls))]
        rows += sorted([our_row(*r, request="get") for r in gets] + [our_row(*r, request="set") for r in sets],
                       key=lambda line: float(line.split(",")[8]) + float(line.split(",")[1]))
    write_ours(d / "results.csv", rows)
    meta.setdefault("warmup", STEADY_WARMUP)
    write_meta(d, scenario="mix", label=d.name, instances=1, mix={"get": 95, "set": 5, "interpolate": 0}, **meta)
    return d


def test_mix_capacity_every_type_meets_its_bound(tmp):
    """Sets slow down step by step (10, 30, 60 ms) while the step's own p95 stays at a few ms: capacity
    at the SLO (20 ms) is where sets cross it, not the run's last step; with sets' own bound of 40 ms
    (meta.json slo.latency_by_request_s), where they cross that. report/capacity.json says the same."""
    d = _mix_dir(tmp / "mix", (0.010, 0.030, 0.060))
    run = load_run(str(d), Options(slo_s=0.020))
    x = [s.throughput for s in run.steps]
    assert all(s.slo_s < 0.020 for s in run.steps)  # the step alone would be a lower bound at x[2]
    sets = {f["step"]: f for f in run.by_request if f["request"] == "set"}
    assert [sets[k]["slo_s"] for k in range(3)] == pytest.approx([0.010, 0.030, 0.060], rel=0.01)
    assert [sets[k]["meets_slo"] for k in range(3)] == [True, False, False]
    # worst ratios 0.5 then 1.5: half way from step 1 to step 2
    assert run.max_tput_how == "interpolated"
    assert run.max_tput == pytest.approx(x[0] + 0.5 * (x[1] - x[0]), rel=0.02)

    d2 = _mix_dir(tmp / "own", (0.010, 0.030, 0.060),
                  slo={"percentile": 95, "latency_s": 0.02, "latency_by_request_s": {"set": 0.04}})
    run2 = load_run(str(d2), Options(slo_s=0.020))
    assert run2.slo_by_request == {"set": 0.04}
    assert run2.max_tput == pytest.approx(x[1] + (1 - 0.75) / (1.5 - 0.75) * (x[2] - x[1]), rel=0.02)

    out = tmp / "out"
    assert cli.main([str(d2), "--out", str(out), "--slo-ms", "20", "--format", "png", "--replicates", "50"]) == 0
    mix = json.loads((out / "capacity.json").read_text())["scenarios"]["mix"]
    cap = mix["capacity"][0]
    assert cap["capacity_rps"] == pytest.approx(run2.max_tput) and cap["interval"] is None
    assert mix["slo_latency_by_request_s"] == {"get": 0.02, "set": 0.04}
    md = (out / "report.md").read_text()
    assert "except set <= 40 ms" in md and "no interval" in md


def test_mix_hostile_per_type_bounds(tmp):
    """meta.json's per-type bounds that are not a known type with seconds > 0 are left out, with a warning."""
    for bad in ([0.04], "x", {"set": -1}, {"set": "40ms"}, {"delete": 0.04}, {"set": True}):
        d = _mix_dir(tmp / f"bad{abs(hash(repr(bad)))}", (0.010, 0.030, 0.060),
                     slo={"percentile": 95, "latency_s": 0.02, "latency_by_request_s": bad})
        run = load_run(str(d), Options(slo_s=0.020))
        assert run.slo_by_request == {}, bad
        assert any("latency_by_request_s" in w for w in run.warnings), bad
    # NaN is not JSON (json.dump writes it anyway): the file is refused, naming the key
    d = _mix_dir(tmp / "nan", (0.010, 0.030, 0.060),
                 slo={"percentile": 95, "latency_s": 0.02, "latency_by_request_s": {"set": float("nan")}})
    with pytest.raises(InputError, match=r"meta.json: slo.latency_by_request_s.set: NaN is not a number"):
        load_run(str(d), Options(slo_s=0.020))


def test_single_type_run_has_no_per_type_table(tmp):
    d = tmp / "one"
    d.mkdir()
    write_ours(d / "results.csv", closed_step(0.0, 2, 0.005, 200))
    write_meta(d, label="one")
    assert load_run(str(d), Options()).by_request == []
