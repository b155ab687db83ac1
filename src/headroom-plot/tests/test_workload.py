"""--workload and --growth: the production peak as the operating point, the headroom, the target."""
import hashlib
import json
import math
import os

import numpy as np
import pytest

from headroom_plot import cli, workload
from headroom_plot.csvread import InputError

import synth
from test_utilisation import _study_run


def _workload(path, peak=200, **extra):
    doc = {"format": "credhub-perf-workload/1", "requests": 36000,
           "rates": {"mean": 10.0, "peak_second": {"at": "2026-12-07T10:00:07.000Z", "requests": peak},
                     "p99_second": 150.0}}
    doc.update(extra)
    path.write_text(json.dumps(doc))
    return path


def test_parse_growth():
    assert workload.parse_growth("40%/yr") == pytest.approx(0.4)
    assert workload.parse_growth("40%") == pytest.approx(0.4)
    assert workload.parse_growth(" 12.5 %/year ") == pytest.approx(0.125)
    for bad in ("40", "0.4", "40%/month", "-5%", "0%", "abc", "", "nan%", "1e3%", "2000%", "40%%"):
        with pytest.raises(ValueError, match="--growth must be a yearly growth like 40%/yr"):
            workload.parse_growth(bad)


def test_headroom_known_answers():
    # 1236 / 412 = 3.0; ln 3 / ln 1.4 = 3.265 years
    f, years = workload.headroom(1236, 412, 0.4)
    assert f == pytest.approx(3.0) and years == pytest.approx(math.log(3) / math.log(1.4))
    assert workload.headroom_text(f, years, 0.4) == "3.0x headroom: 3.3 years at 40 %/yr"
    assert workload.headroom(824, 412, None) == (pytest.approx(2.0), None)
    assert "give --growth" in workload.headroom_text(2.0, None, None)
    # below the peak: no headroom, no time
    f, years = workload.headroom(300, 412, 0.4)
    assert years == 0 and workload.headroom_text(f, years, 0.4).startswith("0.73x: below the production peak")
    assert workload.target(412, 0.4) == pytest.approx(576.8) and workload.target(412, None) == 412


def test_load_and_arrivals(tmp_path):
    p = _workload(tmp_path / "workload.json", peak=412)
    (tmp_path / "workload-arrivals.csv").write_text(
        "time,unix_s,requests,get_by_name,find_by_path,set,interpolate\n"
        "2026-12-07T00:00:00Z,1796676790,7,5,0,0,2\n2026-12-07T00:00:03Z,1796676793,7,7,0,0,0\n"
        "2026-12-07T00:00:01Z,1796676791,1,0,1,0,0\n")
    wl = workload.load(str(p))
    assert wl.peak == 412 and wl.p99_second == 150 and wl.peak_at.startswith("2026-12-07")
    assert wl.sha256 == hashlib.sha256(p.read_bytes()).hexdigest()
    a = wl.arrivals
    assert a.types == ["get_by_name", "interpolate", "find_by_path"]
    assert a.seconds.tolist() == [1796676790, 1796676791, 1796676793]
    assert a.counts.tolist() == [[5, 0, 7], [2, 0, 0], [0, 1, 0]]
    # 4 seconds in bins of 2: means per second, the gap second counted as 0
    starts, rates, busiest, width = workload.binned(a, max_bins=2)
    assert width == 2 and starts.tolist() == [1796676790, 1796676792]
    assert rates.tolist() == [[2.5, 3.5], [1.0, 0.0], [0.5, 0.0]] and busiest.tolist() == [7, 7]
    # a round width: 4 seconds in at most 3 bins take bins of 2 s, not 1.33
    assert workload.binned(a, max_bins=3)[3] == 2


@pytest.mark.parametrize("body,needle", [
    ("", "not valid JSON"),
    ("{", "not valid JSON"),
    ("\x00\xff binary", "not valid JSON"),
    ('{"format": "credhub-perf-workload/1", "rates": {"peak_second": {"requests": NaN}}}', "not valid JSON"),
    ("[]", "format is 'None'"),
    ('{"format": "other"}', "format is 'other'"),
    ('{"format": "credhub-perf-workload/1"}', "rates.peak_second.requests is missing"),
    ('{"format": "credhub-perf-workload/1", "rates": {"peak_second": {"requests": 0}}}', "not above 0"),
    ('{"format": "credhub-perf-workload/1", "rates": {"peak_second": {"requests": "9"}}}', "not above 0"),
    ('{"format": "credhub-perf-workload/1", "rates": {"peak_second": {"requests": 1e999}}}', "not above 0"),
    ("[" * 100000 + "]" * 100000, "not valid JSON"),
])
def test_load_hostile(tmp_path, body, needle):
    p = tmp_path / "workload.json"
    p.write_bytes(body.encode("utf-8", "surrogateescape") if isinstance(body, str) else body)
    with pytest.raises(InputError) as e:
        workload.load(str(p))
    assert needle in str(e.value) and str(e.value).startswith(f"--workload {p}: ") and "\n" not in str(e.value)


def test_load_missing_dir_big(tmp_path):
    for path, needle in ((tmp_path / "none.json", "no such file"), (tmp_path, "is a directory")):
        with pytest.raises(InputError, match=needle):
            workload.load(str(path))
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (workload.MAX_JSON_BYTES + 1))
    with pytest.raises(InputError, match="larger than 16 MiB"):
        workload.load(str(big))


@pytest.mark.parametrize("body,needle", [
    ("", "header ''"),
    ("second,type,requests\n1,get,1\n", "header 'second,type,requests'"),
    ("time,unix_s,requests\nt,1,1\n", "a column per request type"),
    ("time,unix_s,requests,get,get\nt,1,2,1,1\n", "header"),
    ("time,unix_s,requests,GET BY NAME\nt,1,1,1\n", "header"),
    ("time,unix_s,requests,get_by_name,interpolate\n", "no rows"),
    ("time,unix_s,requests,get_by_name,interpolate\nt,1,1,1,0\nt,1,2,1,1\n", "second 1 is listed twice"),
    ("time,unix_s,requests,get_by_name,interpolate\nt,1.5,1,1,0\n", ":2: 't,1.5,1,1,0' is not `time,unix_s,requests` and 2 counts"),
    ("time,unix_s,requests,get_by_name,interpolate\nt,1,1,-1,2\n", ":2:"),
    ("time,unix_s,requests,get_by_name,interpolate\nt,1,1,1\n", ":2:"),
    ("time,unix_s,requests,get_by_name,interpolate\nt,1,2,1,1,extra\n", ":2:"),
    ("time,unix_s,requests,get_by_name,interpolate\nt,1,1,99999999999999999999,0\n", ":2:"),
    ("time,unix_s,requests,get_by_name,interpolate\nt,\u0661,1,1,0\n", ":2:"),
    ("time,unix_s,requests,get_by_name,interpolate\nt,1,5,1,1\n", ":2: requests 5 is not the sum of the types' counts 2"),
])
def test_arrivals_hostile(tmp_path, body, needle):
    p = tmp_path / "workload-arrivals.csv"
    p.write_text(body)
    with pytest.raises(InputError) as e:
        workload.read_arrivals(str(p))
    assert needle in str(e.value) and "\n" not in str(e.value)
    p.write_bytes(b"time,unix_s,requests,get_by_name\n\xff\xfe\x00junk\n")
    with pytest.raises(InputError, match="not UTF-8"):
        workload.read_arrivals(str(p))


def _study(tmp_path):
    rng = np.random.default_rng(7)
    one = synth.run_dir(str(tmp_path / "one"), rng, 400.0, 1)
    two = synth.run_dir(str(tmp_path / "two"), rng, 800.0, 2)
    return one, two


def test_report_headroom_and_target(tmp_path, capsys):
    one, two = _study(tmp_path)
    wl = _workload(tmp_path / "workload.json", peak=200)
    # the second run replayed this very file (meta.json's workload.sha256)
    meta = json.loads((tmp_path / "two" / "meta.json").read_text())
    meta["workload"] = {"sha256": hashlib.sha256(wl.read_bytes()).hexdigest()}
    (tmp_path / "two" / "meta.json").write_text(json.dumps(meta))
    secs = 1796676790 + np.arange(600)
    lines = ["time,unix_s,requests,get_by_name,interpolate"] + [
        f"t,{s},{20 + s % 60 + (5 + s % 7 if i % 2 == 0 else 0)},{20 + s % 60},{5 + s % 7 if i % 2 == 0 else 0}"
        for i, s in enumerate(secs)]
    (tmp_path / "workload-arrivals.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    rc = cli.main([one, two, "--out", str(out), "--workload", str(wl), "--growth", "40%/yr", "--replicates", "0",
                   "--format", "png"])
    assert rc == 0, capsys.readouterr().err
    cap = json.loads((out / "capacity.json").read_text())
    w = cap["workload"]
    assert w["peak_rps"] == 200 and w["growth_per_year"] == pytest.approx(0.4) and w["p99_second_rps"] == 150
    assert cap["target_rps"] == pytest.approx(280) and w["target_rps"] == pytest.approx(280)
    assert cap["scenarios"]["get"]["recommendation"]["target_rps"] == pytest.approx(280)
    rows = {r["instances"]: r for r in w["headroom"]}
    for n, r in rows.items():
        size = next(c["size_with_rps"] for c in cap["scenarios"]["get"]["capacity"] if c["instances"] == n)
        assert r["factor"] == pytest.approx(size / 200)
        assert r["years"] == pytest.approx(math.log(size / 200) / math.log(1.4))
    assert rows[2]["replays_workload"] is True and rows[1]["replays_workload"] is False
    md = (out / "report.md").read_text()
    assert "## Headroom against production" in md and "200 req/s, 99th percentile of seconds 150 req/s" in md
    assert f"| get | 2 | {rows[2]['size_with_rps']:,.0f} | {rows[2]['factor']:.1f}x headroom: " \
           f"{rows[2]['years']:.1f} years at 40 %/yr | yes |" in md
    assert "sizes for 280 req/s (the peak after a year at 40 %)" in md
    assert "![production arrivals by type](workload-arrivals.png)" in md
    for name in ("workload-arrivals.png", "headroom-get-1-instances.png", "headroom-get-2-instances.png"):
        assert (out / name).stat().st_size > 1000


@pytest.mark.parametrize("extra,needle", [
    (["--growth", "40%/month"], "--growth must be a yearly growth like 40%/yr"),
    (["--growth", "40%"], "--growth needs --workload"),
    (["--workload", "WL", "--target-rps", "100"], "give --workload or --target-rps, not both"),
    (["--workload", "/nonexistent/workload.json"], "--workload /nonexistent/workload.json: no such file"),
])
def test_cli_refuses(tmp_path, capsys, extra, needle):
    one, _ = _study(tmp_path)
    wl = str(_workload(tmp_path / "workload.json"))
    rc = cli.main([one, "--out", str(tmp_path / "out")] + [wl if a == "WL" else a for a in extra])
    err = capsys.readouterr().err
    assert rc == 2 and needle in err and err.count("\n") == 1, err


def test_utilisation_plots_mark_the_peak(tmp, tmp_path, virtual_ramp, credhub_perf):
    """The scaling study of test_utilisation against a production peak of 150 req/s growing 40 % a year:
    the recommendation sizes for 210 req/s (more than 2 instances of 100 req/s each), and the utilisation
    plots carry the peak."""
    dirs = [_study_run(str(tmp), n, virtual_ramp, credhub_perf) for n in (1, 2, 4)]
    wl = _workload(tmp_path / "workload.json", peak=150)
    out = str(tmp / "report")
    assert cli.main([*dirs, "--out", out, "--slo-ms", "100", "--workload", str(wl), "--growth", "40%",
                     "--quiet", "--replicates", "0", "--format", "png"]) == 0
    doc = json.load(open(os.path.join(out, "capacity.json")))
    rec = doc["scenarios"]["get"]["recommendation"]
    assert doc["target_rps"] == pytest.approx(210) and rec["target_rps"] == pytest.approx(210)
    assert rec["instances"] in (3, 4) and "for 210 req/s" in rec["text"], rec["text"]
    one = next(r for r in doc["workload"]["headroom"] if r["instances"] == 1)
    assert one["factor"] < 1 and one["years"] == 0 and "below the production peak" in one["text"]
    for name in ("utilisation-get.png", "utilisation-get-1-instances.png", "utilisation-get-4-instances.png"):
        assert os.path.getsize(os.path.join(out, name)) > 10000
