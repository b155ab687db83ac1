import datetime as dt

import numpy as np
import pytest

from headroom_plot import csvread
from headroom_plot.csvread import InputError, check_rfc3339, parse_decimal, parse_rfc3339, read_csv

from conftest import OURS, our_row, rfc3339, write_ours


def _fields(strings):
    data = ",".join(strings).encode()
    buf = np.frombuffer(data, dtype=np.uint8)
    s, e, pos = [], [], 0
    for t in strings:
        s.append(pos)
        e.append(pos + len(t))
        pos += len(t) + 1
    return buf, np.array(s), np.array(e)


def test_parse_decimal_matches_float():
    rng = np.random.default_rng(5)
    vals = ["0.012345", "12.5", "7", "-3.25", ".5", "123456.000001", "0", "200", "1e-3", "0.1000"]
    vals += [f"{v:.{d}f}" for v, d in zip(rng.random(300) * 10 ** rng.integers(0, 6, 300), rng.integers(0, 7, 300))]
    buf, s, e = _fields(vals)
    out, ok = parse_decimal(buf, s, e)
    for v, o, k in zip(vals, out, ok):
        if "e" in v:
            assert not k  # exponents go to the float() fallback
        else:
            assert k and o == pytest.approx(float(v), rel=1e-15, abs=1e-15), v


def test_parse_decimal_rejects_garbage():
    buf, s, e = _fields(["abc", "1.2.3", "", " 1", "12x"])
    _, ok = parse_decimal(buf, s, e)
    assert not ok.any()


def test_parse_rfc3339_variable_fractions_and_zones():
    stamps = ["2026-11-18T10:00:00Z", "2026-11-18T10:00:00.5Z", "2026-11-18T10:00:00.123456789Z",
              "2017-06-01T12:34:56.000001+02:00", "2024-02-29T23:59:59.25-07:30"]
    buf, s, e = _fields(stamps)
    got = parse_rfc3339(buf, s, e)
    for t, g in zip(stamps, got):
        want = dt.datetime.fromisoformat(t.replace("Z", "+00:00")[:26] + t[29:] if len(t) > 35 else
                                         t.replace("Z", "+00:00")).timestamp()
        if "123456789" in t:
            want += 0.000000789
        assert g == pytest.approx(want, abs=2e-6), t
    with pytest.raises(ValueError):
        b2, s2, e2 = _fields(["2026-13-18T10:00:00Z"])
        parse_rfc3339(b2, s2, e2)


def _first_bad(check, fields) -> int | None:
    try:
        check(*_fields(fields))
    except ValueError as exc:
        return int(str(exc))
    return None


def test_check_rfc3339_judges_as_parse_rfc3339():
    """The check without values accepts what the parser accepts and names the same first bad field, on
    columns of one width (its own path) and of several (the parser's), over random damage."""
    good = "2026-11-18T11:06:40.000000000Z"
    assert _first_bad(check_rfc3339, [good, good.replace("T", " "), good.lower()]) is None
    assert _first_bad(check_rfc3339, [good, good[:-1] + "+02:00"]) is None  # not one width: the parser's
    assert _first_bad(check_rfc3339, [good, "2026-11-18T24:06:40.000000000Z"]) == 1
    assert _first_bad(check_rfc3339, [good, good, "2026-11-18T11:06:40.00000000xZ"]) == 2
    rng = np.random.default_rng(3)
    alphabet = "0123456789-:.TtZz +x"
    for _ in range(3000):
        fields = [list(good) for _ in range(4)]
        row = fields[rng.integers(0, 4)]
        for _ in range(rng.integers(1, 3)):
            row[rng.integers(0, len(good))] = alphabet[rng.integers(0, len(alphabet))]
        fields = ["".join(f) for f in fields]
        assert _first_bad(check_rfc3339, fields) == _first_bad(parse_rfc3339, fields), fields


def test_our_format_with_failures_and_quoted_errors(tmp):
    rows = [our_row(0.0, 0.010), our_row(0.01, 0.020, 503),
            our_row(0.02, 0.001, 0, error='Get "https://x:1/api": dial tcp: connection refused, retry'),
            our_row(0.03, 0.030)]
    t = read_csv(write_ours(tmp / "r.csv", rows))
    assert t.format == "credhub-perf"
    assert list(t.latency) == [0.010, 0.020, 0.001, 0.030]
    assert list(t.status) == [200, 503, 0, 200]
    assert list(t.error) == [False, False, True, False]
    assert t.offset[3] == pytest.approx(0.03)
    assert t.error_messages == ['Get "https://x:1/api": dial tcp: connection refused, retry']
    assert t.start0 == pytest.approx(dt.datetime(2026, 11, 18, 10, tzinfo=dt.timezone.utc).timestamp())


def test_phases_only_when_asked(tmp):
    rows = [our_row(0.0, 0.010), our_row(0.01, 0.020, 503), our_row(0.02, 0.001)]
    path = write_ours(tmp / "r.csv", rows)
    assert read_csv(path).phases is None
    # DNS+dialup + Request-write + Response-delay + Response-read (DNS is within DNS+dialup):
    # our_row writes 0, 10 us, 0.9 x latency and 20 us.
    assert read_csv(path, phases=True).phases == pytest.approx([0.00903, 0.01803, 0.00093])


def test_small_chunks_give_the_same_columns(tmp, monkeypatch):
    rows = [our_row(i * 0.001, 0.001 * (1 + i % 7), 200 if i % 13 else 0, 4,
                    error="" if i % 13 else 'boom, "quoted", ""twice""') for i in range(500)]
    path = write_ours(tmp / "r.csv", rows)
    big = read_csv(path)
    monkeypatch.setattr(csvread, "CHUNK", 97)
    small = read_csv(path)
    assert len(big) == len(small) == 500
    np.testing.assert_array_equal(big.latency, small.latency)
    np.testing.assert_array_equal(big.error, small.error)
    assert big.error.sum() == 39
    assert small.error_messages[0] == 'boom, "quoted", ""twice""'


def test_hey_fork_two_columns_repeated_headers(tmp):
    lines = []
    for step in range(3):
        lines.append("start-time,response-time")
        for i in range(10):
            lines.append(f"{rfc3339(step * 10 + i * 0.5)},{0.0100 + step * 0.001:.4f}")
    p = tmp / "fork.csv"
    p.write_text("\n".join(lines) + "\n")
    t = read_csv(str(p))
    assert t.format == "hey-fork-2"
    assert len(t) == 30
    assert list(np.unique(t.segment)) == [0, 1, 2]
    assert t.status is None and t.error is None
    assert t.offset[-1] == pytest.approx(24.5)


def test_upstream_hey_format(tmp):
    p = tmp / "hey.csv"
    p.write_text("response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset\n"
                 "0.0123,0.0010,0.0000,0.0000,0.0110,0.0001,200,0.0012\n"
                 "0.0200,0.0000,0.0000,0.0000,0.0190,0.0001,500,0.0050\n")
    t = read_csv(str(p))
    assert t.format == "hey"
    assert list(t.status) == [200, 500]
    assert list(t.offset) == [0.0012, 0.0050]


@pytest.mark.parametrize("content,line,needle", [
    ("", 1, "file is empty"),
    ("time,latency\n1,2\n", 1, "no recognised CSV header"),
    (OURS + "\n", None, "no data rows"),
    (OURS + "\n" + our_row(0, 0.01) + "\n" + our_row(0.1, 0.01).replace("0.010000", "0.0x0000", 1) + "\n", 3,
     "response-time '0.0x0000' is not a decimal number"),
    (OURS + "\n" + our_row(0, 0.01) + "\n1,2,3\n", 3, "3 fields where the header has 14"),
    (OURS + "\n" + "garbage line here\n", 2, "unparseable row"),
    ("start-time,response-time\n" + rfc3339(0) + ",0.01\nresponse-time,DNS+dialup,DNS,Request-write,"
     "Response-delay,Response-read,status-code,offset\n", 3, "header of another CSV format"),
    ("start-time,response-time\n2017-06-01 bogus time,0.01\n", 2, "not RFC 3339"),
])
def test_bad_input_names_file_and_line(tmp, content, line, needle):
    p = tmp / "bad.csv"
    p.write_text(content)
    with pytest.raises(InputError) as exc:
        read_csv(str(p))
    msg = str(exc.value)
    assert "\n" not in msg and needle in msg
    assert msg.startswith(f"{p}:{line}:" if line else f"{p}:")


def test_missing_file(tmp):
    with pytest.raises(InputError, match="no such file"):
        read_csv(str(tmp / "nope.csv"))


def test_truncated_last_line_is_skipped_with_warning(tmp):
    p = tmp / "cut.csv"
    p.write_text(OURS + "\n" + our_row(0, 0.01) + "\n" + our_row(0.1, 0.02) + "\n" + our_row(0.2, 0.03)[:40])
    t = read_csv(str(p))
    assert len(t) == 2
    assert len(t.warnings) == 1 and f"{p}:4:" in t.warnings[0] and "skipped" in t.warnings[0]


def test_line_numbers_stay_right_across_chunks(tmp, monkeypatch):
    rows = [our_row(i * 0.001, 0.002, error='x, "y"' if i % 5 == 0 else "") for i in range(400)]
    rows[297] = rows[297].replace(",200,", ",2x0,", 1)  # file line 299 (header is line 1)
    path = write_ours(tmp / "r.csv", rows)
    monkeypatch.setattr(csvread, "CHUNK", 113)
    with pytest.raises(InputError) as exc:
        read_csv(path)
    assert str(exc.value).startswith(f"{path}:299: unparseable row: status-code '2x0' is not an integer")
