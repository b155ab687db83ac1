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

from headroom_plot import cli

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
    for flag in cli.LIMITS:
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
