"""The target's utilisation: summary.json's figures read back, the shared database's ceiling, the
recommendation refused above it, and a scaling study on credhub-sim's virtual clock end to end through
credhub-perf's verdict."""
from __future__ import annotations

import json
import math
import os
import subprocess

import numpy as np

from headroom_plot import cli, utilisation


def _summary(steps):
    return {"steps": [{"throughput": x, "target": {"resources": rs}} for x, rs in steps],
            "bottleneck": {"resource": "database", "verdict": "database at 95 % CPU: more CredHub instances will "
                                                              "not raise capacity"}}


def test_from_summary_reads_figures_and_verdict():
    u = utilisation.from_summary(_summary([
        (100, [{"resource": "database", "label": "database", "cpu": 0.3}, {"resource": "credhub", "cpu": 0.5}]),
        (200, [{"resource": "database", "cpu": 0.6}, {"resource": "credhub", "cpu": None}]),
    ]))
    assert [r.name for r in u.resources] == ["credhub", "database"]
    ch, db = u.resources
    assert ch.label == "CredHub instances" and ch.cpu[0] == 0.5 and math.isnan(ch.cpu[1])  # unknown, not 0
    assert list(db.throughput) == [100, 200] and list(db.cpu) == [0.3, 0.6]
    assert u.bottleneck == "database" and u.verdict.startswith("database at 95 %") and not u.warnings


def test_from_summary_hostile():
    bad = {"steps": [
        "x", {"throughput": "fast", "target": {"resources": []}},
        {"throughput": 10, "target": {"resources": "none"}},
        {"throughput": 20, "target": {"resources": [{"resource": "database", "cpu": "NaN"}, {"cpu": 0.5},
                                                    {"resource": "credhub", "cpu": True},
                                                    {"resource": "credhub", "cpu": 7}]}},
        {"throughput": float("inf"), "target": {"resources": [{"resource": "database", "cpu": 0.5}]}},
    ], "bottleneck": ["not", "a", "dict"]}
    u = utilisation.from_summary(bad, "x/summary.json")
    assert u.verdict == "" and len(u.warnings) == 1 and u.warnings[0].startswith("x/summary.json: ")
    for r in u.resources:
        assert np.all(np.isnan(r.cpu)), "an unusable figure must stay unknown, never 0"
    for doc in (None, [], {"steps": "x"}, {"steps": [None]}):
        assert utilisation.from_summary(doc).resources == []


def test_ceiling_by_the_utilisation_law():
    # A database of 300 req/s: U = X / 300 at every step; steps under 30 % busy are not used.
    per = [(n, utilisation.from_summary(_summary([(x, [{"resource": "database", "cpu": x / 300}])
                                                  for x in xs])))
           for n, xs in ((1, [30, 60, 100]), (4, [150, 290]))]
    c = utilisation.ceiling(per)
    assert abs(c.rps - 300) < 1e-9 and c.instances == 4 and abs(c.cpu - 290 / 300) < 1e-9 and c.at_rps == 290
    assert utilisation.ceiling([(1, utilisation.from_summary(_summary([(50, [{"resource": "database",
                                                                               "cpu": 0.2}])])))]) is None
    text = utilisation.refusal("get", 400, c)
    assert text.startswith("get: 400 req/s cannot be reached by adding CredHub instances: the shared database "
                           "saturates at about 300 req/s")
    assert utilisation.refusal("get", 250, c) is None
    assert "close to the shared database's ceiling" in utilisation.near(280, c)
    assert utilisation.near(200, c) is None


# The scaling study of the acceptance, on credhub-sim's virtual clock: instances of one 10 ms core
# (100 req/s each) behind a database of 300 req/s, ramps at 1, 2, 4 and 8 instances written by
# virtual-ramp with the model's utilisation per step. credhub-perf attributes the samples and judges
# each run; headroom-plot reports the verdicts and refuses a target above the database's ceiling.
def _study_run(root, n, virtual_ramp, credhub_perf):
    d = os.path.join(root, f"{n}-instances")
    conc = ",".join(str(c) for c in (1, n, 2 * n, 3 * n + 2, 4 * n + 4, 6 * n + 8))
    subprocess.run([virtual_ramp, "-out", d, "-workers", str(n), "-cores", "1", "-service-time", "10ms",
                    "-service-dist", "fixed", "-db-capacity", "300", "-concurrency", conc, "-step-duration", "3s",
                    "-slo-latency", "100ms", "-label", f"{n}-instances"], check=True)
    subprocess.run([credhub_perf, "summary", d], check=True, capture_output=True)
    return d


def test_study_names_credhub_then_database_and_refuses_a_target_above_it(tmp, virtual_ramp, credhub_perf):
    dirs = [_study_run(str(tmp), n, virtual_ramp, credhub_perf) for n in (1, 2, 4, 8)]
    verdicts = [json.load(open(os.path.join(d, "summary.json")))["bottleneck"]["resource"] for d in dirs]
    assert verdicts == ["credhub", "credhub", "database", "database"]
    out = str(tmp / "report")
    # PNG only, here and below: what is checked is capacity.json, the report and the PNGs
    assert cli.main([*dirs, "--out", out, "--slo-ms", "100", "--target-rps", "400", "--quiet", "--replicates", "200",
                     "--format", "png"]) == 0
    doc = json.load(open(os.path.join(out, "capacity.json")))["scenarios"]["get"]
    rec = doc["recommendation"]
    assert rec["instances"] is None and rec["basis"] == "shared-ceiling"
    assert "400 req/s cannot be reached by adding CredHub instances" in rec["text"]
    assert abs(doc["shared_ceiling"]["ceiling_rps"] - 300) < 3
    assert [c["bottlenecks"][0].split(" at ")[0] for c in doc["capacity"]] == \
        ["CredHub instances", "CredHub instances", "database", "database"]
    report = open(os.path.join(out, "report.md")).read()
    assert "Where capacity ends" in report and "database at 100 % CPU: more CredHub instances" in report
    for name in ("utilisation-get.png", "utilisation-get-1-instances.png", "utilisation-get-8-instances.png"):
        assert os.path.getsize(os.path.join(out, name)) > 10000
    # A target below the ceiling is recommended as before.
    out2 = str(tmp / "report2")
    assert cli.main([*dirs, "--out", out2, "--slo-ms", "100", "--target-rps", "150", "--quiet", "--replicates", "200",
                     "--format", "png"]) == 0
    rec2 = json.load(open(os.path.join(out2, "capacity.json")))["scenarios"]["get"]["recommendation"]
    assert rec2["instances"] == 2 and rec2["basis"] != "shared-ceiling"
