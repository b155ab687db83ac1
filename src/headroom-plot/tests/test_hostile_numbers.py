"""Hostile numbers: every flag and every meta.json/summary.json value is checked before it reaches a
figure, so each ends in one line on stderr naming the flag or the file and key, exit status 2; a
latency the reader accepts, however large, still draws.

Before: `--slo-ms nan` and `--target-rps inf` ended in "internal error: ValueError: Out of range
float values are not JSON compliant"; a meta.json SLO of Infinity in "Axis limits cannot be NaN or
Inf"; a 500-deep meta.json in a RecursionError; a 24 MB meta.json of strings ran for minutes and
6 GB; a 9999.5 s response time in matplotlib's "Image size ... is too large".
"""
from __future__ import annotations

import json
import os

import pytest

from headroom_plot import cli, command

from conftest import closed_step, write_meta, write_ours


def _run_dir(root, name="run", meta=None, summary=None):
    d = root / name
    d.mkdir(parents=True)
    rows, t = [], 0.0
    for c in (1, 2, 4):
        step = closed_step(t, c, 0.005 * (1 + c / 4), 120, jitter=0.3)
        rows += [(r[0], r[1], 200, c) for r in step]
        t = max(r[0] + r[1] for r in step) + 0.01
    write_ours(d / "results.csv", rows)
    write_meta(d, instances=1, label=name)
    if meta is not None:
        (d / "meta.json").write_bytes(meta)
    if summary is not None:
        (d / "summary.json").write_bytes(summary)
    return d


def _one_line(capsys, rc, got, *needles):
    err = capsys.readouterr().err
    assert got == rc, err
    assert "Traceback" not in err and "internal error" not in err, err
    if rc == 2:
        assert err.count("\n") == 1 and err.startswith("headroom-plot: error: "), err
    for n in needles:
        assert n in err, err
    return err


@pytest.mark.parametrize("flag,value", [
    ("--slo-ms", "nan"), ("--slo-ms", "inf"), ("--slo-ms", "-1"), ("--slo-ms", "1e400"), ("--slo-ms", "0"),
    ("--target-rps", "inf"), ("--target-rps", "nan"), ("--target-rps", "-5"), ("--target-rps", "1e10"),
    ("--slo-percentile", "1e308"), ("--slo-percentile", "nan"), ("--slo-percentile", "0"),
    ("--max-error-rate", "nan"), ("--max-error-rate", "-0.1"), ("--max-error-rate", "1.5"),
    ("--window", "0"), ("--window", "1e-9"), ("--window", "inf"), ("--window", "1e8"),
    ("--knee-elasticity", "nan"), ("--knee-elasticity", "0"), ("--knee-elasticity", "1e3"),
    ("--littles-tolerance", "inf"), ("--littles-tolerance", "-1"),
    ("--replicates", "-5"), ("--replicates", "1e3"), ("--replicates", "1000001"), ("--replicates", "9" * 5000),
])
def test_every_number_flag_is_checked(tmp, capsys, flag, value):
    d = _run_dir(tmp)
    got = cli.main([str(d), "--out", str(tmp / "out"), flag, value])
    err = _one_line(capsys, 2, got, flag, "must be")
    assert value[:20] in err
    assert not (tmp / "out").exists()


def test_flag_limits_are_in_the_help():
    text = " ".join(cli.parser().format_help().split())
    for flag in command.LIMITS:
        assert flag in text
    for rng in ("(0, 100]", "[0.001, 1e7]", "[0.001, 1e9]", "[0, 1]", "[0, 100000]"):
        assert rng in text, rng


def test_flags_at_their_limits_draw(tmp, capsys, monkeypatch):
    monkeypatch.setenv("HEADROOM_PLOT_NO_FORK", "1")
    d = _run_dir(tmp)
    got = cli.main([str(d), "--out", str(tmp / "out"), "--format", "png", "--slo-ms", "1e7", "--target-rps", "1e9",
                    "--window", "1e7", "--knee-elasticity", "100", "--littles-tolerance", "100",
                    "--slo-percentile", "100", "--max-error-rate", "0", "--replicates", "0"])
    _one_line(capsys, 0, got)
    got = cli.main([str(d), "--out", str(tmp / "out2"), "--format", "png", "--slo-ms", "0.001",
                    "--target-rps", "0.001", "--window", "0.001", "--slo-percentile", "1e-300", "--replicates", "0"])
    _one_line(capsys, 0, got)


LONG = os.environ.get("HEADROOM_PLOT_HOSTILE") == "long"  # scripts/bench-hostile


def _meta(**kw):
    m = {"scenario": "get", "label": "run", "instances": 1, "slo": {"percentile": 95, "latency_s": 0.1}}
    m.update(kw)
    return json.dumps(m).encode()


def _steps(**kw):
    return json.dumps({"steps": [dict({"concurrency": c, "rate": 0, "requests": 120}, **kw) for c in (1, 2, 4)]})


@pytest.mark.parametrize("meta,needle", [
    (b'{"slo": {"percentile": NaN, "latency_s": 0.1}}', "meta.json: slo.percentile: NaN is not a number"),
    (b'{"slo": {"percentile": 95, "latency_s": Infinity}}', "meta.json: slo.latency_s: Infinity is not a number"),
    (b'{"instances": -Infinity}', "meta.json: instances: -Infinity is not a number"),
    (b'{"slo": {"percentile": 95, "latency_s": 1e999}}', "meta.json: slo.latency_s: 1e999 is beyond the range"),
    (b'{"instances": ' + b"9" * 5000 + b"}", "meta.json: instances: 999"),
    (b'{"seed": {"bytes": 123456789012345678901}}', "meta.json: seed.bytes: 1234"),
    (_meta(slo={"percentile": 1e308, "latency_s": 0.1}), "meta.json: slo.percentile: 1e+308 is out of range (0, 100]"),
    (_meta(slo={"percentile": 0, "latency_s": 0.1}), "meta.json: slo.percentile: 0 is out of range"),
    (_meta(slo={"percentile": 95, "latency_s": -0.1}), "meta.json: slo.latency_s: -0.1 is out of range (0, 10000]"),
    (_meta(slo={"percentile": 95, "latency_s": 1e308}), "meta.json: slo.latency_s: 1e+308 is out of range"),
    (_meta(slo={"percentile": "95", "latency_s": 0.1}), 'meta.json: slo.percentile: "95" is not a number'),
    (_meta(slo=[95, 0.1]), "meta.json: slo: expected a JSON object"),
    (_meta(instances=0), "meta.json: instances: 0 is out of range [1, 10000]"),
    (_meta(instances=1e300), "meta.json: instances: 1e+300 is not an integer"),
    (_meta(instances=2.5), "meta.json: instances: 2.5 is not an integer"),
    (_meta(instances="2"), 'meta.json: instances: "2" is not an integer'),
    (_meta(instances=True), "meta.json: instances: true is not an integer"),
    (_meta(label=5), "meta.json: label: 5 is not a string"),
    (_meta(label="x" * 5000), "meta.json: label: 5000 characters, more than 200"),
    (_meta(scenario=["get"] * 100000), "meta.json: scenario: "),
    (_meta(steps={"concurrency": 1}), "meta.json: steps: expected a list"),
    (_meta(steps=[{"concurrency": 1}, 7]), "meta.json: steps[1]: expected a JSON object"),
    (_meta(steps=[{"concurrency": -1}]), "meta.json: steps[0].concurrency: -1 is out of range"),
    (_meta(steps=[{"concurrency": 1, "rate": 1e300}]), "meta.json: steps[0].rate: 1e+300 is out of range"),
    (_meta(steps=[{"concurrency": 1, "duration_s": -5}]), "meta.json: steps[0].duration_s: -5 is out of range"),
    (_meta(warmup={"mode": "auto", "duration_s": 1e300}), "meta.json: warmup.duration_s: 1e+300 is out of range"),
    (_meta(warmup={"mode": "auto", "requests": -1}), "meta.json: warmup.requests: -1 is out of range"),
    (b'{"a": ' * 40 + b"1" + b"}" * 40, "meta.json: a.a.a.a"),
    (b'{"steps": ' + b"[" * 900 + b"]" * 900 + b"}", "nested deeper than 32 levels"),
    (b"[" * 100000, "meta.json: JSON nested too deeply"),
    (b'{"label": "' + b"x" * (5 << 20) + b'"}', "meta.json: larger than 4 MiB"),
    (b"[" * (5 << 20), "meta.json: larger than 4 MiB"),
])
def test_hostile_meta_values(tmp, capsys, monkeypatch, meta, needle):
    monkeypatch.setenv("HEADROOM_PLOT_NO_FORK", "1")
    d = _run_dir(tmp, meta=meta)
    got = cli.main([str(d), "--out", str(tmp / "out"), "--format", "png"])
    _one_line(capsys, 2, got, needle, str(d))


@pytest.mark.parametrize("summary,needle", [
    (_steps(throughput=float("nan")).encode(), "summary.json: steps[0].throughput: NaN is not a number"),
    (_steps(throughput=-1).encode(), "summary.json: steps[0].throughput: -1 is out of range"),
    (_steps(requests=-1).encode(), "summary.json: steps[0].requests: -1 is out of range"),
    (_steps(requests=1.5).encode(), "summary.json: steps[0].requests: 1.5 is not an integer"),
    (_steps(rate=float("inf")).encode(), "summary.json: steps[0].rate: Infinity is not a number"),
    (b'{"steps": 5}', "summary.json: steps: expected a list"),
    (b'{"steps": [' + b"1e400," * 10 + b"1]}", "summary.json: steps[0]: 1e400 is beyond"),
    (b" " * (5 << 20) + b"{}", "summary.json: larger than 4 MiB"),
])
def test_hostile_summary_values(tmp, capsys, monkeypatch, summary, needle):
    monkeypatch.setenv("HEADROOM_PLOT_NO_FORK", "1")
    d = _run_dir(tmp, summary=summary)
    got = cli.main([str(d), "--out", str(tmp / "out"), "--format", "png"])
    _one_line(capsys, 2, got, needle)


def test_meta_json_strings_are_cleaned_not_refused(tmp, capsys, monkeypatch):
    """A lone surrogate or a control character in a label is drawn as U+FFFD or a space."""
    monkeypatch.setenv("HEADROOM_PLOT_NO_FORK", "1")
    d = _run_dir(tmp, meta=b'{"label": "bad\\udcffla\\u0000bel", "scenario": "get", "instances": 1}')
    _one_line(capsys, 0, cli.main([str(d), "--out", str(tmp / "out"), "--format", "png"]))
    report = (tmp / "out" / "report.md").read_text()
    assert "bad\ufffdla bel" in report


def _slow_files(root, latency="9999.5"):
    """One results file per reader format, each with a request of `latency` seconds among 5 ms ones."""
    ours = root / "ours"
    ours.mkdir()
    rows, t = [], 0.0
    for c in (1, 2, 4):
        step = closed_step(t, c, 0.005 * (1 + c / 4), 120, jitter=0.3)
        rows += [(r[0], r[1], 200, c) for r in step]
        t = max(r[0] + r[1] for r in step) + 0.01
    rows.insert(5, (0.01, float(latency), 200, 1))
    write_ours(ours / "results.csv", rows)
    write_meta(ours, instances=1, label="ours")
    fork = root / "fork.csv"
    fork.write_text("start-time,response-time\n" + "".join(
        f"2017-06-01T10:00:{i // 100:02d}.{i % 100:02d}Z,{latency if i == 3 else '0.0050'}\n" for i in range(300)))
    hey = root / "hey.csv"
    hey.write_text("response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset\n"
                   + "".join(f"{latency if i == 3 else '0.0050'},0,0,0,0,0,200,{i / 100:.4f}\n" for i in range(300)))
    return [ours, fork, hey]


@pytest.mark.parametrize("fmt", ["ours", "fork", "hey"])
def test_a_response_of_9999_s_draws_with_the_time_axis_cut_and_said(tmp, capsys, monkeypatch, fmt):
    """9999.5 s is within the reader's 10000 s: every plot draws, in every format, the time axis ends
    after the last request's start, and a warning and a note on the plot say so (before: matplotlib's
    "Image size ... is too large", or minutes encoding a PNG 2.4 million pixels wide)."""
    monkeypatch.setenv("HEADROOM_PLOT_NO_FORK", "1")
    path = dict(zip(("ours", "fork", "hey"), _slow_files(tmp)))[fmt]
    out = tmp / "out"
    got = cli.main([str(path), "--out", str(out), "--format", "png,svg,pdf"])
    err = _one_line(capsys, 0, got)
    assert "time axis cut at" in err and "1 request(s) end after it, the last at 9,999." in err, err
    from PIL import Image
    for name in os.listdir(out):
        if name.endswith(".png"):
            w, h = Image.open(out / name).size
            assert w < 2000 and h < 2000, (name, w, h)
    assert any("time axis cut at" in (out / p).read_text() for p in os.listdir(out) if p.endswith(".svg"))


def test_time_axis_is_cut_only_when_late_ends_take_most_of_it():
    import numpy as np

    from headroom_plot.analysis import time_axis
    off = np.array([0.0, 1.0, 2.0, 3.0])
    assert time_axis(np.array([0.0]), np.array([3.01]), off, np.full(4, 0.01)) == (0.0, 3.01, "")
    lo, hi, note = time_axis(np.array([0.0]), np.array([9999.5]), off, np.array([9999.5, 0.01, 0.01, 0.01]))
    assert (lo, hi) == (0.0, pytest.approx(4.0)) and note.startswith("time axis cut at 4 s: 1 request(s)")


def _bounded(args, seconds=10, data_mb=500):
    """The console script on args within `seconds` and `data_mb` of data segment (prlimit --data, as
    scripts/bench-hostile bounds credhub-perf): (exit status, stderr)."""
    import resource
    import subprocess
    import sys

    exe = os.path.join(os.path.dirname(sys.executable), "headroom-plot")
    if not os.path.exists(exe):
        pytest.skip("console script not installed in this environment")

    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (data_mb << 20, data_mb << 20))

    p = subprocess.run([exe] + args, capture_output=True, text=True, timeout=seconds, preexec_fn=limit)
    assert p.returncode >= 0, f"ended by signal {-p.returncode}: {p.stderr}"
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
    return p.returncode, p.stderr


BIG = [
    ("nested", lambda n: b"[" * n),
    ("object", lambda n: b'{"a": [' + b"1," * (n // 2) + b"1]}"),
    ("strings", lambda n: b'{"label": [' + b'"\\udcff",' * (n // 9) + b'""]}'),
]


@pytest.mark.parametrize("name,make", BIG if LONG else BIG[:1], ids=[b[0] for b in (BIG if LONG else BIG[:1])])
@pytest.mark.parametrize("which", ["meta.json", "summary.json"] if LONG else ["meta.json"])
def test_a_60_mb_json_file_is_one_line_within_bounds(tmp, name, make, which):
    d = _run_dir(tmp)
    (d / which).write_bytes(make(60 << 20))
    rc, err = _bounded([str(d), "--out", str(tmp / "out")])
    assert rc == 2 and err.count("\n") == 1 and f"{which}: larger than 4 MiB" in err, err


@pytest.mark.skipif(not LONG, reason="the long variant: scripts/bench-hostile")
@pytest.mark.parametrize("fmt", ["ours", "fork", "hey"])
def test_slow_responses_draw_within_bounds(tmp, fmt):
    path = dict(zip(("ours", "fork", "hey"), _slow_files(tmp)))[fmt]
    rc, err = _bounded([str(path), "--out", str(tmp / "out"), "--format", "png,svg,pdf"])
    assert rc == 0 and "time axis cut at" in err, err


@pytest.mark.skipif(not LONG, reason="the long variant: scripts/bench-hostile")
def test_a_step_spanning_the_offset_limits_draws_within_bounds(tmp):
    """Offsets from -1e7 to 1e7 s in one step: 20 million one-second windows before they were capped."""
    d = tmp / "wide"
    d.mkdir()
    rows = [(-9_999_999.0, 0.001, 200, 1)] + [(i * 0.01, 0.001, 200, 1) for i in range(200)] \
        + [(9_999_999.0, 0.001, 200, 1)]
    write_ours(d / "results.csv", rows)
    write_meta(d, instances=1, label="wide")
    rc, err = _bounded([str(d), "--out", str(tmp / "out"), "--format", "png,svg,pdf"])
    assert rc == 0, err


def test_more_steps_than_drawn_is_one_line(tmp, capsys):
    """A step at every row (a damaged concurrency column): 20000 steps ran out of memory after minutes."""
    from conftest import our_row
    from headroom_plot import runs
    d = tmp / "steps"
    d.mkdir()
    n = runs.MAX_STEPS + 1
    write_ours(d / "results.csv", [our_row(i * 0.001, 0.001, concurrency=1 + i) for i in range(n)])
    got = cli.main([str(d), "--out", str(tmp / "out")])
    _one_line(capsys, 2, got, f"results.csv: {n:,} steps", f"more than the {runs.MAX_STEPS:,}")


def test_knee_of_many_steps_is_fitted_to_a_subset_with_both_ends():
    import numpy as np

    from headroom_plot.analysis import MAX_KNEE_POINTS, fit_knee
    x = np.linspace(10, 990, 900)
    r = 0.002 + 0.001 / (1 - x / 1000)
    k = fit_knee(x, r)
    assert k.points == MAX_KNEE_POINTS and k.measured_max == 990
    assert k.throughput == pytest.approx(fit_knee(x[::10], r[::10]).throughput, rel=0.05)


def test_a_title_longer_than_a_line_is_one_line(tmp, capsys):
    """A 100000-character --title drew for minutes in gigabytes."""
    d = _run_dir(tmp)
    got = cli.main([str(d), "--out", str(tmp / "out"), "--title", "x" * (command.MAX_TITLE + 1)])
    _one_line(capsys, 2, got, f"--title must be at most {command.MAX_TITLE} characters (got {command.MAX_TITLE + 1})")


def test_a_target_far_beyond_every_count_is_noted_not_drawn_to_scale(tmp, capsys, monkeypatch):
    """--target-rps 1e9 stretched the scalability axis to 1e9: every measurement lay along its floor."""
    import numpy as np

    from synth import run_dir
    monkeypatch.setenv("HEADROOM_PLOT_NO_FORK", "1")
    rng = np.random.default_rng(1)
    dirs = [str(run_dir(tmp / f"r{n}", rng, 200.0 * n ** 0.9, n, duration=3.0)) for n in (1, 2, 4)]
    out = tmp / "out"
    got = cli.main(dirs + ["--out", str(out), "--format", "svg", "--quiet", "--target-rps", "1e9",
                           "--replicates", "50"])
    err = _one_line(capsys, 0, got, "no instance count reaches 1e+09 req/s")
    svg = (out / "scalability-get.svg").read_text()
    assert "target 1e+09 req/s is far above this axis" in svg, err
