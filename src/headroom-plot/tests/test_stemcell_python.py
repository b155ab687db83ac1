"""headroom-plot on a stemcell's CPython: no ctypes, lzma, sqlite3 or tkinter, and a render worker that fails.

A BOSH Jammy/Noble stemcell has no libffi, liblzma, SQLite or Tk headers, so packages/python3 builds without
those modules; the plotter must draw on both cores there. And when the second render process fails, for
whatever reason, the plots are still drawn and one warning line says so.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from headroom_plot import cli

from conftest import closed_step, write_meta, write_ours

EXE = os.path.join(os.path.dirname(sys.executable), "headroom-plot")
# What CPython lacks on a stemcell: the modules and their C halves.
MISSING = ("ctypes", "_ctypes", "lzma", "_lzma", "sqlite3", "_sqlite3", "tkinter", "_tkinter")

# Imported first by the interpreter (PYTHONPATH): the stemcell's modules are unimportable, and every
# child the program forks (the render worker; subprocess spawns another way) is logged with its exit
# status when it is reaped, so the test sees how the worker ended.
SITECUSTOMIZE = f"""
import json, os, sys
for m in {MISSING!r}:
    sys.modules[m] = None  # import m raises ImportError, as where it was never built
_fork, _waitpid, _forked = os.fork, os.waitpid, set()
def fork():
    pid = _fork()
    _forked.add(pid)
    return pid
def waitpid(pid, options):
    got = _waitpid(pid, options)
    if got[0] in _forked:
        with open(os.environ["WAIT_LOG"], "a") as f:
            f.write(json.dumps([got[0], os.waitstatus_to_exitcode(got[1])]) + "\\n")
    return got
os.fork, os.waitpid = fork, waitpid
"""


def _run_dirs(root, n=3):
    dirs = []
    for k in range(n):
        d = root / f"run{k}"
        d.mkdir(parents=True)
        rows, t = [], 0.0
        for c in (1, 2, 4, 8):
            step = closed_step(t, c, 0.004 * (1 + c / 3), 400, jitter=0.3)
            rows += [(r[0], r[1], 200, c) for r in step]
            t = max(r[0] + r[1] for r in step) + 0.01
        write_ours(d / "results.csv", rows)
        write_meta(d, instances=1, label=f"run{k}", scenario=("get", "set", "interpolate")[k % 3],
                   steps=[{"concurrency": c, "rate": 0, "requests": 400, "duration_s": 1} for c in (1, 2, 4, 8)])
        dirs.append(str(d))
    return dirs


def _stemcell_env(tmp):
    site = tmp / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = dict(os.environ, PYTHONPATH=str(site), WAIT_LOG=str(tmp / "waits.jsonl"), MPLCONFIGDIR=str(tmp / "mpl"))
    env.pop("HEADROOM_PLOT_NO_FORK", None)
    return env


def test_the_stand_in_python_lacks_the_stemcell_modules(tmp):
    """The test below means something only if the modules really cannot be imported."""
    env = _stemcell_env(tmp)
    for m in ("ctypes", "lzma", "sqlite3", "tkinter"):
        p = subprocess.run([sys.executable, "-c", f"import {m}"], env=env, capture_output=True, text=True)
        assert p.returncode == 1 and "ModuleNotFoundError" in p.stderr, (m, p.stderr)


def test_renders_on_two_cores_without_ctypes_lzma_sqlite3_tkinter(tmp):
    """The whole program, as the errand runs it: the render worker ends with 0 and the report is whole."""
    if not os.path.exists(EXE) or not hasattr(os, "fork"):
        pytest.skip("needs the console script and fork")
    env = _stemcell_env(tmp)
    out = tmp / "out"
    p = subprocess.run([EXE, *_run_dirs(tmp), "--out", str(out)], env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    assert "render process failed" not in p.stderr and "Traceback" not in p.stderr, p.stderr
    waits = [json.loads(line) for line in (tmp / "waits.jsonl").read_text().splitlines()]
    assert len(waits) == 1 and waits[0][1] == 0, f"the render worker's (pid, exit status): {waits}"
    for f in ("report.html", "capacity.json", "headroom-get-run0.png", "headroom-set-run1.png",
              "headroom-interpolate-run2.png", "latency-over-time-get-run0.png"):
        assert (out / f).stat().st_size > 0, f


def test_a_failing_render_worker_says_so_once_and_the_plots_are_drawn(tmp, capsys, monkeypatch):
    """The worker fails before its first plot: the parent draws them all and says why, in one line."""
    if not hasattr(os, "fork"):
        pytest.skip("needs fork")
    monkeypatch.delenv("HEADROOM_PLOT_NO_FORK", raising=False)
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp / "mpl"))

    def broken(_alive):
        raise ImportError("No module named 'ctypes'")

    monkeypatch.setattr(cli, "_die_with_parent", broken)  # runs in the worker only
    out = tmp / "out"
    assert cli.main([*_run_dirs(tmp), "--out", str(out), "--quiet"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "render process" in line]
    assert lines == ["headroom-plot: warning: the second render process failed (ImportError: No module named "
                     "'ctypes'); its plots were drawn in this one, on one core"], err
    for f in ("report.html", "headroom-get-run0.png", "headroom-set-run1.png", "headroom-interpolate-run2.png"):
        assert (out / f).stat().st_size > 0, f
