"""The machines the target's resources run on (summary.json steps' target.machines): read back with known
answers, hostile entries left out with one warning, and drawn beside the resources on the utilisation
figure."""
from __future__ import annotations

import json
import math
import os
import subprocess

import numpy as np
import pytest

from headroom_plot import cli, machines, utilisation

import synth

# CredHub and its database on one core (credhub-perf's proc source names it "cpus 1"): at each step
# CredHub's and the database's shares and the little other work add up to the core's busy share.
CREDHUB = [0.12, 0.25, 0.4, 0.52, 0.62, 0.7, 0.72, 0.73]
DATABASE = [0.04, 0.08, 0.13, 0.17, 0.2, 0.23, 0.24, 0.24]
OTHER = [0.02] * 8


def _steps(rates, other=OTHER):
    out = []
    for x, c, d, o in zip(rates, CREDHUB, DATABASE, other):
        out.append({"throughput": float(x), "target": {
            "resources": [{"resource": "credhub", "source": "proc", "cpu": c},
                          {"resource": "database", "source": "proc", "cpu": d}],
            "machines": [{"machine": "cpus 1", "cpus": "1", "source": "proc", "busy": round(c + d + o, 4),
                          "steal": 0, "iowait": 0.01, "other": o, "resources": ["credhub", "database"]}]}})
    return out


def test_machines_read_with_known_answers():
    ru = utilisation.from_summary({"steps": _steps([10, 20, 30, 40, 50, 60, 70, 80])})
    assert not ru.warnings and len(ru.machines) == 1
    m = ru.machines[0]
    assert m.name == "cpus 1" and m.cpus == "1" and m.resources == ["credhub", "database"]
    assert list(m.throughput) == [10, 20, 30, 40, 50, 60, 70, 80]
    assert abs(m.busy[-1] - 0.99) < 1e-12 and list(m.other) == OTHER and list(m.steal) == [0] * 8
    # the resources' shares and the other work add up to the machine's busy share
    cpu = {r.name: r.cpu for r in ru.resources}
    assert np.allclose(cpu["credhub"] + cpu["database"] + m.other, m.busy)
    assert machines.label(m, utilisation.LABELS) == "cpus 1, shared by CredHub instances and database"
    # steps without machines (an older credhub-perf) leave none, and no warning
    old = utilisation.from_summary({"steps": [{"throughput": 5, "target": {"resources": []}}]})
    assert old.machines == [] and not old.warnings


def test_machines_unknown_figures_stay_unknown():
    steps = _steps([10, 20])
    steps[0]["target"]["machines"][0].update(busy=None, other=None)
    m = utilisation.from_summary({"steps": steps}).machines[0]
    assert math.isnan(m.busy[0]) and math.isnan(m.other[0]) and m.busy[1] > 0


def test_machines_hostile():
    long = "x" * 10000
    steps = [
        {"throughput": 10, "target": {"machines": "none"}},
        {"throughput": "fast", "target": {"machines": []}},
        {"throughput": 20, "target": {"machines": [
            None, {"machine": 7}, {"machine": ""},
            {"machine": long, "busy": float("nan"), "other": -1, "steal": True, "resources": [long, 3]},
            {"machine": "cpus 0", "busy": 9, "other": "0.1", "resources": ["credhub"] * 50}]}},
        {"throughput": 30, "target": {"machines": [{"machine": f"vm g/{i}", "busy": 0.5, "resources": []}
                                                   for i in range(20)]}},
    ]
    r = machines.from_summary({"steps": steps}, "x/summary.json")
    assert len(r.warnings) == 2 and all(w.startswith("x/summary.json: ") for w in r.warnings)
    assert all(len(w) < 200 for w in r.warnings), "a hostile name must not be echoed"
    assert len(r.machines) == machines.MAX_MACHINES
    by = {m.name: m for m in r.machines}
    assert np.isnan(by[long].busy).all() and np.isnan(by[long].other).all() and np.isnan(by[long].steal).all()
    assert by[long].resources == [], "a resource list with a non-name is left out"
    assert np.isnan(by["cpus 0"].busy).all(), "a share above 1.5 is not a share"
    assert by["cpus 0"].resources == ["credhub"]
    lab = machines.label(by[long], {})
    assert len(lab) <= machines.MAX_NAME and lab.endswith("\u2026")
    for doc in (None, [], {"steps": "x"}, {"steps": [None, 3, {"target": None}]}):
        assert machines.from_summary(doc).machines == []


def test_utilisation_figure_shows_the_machine(tmp):
    rng = np.random.default_rng(7)
    d = synth.run_dir(str(tmp / "run"), rng, capacity=200, instances=1)
    rates, _, _ = synth.ramp_for(200, 0.025)
    summary = {"steps": _steps(rates, other=[0.02, 0.02, 0.03, 0.03, 0.04, 0.04, 0.04, 0.03]),
               "bottleneck": {"resource": "credhub", "verdict": "CPU 1, shared by CredHub (73 %) and the "
                              "database (24 %), is 99 % busy: the core they share is the limit"}}
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(summary, f)
    out = str(tmp / "report")
    assert cli.main([d, "--out", out, "--slo-ms", "25", "--quiet", "--replicates", "100"]) == 0
    png = [p for p in os.listdir(out) if p.startswith("utilisation-") and p.endswith(".png")]
    assert len(png) == 1 and os.path.getsize(os.path.join(out, png[0])) > 10000


# End to end on credhub-sim's virtual clock: one CredHub instance and its database on one shared core
# (virtual-ramp -shared-cores 1), as CredHub 2.15 and PostgreSQL pinned to one core were measured: each
# alone well under the core, together all of it. credhub-perf attributes the samples' machine columns and
# judges the run; the figure draws the machine.


def test_shared_core_end_to_end(tmp, credhub_perf, virtual_ramp):
    vr = virtual_ramp
    d = str(tmp / "run")
    subprocess.run([vr, "-out", d, "-workers", "1", "-cores", "2", "-service-time", "7ms", "-service-dist", "fixed",
                    "-db-capacity", "400", "-shared-cores", "1", "-concurrency", "1,2,4,8", "-step-duration", "3s",
                    "-slo-latency", "50ms", "-label", "shared-core"], check=True)
    subprocess.run([credhub_perf, "summary", d], check=True, capture_output=True)
    summary = json.load(open(os.path.join(d, "summary.json")))
    if not any("machines" in (st.get("target") or {}) for st in summary["steps"]):
        pytest.skip("this credhub-perf does not write the steps' target.machines yet")
    ru = utilisation.from_summary(summary)
    assert not ru.warnings and [m.name for m in ru.machines] == ["host"]
    m = ru.machines[0]
    # 7 ms on the instance and 2.5 ms in the database, one core: 1 / 9.5 ms from the first client on,
    # the core all busy, CredHub 7/9.5 of it (of its 2 cores' worth, capped at the machine's one).
    assert m.resources == ["credhub", "database"] and np.all(np.abs(m.busy - 1) < 0.02)
    assert np.all(np.abs(m.other) < 0.01) and np.all(np.abs(m.throughput - 1000 / 9.5) < 3)
    cpu = {r.name: r.cpu for r in ru.resources}
    assert np.all(np.abs(cpu["credhub"] - 7 / 9.5) < 0.02) and np.all(np.abs(cpu["database"] - 2.5 / 9.5) < 0.02)
    # judged (3 s steps count), naming the machine, never the tester
    assert "host" in ru.verdict and "not judged" not in ru.verdict and "add testers" not in ru.verdict
    out = str(tmp / "report")
    assert cli.main([d, "--out", out, "--slo-ms", "50", "--quiet", "--replicates", "100", "--format", "png"]) == 0
    assert os.path.getsize(os.path.join(out, "utilisation-get-shared-core.png")) > 10000
