"""The hostile results CSVs the Go reader's tests read too (src/credhub-perf/results/testdata/hostile-csv):
both readers give each file expect.json's verdict and refuse it at the same line, and find the same steps in
an accepted one (two steps of one concurrency and rate included), so a file one tool summarises the other
plots step for step. Read whole and in chunks of a few bytes, so a step coming back across a
chunk boundary is refused like one inside a chunk."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from headroom_plot import analysis, csvread
from headroom_plot.csvread import InputError, read_csv

from conftest import go_testdata


FIX = Path(go_testdata("hostile-csv"))
CASES = json.loads((FIX / "expect.json").read_text())["files"]


def test_every_fixture_has_a_verdict():
    assert sorted(p.name for p in FIX.glob("*.csv")) == sorted(c["file"] for c in CASES)


@pytest.mark.parametrize("chunk", [None, 61], ids=["whole", "chunked"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c["file"])
def test_same_verdict_as_the_go_reader(case, chunk, monkeypatch):
    if chunk:
        monkeypatch.setattr(csvread, "CHUNK", chunk)
    path = str(FIX / case["file"])
    if case["verdict"] == "accept":
        t = read_csv(path)
        if "steps" in case:
            assert _steps(t) == case["steps"], case["why"]
        return
    with pytest.raises(InputError) as exc:
        read_csv(path)
    msg = str(exc.value)
    assert msg.startswith(f"{path}:{case['line']}: ") and "\n" not in msg, (case["why"], msg)


def _steps(t) -> list:
    """[concurrency, rate, requests] per step in file order, as runs.py groups rows (analysis.assign_steps)."""
    sid = analysis.assign_steps(t.segment, t.concurrency, t.rate, t.offset)
    first = [int(i) for i in sorted(set(int(x) for x in sid))]
    out = []
    for k in first:
        rows = sid == k
        i = int(rows.argmax())
        out.append([int(t.concurrency[i]), float(t.rate[i]), int(rows.sum())])
    return out


def test_steps_are_listed_for_the_step_rules():
    """The files that show where a step begins carry their steps: both suites check them."""
    listed = {c["file"] for c in CASES if "steps" in c}
    assert {"accept-ours.csv", "accept-rate-written-two-ways.csv", "accept-step-again-straight-after.csv",
            "accept-same-rate-two-concurrencies.csv"} <= listed


HEADERS = json.loads((FIX.parent / "headers" / "expect.json").read_text())["files"]


@pytest.mark.parametrize("case", HEADERS, ids=lambda c: c["name"])
def test_headers_get_the_go_readers_verdict(case, tmp_path):
    """results/testdata/headers/expect.json, which the Go reader is held to too (TestHeadersFixture): the
    format each header is read as, or a one-line refusal."""
    path = tmp_path / "f.csv"
    path.write_bytes(case["text"].encode("utf-8"))
    if case["format"] is not None:
        assert read_csv(str(path)).format == case["format"], case["name"]
        return
    with pytest.raises(InputError) as exc:
        read_csv(str(path))
    assert str(exc.value).startswith(f"{path}:") and "\n" not in str(exc.value), (case["name"], str(exc.value))
