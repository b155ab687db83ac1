"""headroom-plot without credhub-perf: where it looks, what it draws from the CSV files alone, the one note it
writes, and the several testers' merge it refuses; last, the same from a pip install into a clean virtualenv
with no credhub-perf anywhere."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig

import numpy as np
import pytest

import synth
from conftest import closed_step, go_testdata, rfc3339
from headroom_plot import cli, credhubperf
from headroom_plot.runs import NOT_ADDED

PLOTTING = os.path.normpath(os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
CHECKOUT = os.path.normpath(os.path.join(PLOTTING, "..", ".."))
FORK = "start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read"


def _exe(path) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    os.chmod(path, 0o755)
    return str(path)


@pytest.fixture
def nowhere(tmp, monkeypatch):
    """No credhub-perf to find: $CREDHUB_PERF unset, the other places an empty directory."""
    empty = tmp / "empty"
    empty.mkdir()
    monkeypatch.delenv("CREDHUB_PERF", raising=False)
    monkeypatch.setattr(credhubperf, "places", lambda: [("PATH", str(empty))])


# Where credhub-perf is looked for, in order.

def test_credhub_perf_env_wins_and_is_not_second_guessed(tmp, monkeypatch):
    mine = _exe(tmp / "mine" / "credhub-perf")
    _exe(tmp / "path" / "credhub-perf")
    monkeypatch.setenv("PATH", str(tmp / "path"))
    monkeypatch.setenv("CREDHUB_PERF", mine)
    assert credhubperf.locate() == (mine, "")
    monkeypatch.setenv("CREDHUB_PERF", str(tmp / "nope"))
    assert credhubperf.locate() == (None, f"CREDHUB_PERF={tmp / 'nope'} is not an executable file")


def test_beside_headroom_plot_then_the_repository_then_path(tmp, monkeypatch):
    monkeypatch.delenv("CREDHUB_PERF", raising=False)
    venv_bin = tmp / "venv" / "bin"
    monkeypatch.setattr(sys, "argv", [str(venv_bin / "headroom-plot")])
    monkeypatch.setenv("PATH", str(tmp / "path"))
    on_path = _exe(tmp / "path" / "credhub-perf")
    places = credhubperf.places()
    assert places[0] == ("beside headroom-plot", str(venv_bin))
    assert ("beside headroom-plot", sysconfig.get_path("scripts")) in places
    # this checkout (an editable install) is the repository: its bin/, after the places beside
    repo = places.index(("the repository's bin/", os.path.join(CHECKOUT, "bin")))
    assert all(w == "beside headroom-plot" for w, _ in places[:repo])
    assert places[-1] == ("PATH", str(tmp / "path"))
    beside = _exe(venv_bin / "credhub-perf")
    assert credhubperf.locate()[0] == beside
    os.remove(beside)
    monkeypatch.setattr(credhubperf, "_repository_bin", lambda: None)
    assert credhubperf.locate()[0] == on_path
    os.remove(on_path)
    found, looked = credhubperf.locate()
    assert found is None and looked.startswith(f"credhub-perf not found (looked at $CREDHUB_PERF, beside headroom-plot "
                                               f"({venv_bin}), ") and looked.endswith(", PATH)")


def test_a_link_to_headroom_plot_finds_credhub_perf_beside_the_real_one(tmp, monkeypatch):
    monkeypatch.delenv("CREDHUB_PERF", raising=False)
    real = _exe(tmp / "venv" / "bin" / "headroom-plot")
    beside = _exe(tmp / "venv" / "bin" / "credhub-perf")
    (tmp / "local").mkdir()
    os.symlink(real, tmp / "local" / "headroom-plot")
    monkeypatch.setattr(sys, "argv", [str(tmp / "local" / "headroom-plot")])
    monkeypatch.setenv("PATH", "")
    assert credhubperf.locate()[0] == beside


# Drawn from the CSV files alone.

def fork_csv(path, step_s: float) -> str:
    """The old cf-routing hey fork's CSV (no status column), one header per concatenated step, steps of step_s
    seconds at concurrency 1, 2, 4, 8 (latency growing with the load)."""
    lines = []
    for k, c in enumerate((1, 2, 4, 8)):
        lines.append(FORK)
        lat = 0.004 * (1 + k * k / 4)
        rows = closed_step(k * (step_s + 0.5), c, lat, int(step_s / lat) * c)
        lines += [f"{rfc3339(o)},{la:.4f},0.0000,0.0000,0.0000,{la:.4f},0.0000" for o, la, *_ in rows]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return str(path)


def _notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("note:")]


def test_fork_csv_with_steps_too_short_to_count_plots_with_one_note(tmp, nowhere, capsys):
    """Steps too short to judge steady do not count, so the run has no capacity: why is credhub-perf's sentence,
    missing here and named once; every plot, the report and capacity.json are written."""
    out = tmp / "out"
    assert cli.main([fork_csv(tmp / "fork.csv", 1.0), fork_csv(tmp / "fork2.csv", 1.0), "--out", str(out),
                     "--format", "png", "--replicates", "0"]) == 0
    notes = _notes(capsys.readouterr().err)
    assert len(notes) == 1, notes
    assert notes[0].startswith("note: credhub-perf not found (looked at $CREDHUB_PERF, PATH): drawn from the CSV "
                               "files alone, without what credhub-perf decides: the reason a run has no capacity "
                               "(custom run fork, custom run fork2); ")
    assert notes[0].endswith(credhubperf.FIX)
    for name in ("headroom-custom-fork.png", "latency-over-time-custom-fork.png", "overlay-custom.png",
                 "report.html", "report.md", "capacity.json"):
        assert (out / name).stat().st_size > 0, name
    md = (out / "report.md").read_text()
    assert md.count("credhub-perf not found") == 1
    cap = json.loads((out / "capacity.json").read_text())["scenarios"]["custom"]["capacity"]
    assert [c["no_capacity_reason"] for c in cap] == [NOT_ADDED, NOT_ADDED]


def test_compare_says_the_note_once(tmp, nowhere, capsys):
    a, b = fork_csv(tmp / "a.csv", 1.0), fork_csv(tmp / "b.csv", 1.0)
    assert cli.main(["compare", a, b, "--out", str(tmp / "cmp"), "--format", "png", "--replicates", "0"]) == 0
    notes = _notes(capsys.readouterr().err)
    assert len(notes) == 1 and "the reason a run has no capacity (custom run a, custom run b)" in notes[0], notes


def test_fork_csv_long_steps_give_a_capacity_without_credhub_perf_and_no_note(tmp, nowhere, capsys):
    out = tmp / "out"
    assert cli.main([fork_csv(tmp / "fork.csv", 3.0), "--out", str(out), "--format", "png",
                     "--replicates", "0"]) == 0
    assert _notes(capsys.readouterr().err) == []
    cap = json.loads((out / "capacity.json").read_text())["scenarios"]["custom"]["capacity"][0]
    assert cap["capacity_rps"] > 0 and cap["no_capacity_reason"] is None
    assert "credhub-perf" not in (out / "report.md").read_text().split("## Warnings")[0]


def _summarised_run(tmp, name, duration, credhub_perf, slo: list[str] = ()) -> str:
    """A run directory whose summary.json credhub-perf wrote from its files (current: its `sources`), at the
    SLO of its --slo.* flags `slo` (its default 100 ms without)."""
    d = synth.run_dir(str(tmp / name), np.random.default_rng(7), capacity=400.0, instances=1, duration=duration)
    subprocess.run([credhub_perf, "summary", *slo, d], check=True, capture_output=True)
    return d


def test_run_directory_with_current_summary_needs_no_credhub_perf(tmp, credhub_perf, monkeypatch, capsys):
    """Its verdicts come from summary.json: a tester-bound step and its advice, as credhub-perf wrote them."""
    d = _summarised_run(tmp, "run", 10.0, credhub_perf)
    with open(os.path.join(d, "summary.json")) as f:
        summary = json.load(f)
    summary["steps"][0].update(tester_bound=True, tester_bound_reason="tester CPU 97 %",
                               tester_bound_advice=["add testers (the advice summary.json holds)"])
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(summary, f)
    monkeypatch.delenv("CREDHUB_PERF", raising=False)
    monkeypatch.setattr(credhubperf, "places", lambda: [])
    out = tmp / "out"
    assert cli.main([d, "--out", str(out), "--format", "png", "--replicates", "0"]) == 0
    err = capsys.readouterr().err
    assert _notes(err) == []
    assert "1 step(s) tester-bound (step 1): the tester was short of CPU (its own or its host's), so these steps " \
           "measured the tester: add testers (the advice summary.json holds)" in err
    cap = json.loads((out / "capacity.json").read_text())["scenarios"]["get"]["capacity"][0]
    assert cap["capacity_rps"] > 0


def _no_capacity_reason(out) -> str | None:
    return json.loads((out / "capacity.json").read_text())["scenarios"]["get"]["capacity"][0]["no_capacity_reason"]


def test_run_directory_without_capacity_takes_the_reason_from_its_summary(tmp, credhub_perf, monkeypatch, capsys):
    """summary.json holds no_capacity_reason: a current one says why without credhub-perf, and no note; one
    without the key (written before it held it) or with a damaged one leaves it to credhub-perf."""
    # 1 s steps: too short to judge, none counts; summary.json at meta.json's SLO, which headroom-plot judges by
    d = _summarised_run(tmp, "short", 1.0, credhub_perf, ["--slo.latency=25ms"])
    with open(os.path.join(d, "meta.json")) as f:
        assert json.load(f)["slo"]["latency_s"] == 0.025
    with open(os.path.join(d, "summary.json")) as f:
        summary = json.load(f)
    assert summary["no_capacity_reason"].startswith("unknown: ") and "too short to judge" in summary[
        "no_capacity_reason"]
    out = tmp / "with"
    assert cli.main([d, "--out", str(out), "--format", "png", "--replicates", "0"]) == 0
    said = _no_capacity_reason(out)
    assert said == summary["no_capacity_reason"].removeprefix("unknown: ") and _notes(capsys.readouterr().err) == []
    monkeypatch.delenv("CREDHUB_PERF", raising=False)
    monkeypatch.setattr(credhubperf, "places", lambda: [])
    out = tmp / "without"
    assert cli.main([d, "--out", str(out), "--format", "png", "--replicates", "0"]) == 0
    assert _notes(capsys.readouterr().err) == [] and _no_capacity_reason(out) == said
    for k, (value, why) in enumerate(((None, "older"), (7, "damaged"), (["x"], "damaged"))):
        doc = dict(summary)
        if value is None:
            del doc["no_capacity_reason"]
        else:
            doc["no_capacity_reason"] = value
        with open(os.path.join(d, "summary.json"), "w") as f:
            json.dump(doc, f)
        out = tmp / f"{why}{k}"
        assert cli.main([d, "--out", str(out), "--format", "png", "--replicates", "0"]) == 0, why
        notes = _notes(capsys.readouterr().err)
        assert len(notes) == 1 and "the reason a run has no capacity (get run " in notes[0], (why, notes)
        assert _no_capacity_reason(out) == NOT_ADDED, why


def test_several_testers_refused_with_the_fix(tmp, nowhere, capsys):
    d = shutil.copytree(go_testdata(os.path.join("missing-testers", "two-testers-both")), tmp / "two")
    assert cli.main([str(d), "--out", str(tmp / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["headroom-plot: error: credhub-perf not found (looked at $CREDHUB_PERF, PATH), and headroom-plot "
                   "needs credhub-perf for merging the steps of several testers: " + credhubperf.FIX]


# The same from a pip install: no editable checkout to walk up to, nothing on PATH.

def _site_packages(venv: str) -> str:
    return subprocess.run([os.path.join(venv, "bin", "python"), "-c", "import sysconfig; "
                           "print(sysconfig.get_path('purelib'))"], check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """headroom-plot pip-installed (not editable) from a copy of plotting/ into a new virtualenv outside the
    checkout. Its numpy, matplotlib, pip and setuptools come from the test's own environment through a .pth
    file (no download; and no credhub-perf there either: a .pth adds a path, it runs no other .pth)."""
    if sys.prefix == sys.base_prefix:
        pytest.skip("run from a virtualenv (make venv): the new one borrows its numpy and matplotlib")
    root = tmp_path_factory.mktemp("pip")
    src = shutil.copytree(PLOTTING, root / "plotting", symlinks=True,
                          ignore=shutil.ignore_patterns("tests", "benchmarks", "__pycache__", "*.egg-info", "build"))
    venv = str(root / "venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    with open(os.path.join(_site_packages(venv), "deps.pth"), "w") as f:
        f.write(sysconfig.get_path("purelib") + "\n")
    py = os.path.join(venv, "bin", "python")
    p = subprocess.run([py, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-build-isolation",
                        "--disable-pip-version-check", str(src)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    where = subprocess.run([py, "-c", "import headroom_plot; print(headroom_plot.__file__)"], check=True,
                           capture_output=True, text=True, cwd=str(root)).stdout.strip()
    assert where.startswith(venv), where
    return venv


def _clean_env(tmp) -> dict:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp), "MPLCONFIGDIR": str(tmp / "mpl"), "LANG": "C.UTF-8"}
    for d in env["PATH"].split(":"):
        assert not os.path.exists(os.path.join(d, "credhub-perf")), f"{d}/credhub-perf: the test wants none"
    return env


def test_pip_installed_headroom_plot_draws_without_credhub_perf(installed, tmp, credhub_perf):
    exe = os.path.join(installed, "bin", "headroom-plot")
    assert stat.S_IXUSR & os.stat(exe).st_mode and not os.path.exists(os.path.join(installed, "bin", "credhub-perf"))
    env = _clean_env(tmp)
    run_dir = _summarised_run(tmp, "run", 1.0, credhub_perf)
    for name, arg in (("fork", fork_csv(tmp / "fork.csv", 1.0)), ("run", run_dir)):
        out = tmp / f"out-{name}"
        p = subprocess.run([exe, arg, "--out", str(out), "--replicates", "0", "--format", "png"], env=env,
                           capture_output=True, text=True, cwd=str(tmp))
        assert p.returncode == 0, p.stderr
        notes = _notes(p.stderr)
        assert len(notes) == 1 and notes[0].startswith(
            f"note: credhub-perf not found (looked at $CREDHUB_PERF, beside headroom-plot ({installed}/bin), PATH): "
            "drawn from the CSV files alone"), p.stderr
        assert "Traceback" not in p.stderr
        assert {"report.html", "report.md", "capacity.json"} <= set(os.listdir(out))
        assert any(n.startswith("headroom-") and n.endswith(".png") for n in os.listdir(out))
        assert "credhub-perf not found" in (out / "report.md").read_text()
    two = shutil.copytree(go_testdata(os.path.join("missing-testers", "two-testers-both")), tmp / "two")
    p = subprocess.run([exe, str(two), "--out", str(tmp / "out-two")], env=env, capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.splitlines() == [
        f"headroom-plot: error: credhub-perf not found (looked at $CREDHUB_PERF, beside headroom-plot "
        f"({installed}/bin), PATH), and headroom-plot needs credhub-perf for merging the steps of several testers: "
        + credhubperf.FIX]
