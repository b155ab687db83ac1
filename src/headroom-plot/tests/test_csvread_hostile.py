"""Hostile CSVs: every damaged row is one line FILE:LINE: ..., never a traceback or a number.

The fixed cases each raised IndexError/OverflowError/ValueError tracebacks, or were read as
numbers, before the reader was made line-oriented and strict.  The Hypothesis test fuzzes the
reader: `make test` runs HEADROOM_FUZZ_EXAMPLES (default 150 per test) derandomized examples, `make bench`
(scripts/bench-fuzz) many more with fresh randomness.
"""
from __future__ import annotations

import os
import re
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headroom_plot import csvread
from headroom_plot.csvread import InputError, read_csv

from conftest import OURS, OURS13, our_row

GOOD = our_row(0.000001, 0.001)
FORK2 = "start-time,response-time"
UPSTREAM = "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset"


def ours(body: str) -> str:
    return OURS + "\n" + GOOD + "\n" + GOOD + "\n" + body


def row(i: int, v: str) -> str:
    f = GOOD.split(",")
    f[i] = v
    return ",".join(f) + "\n"


CASES = [
    ("bare quote (IndexError before)", ours('ab"c,1,2\n'), 4, "unparseable row"),
    ("binary junk", ours("\x00\xff\xfe\x89PNG\r\n\x1a,\"\x01\x02\n"), 4, "unparseable row"),
    ("nan latency (traceback before)", ours(row(1, "nan")), 4, "response-time 'nan' is not a decimal number"),
    ("inf latency", ours(row(1, "inf")), 4, "response-time 'inf' is not a decimal number"),
    ("1e309 latency", ours(row(1, "1e309")), 4, "response-time '1e309' is not a finite number"),
    ("1e300 latency", ours(row(1, "1e300")), 4, "out of range"),
    ("negative latency", ours(row(1, "-0.5")), 4, "response-time -0.5 is out of range"),
    ("negative phase", ours(row(4, "-0.000001")), 4, "Request-write -0.000001 is out of range"),
    ("damaged phase", ours(row(2, "x")), 4, "DNS+dialup 'x' is not a decimal number"),
    ("negative sched-lag", ours(row(11, "-1")), 4, "sched-lag -1 is out of range"),
    ("nan offset", ours(row(8, "NaN")), 4, "offset 'NaN' is not a decimal number"),
    ("underscores", ours(row(1, "1_0")), 4, "not a decimal number"),
    ("status 70000 (wrapped in int16 before)", ours(row(7, "70000")), 4, "status-code 70000 is out of range"),
    ("status 200.0", ours(row(7, "200.0")), 4, "status-code '200.0' is not an integer"),
    ("status 2e2", ours(row(7, "2e2")), 4, "not an integer"),
    ("status 0200", ours(row(7, "0200")), 4, "not an integer"),
    ("concurrency 0", ours(row(9, "0")), 4, "concurrency 0 is out of range"),
    ("rate inf", ours(row(10, "inf")), 4, "rate 'inf' is not a decimal number"),
    ("bad start-time with offset", ours(row(0, "2026-13-01T00:00:00Z")), 4, "not RFC 3339"),
    ("quoted number", ours(row(1, '"0.1"')), 4, "a quote"),
    ("unclosed quote, more lines follow", ours(row(12, '"dial: refused') + GOOD + "\n"), 4, "not one quoted field"),
    ("text after the closing quote", ours(row(12, '"a"b')), 4, "not one quoted field"),
    ("undoubled inner quote", ours(row(12, '"a"x"b"')), 4, "not one quoted field"),
    ("line break inside quotes", ours(row(12, '"a\nb"')), 4, "13 fields where the header has 14"),
    ("long line", ours("1" * (csvread.MAX_LINE + 10) + "\n"), 4, "line longer than"),
    ("unknown request type", ours(row(13, "delete")), 4, "request 'delete' is not a request type"),
    ("request type in capitals", ours(row(13, "GET")), 4, "is not a request type"),
    ("request type too long", ours(row(13, "g" * 5000)), 4, "request '" + "g" * 40 + "...' is not a request type"),
    ("quoted request type", ours(row(13, '"get"')), 4, "a quote (\") in the request column"),
    ("request type with a space", ours(row(13, "get ")), 4, "is not a request type"),
    ("binary request type", ours(row(13, "\x00\xff")), 4, "is not a request type"),
    ("request type with a comma", ours(row(13, "get,set")), 4, "15 fields where the header has 14"),
    ("13-column row in a 14-column file", ours(GOOD.rsplit(",", 1)[0] + "\n"), 4, "13 fields where the header has 14"),
    ("no comma at all", ours("12345\n"), 4, "1 fields where the header has 14"),
    ("quoted error then junk", ours(row(12, '"a"x')), 4, "not one quoted field"),
    ("no line ends", OURS + "\n" + GOOD + "\n" + "\x00" * (3 * csvread.MAX_LINE), 3, "line longer than"),
    ("hey fork nan", f"{FORK2}\n2017-06-01T10:00:00Z,nan\n2017-06-01T10:00:00Z,0.1\n", 2, "response-time 'nan'"),
    ("hey fork quote", f'{FORK2}\n2017-06-01T10:00:00Z,"0.1"\n', 2, "a quote"),
    ("upstream hey inf offset", f"{UPSTREAM}\n0.0050,0.0010,0.0001,0.0000,0.0039,0.0000,200,inf\n", 2, "offset 'inf'"),
]


def _write(content) -> str:
    fd, path = tempfile.mkstemp(suffix=".csv")
    with os.fdopen(fd, "wb") as f:
        f.write(content.encode("utf-8", "surrogateescape") if isinstance(content, str) else content)
    return path


@pytest.mark.parametrize("name,content,line,needle", CASES, ids=[c[0] for c in CASES])
def test_hostile_rows_are_one_line_errors(name, content, line, needle):
    path = _write(content)
    try:
        with pytest.raises(InputError) as exc:
            read_csv(path)
    finally:
        os.unlink(path)
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(f"{path}:{line}: ") and needle in msg, msg


@pytest.mark.parametrize("last", ['ab"c,1,2', "\x00\xff", row(1, "nan")[:-1], GOOD,
                                  "2026-01-01T00:00:00Z,0.1,0,0,0,0,0,500,0,1,0,0,\"dial: conn"])
def test_only_the_unterminated_last_line_is_skipped(last):
    """The documented rule: a last line without a line end is skipped with a warning, whatever it holds."""
    path = _write(ours(last))
    try:
        t = read_csv(path)
        assert len(t) == 2 and len(t.warnings) == 1 and f"{path}:4: last line has no line end" in t.warnings[0]
        if last != GOOD:
            with open(path, "a") as f:
                f.write("\n")
            with pytest.raises(InputError, match=re.escape(f"{path}:4: ")):
                read_csv(path)
    finally:
        os.unlink(path)


def test_request_column_and_the_13_column_format():
    """The request column is read as indices into REQUEST_TYPES (-1 empty), after a quoted error
    with commas too; files from before the column still read, with request None."""
    rows = [our_row(0.0, 0.001, request="set"), our_row(0.1, 0.002, 500, error='x, "y"', request="interpolate"),
            our_row(0.2, 0.003, request=""), our_row(0.3, 0.004, request="custom"), GOOD]
    path = _write(OURS + "\n" + "\n".join(rows) + "\n")
    old = _write(OURS13 + "\n" + our_row(0.0, 0.001, request=None) + "\n" + our_row(0.1, 0.002, 0, error="a,b", request=None) + "\n")
    try:
        t, t13 = read_csv(path), read_csv(old)
    finally:
        os.unlink(path)
        os.unlink(old)
    assert [csvread.REQUEST_TYPES[c] if c >= 0 else "" for c in t.request] == ["set", "interpolate", "", "custom", "get"]
    assert t.error_messages == ['x, "y"'] and list(t.status) == [200, 500, 200, 200, 200]
    assert t13.request is None and list(t13.error) == [False, True] and len(t13) == 2


def test_what_writers_write_still_reads():
    """CRLF, a BOM, blank lines, a negative offset and a quoted error with commas and quotes."""
    body = (row(8, "-0.001000").replace(",200,", ",0,").replace(",,get\n", ",") + '"tls: ""bad"", cert",get\n' + GOOD + "\n\n")
    path = _write("\ufeff" + (OURS + "\n" + body).replace("\n", "\r\n"))
    try:
        t = read_csv(path)
    finally:
        os.unlink(path)
    assert len(t) == 2 and t.warnings == []
    assert list(t.status) == [0, 200] and t.offset[0] == pytest.approx(-0.001)
    assert t.error_messages == ['tls: "bad", cert']


# --- fuzzing ---------------------------------------------------------------------------------

TOKENS = ["get", "set", "interpolate", "custom", "GET", "delete", "g" * 300, '"get"', "get,", "nan", "inf", "-inf", "1e309", "1e300", "-0.5", "-1", "0", "0.001", "70000", "2e2", "200.0", '"',
          '"a,b"', '"a""b"', '"x', "", ",", "\x00", "\xff", " ", "0x1p-3", "1_0", "\r", "+1"]
HEADERS = [OURS, OURS13, FORK2, "start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read",
           UPSTREAM]


@st.composite
def hostile_files(draw):
    header = draw(st.sampled_from(HEADERS))
    good = {OURS: GOOD, OURS13: GOOD.rsplit(",", 1)[0], FORK2: "2017-06-01T10:00:00Z,0.0050", UPSTREAM: "0.0050,0.0010,0.0001,0.0000,0.0039,0.0000,200,0.0010"}
    base = good.get(header, "2017-06-01T10:00:00.002Z,0.0050,0.0010,0.0001,0.0000,0.0039,0.0000")
    lines = [header]
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.integers(0, 4))
        if kind == 0:
            lines.append(base)
        elif kind == 1:  # one field replaced by a hostile token
            f = base.split(",")
            f[draw(st.integers(0, len(f) - 1))] = draw(st.sampled_from(TOKENS))
            lines.append(",".join(f))
        elif kind == 2:  # raw bytes
            lines.append(draw(st.binary(max_size=40)).decode("latin-1"))
        elif kind == 3:
            lines.append(draw(st.sampled_from(HEADERS + ["", 'ab"c,1,2'])))
        else:  # a good line cut short
            lines.append(base[: draw(st.integers(0, len(base)))])
    text = "\n".join(lines) + draw(st.sampled_from(["\n", "", "\r\n"]))
    return text.encode("latin-1", "replace") if draw(st.booleans()) else text.encode("utf-8", "surrogateescape")


def _check(data: bytes) -> None:
    path = _write(data)
    try:
        t = read_csv(path)
    except InputError as exc:
        msg = str(exc)
        assert "\n" not in msg and re.match(re.escape(path) + r"(:[0-9]+)?: ", msg), msg
        return
    finally:
        os.unlink(path)
    assert len(t) > 0
    assert np.isfinite(t.latency).all() and (t.latency >= 0).all() and (t.latency <= csvread.MAX_DURATION_S).all()
    assert np.isfinite(t.offset).all() and (np.abs(t.offset) <= csvread.MAX_OFFSET_S).all()
    if t.status is not None:
        assert ((t.status >= 0) & (t.status <= csvread.MAX_STATUS)).all()
    if t.concurrency is not None:
        assert (t.concurrency >= 1).all()
    if t.rate is not None:
        assert np.isfinite(t.rate).all() and (t.rate >= 0).all()
    if t.sched_lag is not None:
        assert np.isfinite(t.sched_lag).all() and (t.sched_lag >= 0).all()
    assert len(t.segment) == len(t.latency)
    if t.request is not None:
        assert len(t.request) == len(t.latency) and ((t.request >= -1) & (t.request < len(csvread.REQUEST_TYPES))).all()


FUZZ = settings(max_examples=int(os.environ.get("HEADROOM_FUZZ_EXAMPLES", "150")), deadline=None, database=None,
                derandomize=not os.environ.get("HEADROOM_FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(hostile_files())
def test_fuzz_structured(data):
    _check(data)


@FUZZ
@given(st.binary(max_size=400).map(lambda b: (OURS + "\n").encode() + b))
def test_fuzz_bytes_after_header(data):
    _check(data)


def _outcome(data: bytes, monkeypatch, split: bool):
    """read_csv's table (as comparable lists) or its error, with the quoted rows read apart from the
    others (split) or every row by the general comma search."""
    with monkeypatch.context() as m:
        if not split:
            m.setattr(csvread, "_rows_without", lambda *a: None)
        path = _write(data)
        try:
            t = read_csv(path)
        except InputError as exc:
            return str(exc).replace(path, "F")
        finally:
            os.unlink(path)
    return [None if v is None else v.tolist() for v in (t.latency, t.offset, t.status, t.concurrency, t.rate,
                                                        t.sched_lag, t.error, t.request, t.segment)] + [
        t.error_messages, [w.replace(path, "F") for w in t.warnings]]


@st.composite
def quoted_mixes(draw):
    """Our format: plain rows, rows whose error is quoted (with commas and quotes), and at most one
    hostile row among them."""
    rows = [OURS]
    for i in range(draw(st.integers(1, 30))):
        kind = draw(st.integers(0, 5))
        if kind <= 2:
            rows.append(our_row(i * 0.001, 0.002))
        elif kind == 3:
            rows.append(our_row(i * 0.001, 0.002, 0, error=draw(st.sampled_from(['x, "y"', 'a,b,c', '"q"', 'tls: "bad"']))))
        elif kind == 4:
            f = our_row(i * 0.001, 0.002).split(",")
            f[draw(st.integers(0, len(f) - 1))] = draw(st.sampled_from(TOKENS))
            rows.append(",".join(f))
        else:
            rows.append(our_row(i * 0.001, 0.002)[: draw(st.integers(0, 80))])
    return ("\n".join(rows) + "\n").encode()


@FUZZ
@given(quoted_mixes(), st.sampled_from([None, 97, 300]))
def test_quoted_rows_read_apart_as_by_the_general_search(data, chunk):
    """Rows with a quote are read apart from the rest, whose commas are then one matrix: the same table
    or the same one-line error as when every row goes through the general comma search, whole and in
    chunks."""
    with pytest.MonkeyPatch.context() as m:
        if chunk:
            m.setattr(csvread, "CHUNK", chunk)
        assert _outcome(data, m, True) == _outcome(data, m, False)
