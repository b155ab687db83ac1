"""The hostile results CSVs the Go reader's tests read too (src/credhub-perf/results/testdata/hostile-csv):
both readers give each file expect.json's verdict and refuse it at the same line, so a file one tool
summarises the other plots. Read whole and in chunks of a few bytes, so a step coming back across a
chunk boundary is refused like one inside a chunk."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from headroom_plot import csvread
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
        read_csv(path)
        return
    with pytest.raises(InputError) as exc:
        read_csv(path)
    msg = str(exc.value)
    assert msg.startswith(f"{path}:{case['line']}: ") and "\n" not in msg, (case["why"], msg)


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
