"""How the benches read the tools' outputs (scripts/benchrun.py, scripts/bench-generators), on known answers."""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

import pytest

SCRIPTS = os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "..", "scripts")
sys.path.insert(0, SCRIPTS)
import benchrun  # noqa: E402

_loader = importlib.machinery.SourceFileLoader("bench_generators", os.path.join(SCRIPTS, "bench-generators"))
bg = importlib.util.module_from_spec(importlib.util.spec_from_loader("bench_generators", _loader))
_loader.exec_module(bg)

HEY = """
Summary:
  Total:\t1.0065 secs
  Requests/sec:\t5739.6280

Latency distribution:
  10% in 0.0008 secs
  50% in 0.0049 secs
  99% in 0.0331 secs

Status code distribution:
  [200]\t5777 responses
"""


def test_parse_hey():
    assert benchrun.parse_hey(HEY, None, None) == dict(rps=5739.628, p50_ms=pytest.approx(4.9),
                                                       p99_ms=pytest.approx(33.1), note="")
    errs = HEY + "\nError distribution:\n  [3]\tGet \"https://x/\": EOF\n  [1]\tdial tcp: refused\n  [9]\tmore\n"
    assert benchrun.parse_hey(errs, None, None)["note"] == 'errors: [3]\tGet "https://x/": EOF [1]\tdial tcp: refused'
    with pytest.raises(ValueError):
        benchrun.parse_hey("no summary", None, None)


def test_server_stats():
    text = "listening\nnull-server stats: requests=400 conns=4 handshakes=4 resumed=0 groups=X25519:4 handled_mean_us=54.5\n"
    assert benchrun.server_stats(text) == dict(requests=400, conns=4, handshakes=4, resumed=0, groups="X25519:4",
                                               handled_mean_us=54.5)
    assert benchrun.server_stats("killed") == {}


def test_last_line():
    assert benchrun.last_line("a\n  b  \n\n") == "b"
    assert benchrun.last_line("") == "no output" and benchrun.last_line(None) == "no output"


def test_parse_wrk():
    out = """Running 10s test @ https://127.0.0.1:1/
  Latency Distribution
     50%  612.00us
     99%    1.50ms
  41234 requests in 10.00s, 3.1MB read
  Socket errors: connect 0, read 2, write 0, timeout 0
Requests/sec:   4123.40
"""
    assert bg.parse_wrk(out, None, None) == dict(rps=4123.4, p50_ms=pytest.approx(0.612), p99_ms=1.5,
                                                 note="Socket errors: connect 0, read 2, write 0, timeout 0")
    assert bg.wrk_ms("2s") == 2000 and bg.wrk_ms("1.5m") == 90000
    with pytest.raises(ValueError):
        bg.wrk_ms("12")


def test_parse_oha():
    out = ('noise {"summary": {"successRate": 0.5, "requestsPerSec": 1000.5}, '
           '"latencyPercentiles": {"p50": 0.002, "p99": null}, "errorDistribution": {"refused": 3}}')
    assert bg.parse_oha(out, None, None) == dict(rps=1000.5, p50_ms=2.0, p99_ms=None,
                                                 note='success 0.5000: {"refused": 3}')
    with pytest.raises(ValueError):
        bg.parse_oha("no json", None, None)


def test_write_results_one_header_for_every_bench(tmp_path, monkeypatch):
    """bench-generators, bench-openloop and bench-plotting (through benchrun.py write-results) write their
    results.md alike: the tree and the machine, the command, then the figures; results.json beside it."""
    monkeypatch.setattr(benchrun, "tree", lambda: "abc1234")
    start = dict(nproc=2, cpu_model="Xeon", kernel="6.1", loadavg="0.10 0.20 0.30")
    end = dict(start, loadavg="1.00 1.00 1.00")
    md = benchrun.write_results(str(tmp_path), "BENCH_REPEATS=3 scripts/bench-x", "| a |\n", data={"runs": [1]},
                                start=start, end=end, more="vegeta 12.")
    assert md == ("Tree: abc1234. Machine: 2 cores, Xeon, kernel 6.1, load average at start 0.10 0.20 0.30, "
                  "at end 1.00 1.00 1.00. vegeta 12.\nCommand: BENCH_REPEATS=3 scripts/bench-x\n\n| a |\n")
    assert (tmp_path / "results.md").read_text() == md
    data = __import__("json").loads((tmp_path / "results.json").read_text())
    assert data["runs"] == [1] and data["tree"] == "abc1234" and data["machine_end"] == end
    # written only at the end (bench-plotting): the machine as it was then
    assert benchrun.header(None, end).endswith("kernel 6.1, load average at end 1.00 1.00 1.00.")


def test_results_dir_is_dated_under_the_cache_or_bench_out(tmp_path, monkeypatch):
    monkeypatch.delenv("BENCH_OUT", raising=False)
    monkeypatch.setattr(benchrun, "CACHE", str(tmp_path))
    out = benchrun.results_dir("plotting")
    assert os.path.isdir(out) and os.path.dirname(out) == str(tmp_path / "bench")
    assert os.path.basename(out).startswith("plotting-20")
    monkeypatch.setenv("BENCH_OUT", str(tmp_path / "given"))
    assert benchrun.results_dir("plotting") == str(tmp_path / "given") and os.path.isdir(tmp_path / "given")
