"""Vectorised reader for credhub-perf and hey CSV files.

Rows are never handled one at a time in Python: the file is read in large
byte chunks, line ends and commas are located with numpy, and each numeric
column is parsed by gathering its characters into a (rows, width) matrix and
combining the digits arithmetically.  That keeps 10 million rows within
seconds and a few hundred MB, where csv.reader or pandas take minutes.

Only the columns the analysis needs are parsed (response-time, status-code,
offset, concurrency, rate, sched-lag, whether error is empty; start-time only
when there is no offset).  The phase columns are checked (a damaged one refuses
its row, as the Go reader does) and returned only when asked, as one sum
(read_csv(phases=True): the open-loop bench's connection wait).
"""
from __future__ import annotations

import csv
import io
import os
import re
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np


class InputError(Exception):
    """Bad input: the message is one line naming the file (and line) and the fix."""


OURS13 = ("start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,"
          "status-code,offset,concurrency,rate,sched-lag,error")
OURS = OURS13 + ",request"  # the request column, appended after error; OURS13 files still read
FORK7 = "start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read"
FORK2 = "start-time,response-time"
UPSTREAM = "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset"

FORMATS = {
    OURS: "credhub-perf",
    OURS13: "credhub-perf",
    FORK7: "hey-fork-7",
    FORK2: "hey-fork-2",
    UPSTREAM: "hey",
}
KNOWN_COLUMNS = set(OURS.split(","))
WANTED = ("response-time", "status-code", "offset", "concurrency", "rate", "sched-lag")

CHUNK = 16 << 20

# Limits of what a results file can hold; the Go reader (src/credhub-perf/results/csvreader.go)
# applies the same ones, and docs/csv-format.md lists them.  Anything outside is damage, not a
# measurement: a NaN or 1e309 latency would end in a traceback, a 70000 status wrap in int16.
MAX_LINE = 1 << 20          # bytes; a file without line ends (binary junk) is refused, not slurped
MAX_DURATION_S = 10000.0    # response-time, the phase columns, sched-lag: [0, this]
MAX_OFFSET_S = 1e7          # |offset|
MAX_STATUS = 999
MAX_CONCURRENCY = 1_000_000
MAX_RATE = 1e9
# [-]digits[.digits][e[-+]digits]: what writers of seconds produce.  float() alone would also
# take nan, inf, "1_0" and surrounding spaces.
_DECIMAL = re.compile(rb"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
PHASES = ("DNS+dialup", "DNS", "Request-write", "Response-delay", "Response-read")
_RANGES = {name: (0.0, MAX_DURATION_S) for name in ("response-time", "sched-lag") + PHASES}
_RANGES.update({"offset": (-MAX_OFFSET_S, MAX_OFFSET_S), "rate": (0.0, MAX_RATE),
                "status-code": (0, MAX_STATUS), "concurrency": (1, MAX_CONCURRENCY)})
_INTEGER = ("status-code", "concurrency")
# What the request column may hold (the Go reader's RequestTypes); Table.request holds the index
# into this tuple, -1 for an empty field (hey names no type).
REQUEST_TYPES = ("get", "set", "interpolate", "custom")
ERROR_SAMPLE = 2000  # error messages kept per file for the report's "most common" list

_POW10 = 10 ** np.arange(19, dtype=np.int64)


@dataclass
class Table:
    """Columns of one CSV file (one entry per data row, in file order)."""

    path: str
    format: str
    columns: list[str]
    latency: np.ndarray                 # seconds, float64
    offset: np.ndarray | None           # seconds from run start, float64
    start: np.ndarray | None            # epoch seconds (float64), only parsed when offset is absent
    start0: float | None                # epoch seconds of the earliest-offset row (tester alignment)
    status: np.ndarray | None           # int16
    concurrency: np.ndarray | None      # int32
    rate: np.ndarray | None             # float64
    sched_lag: np.ndarray | None        # float32 seconds
    error: np.ndarray | None            # bool: error column non-empty
    segment: np.ndarray                 # int32: index of the header block the row follows
    request: np.ndarray | None = None   # int8 index into REQUEST_TYPES, -1 empty; None: no column
    # read_csv(phases=True) only, for the open-loop bench: DNS+dialup + Request-write + Response-delay +
    # Response-read, float64 seconds (the time a request used a connection); None otherwise or without them.
    phases: np.ndarray | None = None
    error_messages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.latency)


_CANONICAL = {c.lower(): c for c in KNOWN_COLUMNS}


def detect_format(header: str, where: str) -> tuple[str, list[str]]:
    """The format of a file whose first line (without its line end) is header, and its columns; the Go reader's
    rule (results.parseHeader), held with it to results/testdata/headers/expect.json: a header starts with
    start-time or response-time; its columns, case and spaces aside, are known ones, each once, with
    response-time; the credhub-perf header exactly, or 7 columns with start-time (the hey fork with -more), 2
    with it (the old fork), or offset without start-time (hey -o csv)."""
    header = header.removeprefix("\ufeff")
    cols = [_CANONICAL.get(c.strip().lower()) for c in header.split(",")]
    starts = header.startswith(("start-time,", "response-time,")) or header in ("start-time", "response-time")
    fmt = None
    if starts and None not in cols and len(set(cols)) == len(cols) and "response-time" in cols:
        if header in (OURS, OURS13):
            fmt = "credhub-perf"
        elif "start-time" in cols and len(cols) in (7, 2):
            fmt = "hey-fork-7" if len(cols) == 7 else "hey-fork-2"
        elif "start-time" not in cols and "offset" in cols:
            fmt = "hey"
    if fmt is not None:
        return fmt, cols
    shown = header if len(header) < 60 else header[:57] + "..."
    raise InputError(
        f"{where}:1: no recognised CSV header (got {shown!r}); expected the credhub-perf header "
        f"'{OURS[:40]}...', hey's '{UPSTREAM[:30]}...' or the hey fork's '{FORK2}[,...]'")


def _gather(buf: np.ndarray, s: np.ndarray, width: int) -> np.ndarray:
    """(n, width) uint8: the `width` bytes from each position in s."""
    if len(buf) >= width and (s + width <= len(buf)).all():
        # The buffer seen as one `width`-byte item at every byte: one item copy per row, about
        # twice as fast as indexing sliding_window_view's rows, and no index matrix.
        items = np.ndarray((len(buf) - width + 1,), dtype=np.dtype(f"V{width}"), buffer=buf, strides=(1,))
        return items[s].view(np.uint8).reshape(len(s), width)
    return buf[s[:, None] + np.arange(width)]


def parse_decimal(buf: np.ndarray, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Parse [-]digits[.digits] fields buf[s:e] -> (float64 values, ok mask).

    Fields are grouped by width so each group is one (n, width) gather; a
    field with anything else in it (exponent, spaces, NaN) comes back not ok
    and is retried by the caller with float().
    """
    n = len(s)
    out = np.zeros(n, dtype=np.float64)
    ok = np.zeros(n, dtype=bool)
    if n == 0:
        return out, ok
    w = e - s
    wmin, wmax = int(w.min()), int(w.max())
    if wmin == wmax:
        groups = [(wmin, None)]
    else:
        counts = np.bincount(w - wmin)
        groups = [(wmin + int(k), np.flatnonzero(w == wmin + k)) for k in np.flatnonzero(counts)]
    for width, sel in groups:
        if width == 0 or width > 18:
            continue
        m = _gather(buf, s if sel is None else s[sel], width)
        val, good = _uniform(m)
        if val is None:
            val, good = _general(m)
        elif not good.all():  # mixed layouts in one width (e.g. "200" and "0.1")
            bad = np.flatnonzero(~good)
            val[bad], good[bad] = _general(m[bad])
        if sel is None:
            out, ok = val, good
        else:
            out[sel] = val
            ok[sel] = good
    return out, ok


def _uniform(m: np.ndarray):
    """Fast path: every field has its dot (or none) in the same column and no sign."""
    width = m.shape[1]
    dots = m[0] == 46
    if dots.sum() > 1 or m[0, 0] == 45:
        return None, None
    k = int(dots.argmax()) if dots.any() else width
    if k < width and not (m[:, k] == 46).all():
        return None, None
    cols = [j for j in range(width) if j != k]
    if len(cols) > 15 or not cols:  # beyond 15 digits the float mantissa is no longer exact
        return None, None
    # One row per digit position, so each step below is one pass over contiguous memory.
    d = np.ascontiguousarray(m.T[cols]) - np.uint8(48)  # wraps for non-digits: <= 9 tests digit-ness
    if d.max() <= 9:  # one pass over the block instead of a per-row reduction
        good = np.ones(d.shape[1], dtype=bool)
    else:
        good = (d <= 9).all(axis=0)
    # At most 15 digits: the integer is exact in int64 and in float64, so the value is the
    # one a float parse of the digits gives, divided by the same power of ten.
    acc = d[0].astype(np.int64)
    for row in d[1:]:
        acc *= 10
        acc += row
    scale = 10.0 ** (width - k - 1) if k < width else 1.0
    val = acc / scale
    return val, good


def _general(m: np.ndarray):
    width = m.shape[1]
    isdig = (m >= 48) & (m <= 57)
    isdot = m == 46
    neg = m[:, 0] == 45
    ndots = isdot.sum(axis=1)
    ndig = isdig.sum(axis=1)
    good = (ndig + ndots + neg == width) & (ndots <= 1) & (ndig > 0)
    place = np.cumsum(isdig[:, ::-1], axis=1)[:, ::-1] - 1
    digits = np.where(isdig, m.astype(np.int64) - 48, 0)
    mant = (digits * _POW10[np.clip(place, 0, 18)]).sum(axis=1)
    hasdot = ndots > 0
    dotpos = np.where(hasdot, isdot.argmax(axis=1), width)
    nfrac = np.where(hasdot, width - dotpos - 1, 0)
    val = mant / (10.0 ** nfrac)
    return np.where(neg, -val, val), good


class _LineError(Exception):
    """A bad line inside a chunk, numbered from the chunk's first line (0)."""

    def __init__(self, line: int, msg: str):
        super().__init__(msg)
        self.line = line
        self.msg = msg


class _Growing:
    """A column filled chunk by chunk as each chunk is collected, while the next ones parse.

    Joining the chunks' pieces at the end was a pass over every column with nothing else running
    (0.6 s of 10 million rows). Sized from the file's size and the first chunk's bytes per row, the
    column is filled in place; np.empty's pages cost nothing until written, so a size guessed too
    large costs no memory, and one too small doubles."""

    def __init__(self, rows: int):
        self.rows = rows
        self.a: np.ndarray | None = None
        self.n = 0

    def add(self, v: np.ndarray) -> None:
        if self.a is None:
            self.a = np.empty(max(self.rows, len(v)), dtype=v.dtype)
        elif self.n + len(v) > len(self.a):
            grown = np.empty(max(2 * len(self.a), self.n + len(v)), dtype=self.a.dtype)
            grown[:self.n] = self.a[:self.n]
            self.a = grown
        self.a[self.n:self.n + len(v)] = v
        self.n += len(v)

    def array(self) -> np.ndarray | None:
        return None if self.a is None else self.a[:self.n]


class _Reader:
    def __init__(self, path: str, phases: bool = False):
        self.path = path
        self.want_phases = phases
        self.parts: dict[str, _Growing] = {}
        self.segments: _Growing | None = None
        self.size = 0  # the file's bytes, for _Growing's first size
        self.error_messages: list[str] = []
        self.warnings: list[str] = []
        self.header_count = 0
        self.first_start: str | None = None
        # credhub-perf files: the steps met so far (sorted) with their first lines, and the last one
        self._seen = np.empty(0, dtype=np.complex128)
        self._seen_line = np.empty(0, dtype=np.int64)
        self._last_step: complex | None = None

    def fail(self, line: int, msg: str) -> "_LineError":
        return _LineError(line, msg)

    def read(self) -> Table:
        try:
            f = open(self.path, "rb")
        except FileNotFoundError:
            raise InputError(f"{self.path}: no such file; check the path") from None
        except IsADirectoryError:
            raise InputError(f"{self.path}: is a directory without meta.json or results*.csv") from None
        except OSError as exc:
            raise InputError(f"{self.path}: cannot read: {exc.strerror}") from None
        with f:
            self.size = os.fstat(f.fileno()).st_size
            first = f.readline(MAX_LINE + 1)
            if len(first) > MAX_LINE:
                raise InputError(f"{self.path}:1: first line longer than {MAX_LINE} bytes: not a results CSV")
            if not first.strip():
                raise InputError(f"{self.path}:1: file is empty; a results CSV starts with a header line")
            try:
                header = first.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                raise InputError(f"{self.path}:1: not a text CSV file (header is not UTF-8)") from None
            self.format, self.cols = detect_format(header, self.path)
            # later header lines repeat it byte for byte (the Go reader's rule: " start-time,..." is no header)
            self.header = header.removeprefix("\ufeff").encode()
            self.ncols = len(self.cols)
            self.has_request = self.cols[-1] == "request"
            tail = self.cols[:-1] if self.has_request else self.cols
            self.has_error_col = bool(tail) and tail[-1] == "error"
            if "error" in self.cols and not self.has_error_col:
                raise InputError(f"{self.path}:1: the error column must be the last column (or followed by request)")
            # Two chunks are parsed at once: numpy releases the GIL in its array loops, so on a
            # shared 2-core machine the parse gets both cores.  Results are collected in file
            # order, so the first bad line in the file is the one reported.
            pending: deque = deque()
            self._base = 2  # physical line number of the next chunk's first line
            with ThreadPoolExecutor(max_workers=2) as pool:
                for body, end, final in self._bodies(f):
                    if body is None:  # a line longer than MAX_LINE starts after the pending chunks
                        while pending:
                            self._take(pending.popleft())
                        raise InputError(f"{self.path}:{self._base}: line longer than {MAX_LINE} bytes: "
                                         "not a results CSV (binary data?)")
                    if final:
                        while pending:
                            self._take(pending.popleft())
                        self._final_piece(bytes(body[:end]))
                        continue
                    pending.append(pool.submit(self._chunk, body, end))
                    while len(pending) > 2:
                        self._take(pending.popleft())
                while pending:
                    self._take(pending.popleft())
        return self._table()

    def _take(self, fut) -> None:
        try:
            res = fut.result()
        except _LineError as exc:
            raise InputError(f"{self.path}:{self._base + exc.line}: {exc.msg}") from None
        self._collect(res)
        self._base += res["nlines"]

    def _bodies(self, f):
        """(buffer, end, False) with buffer[:end] ending at a line end ...; then the unterminated tail.

        Each chunk is read straight into a fresh bytearray (worker threads still hold the
        previous ones), so no chunk is copied on its way to numpy.  (None, 0, False) when the
        bytes after the last line end grow beyond MAX_LINE: memory stays bounded on any input.
        """
        carry = b""
        while True:
            buf = bytearray(CHUNK + len(carry))
            buf[: len(carry)] = carry
            n = f.readinto(memoryview(buf)[len(carry):])
            end = len(carry) + n
            if n == 0:
                if carry:
                    yield buf, end, True
                return
            cut = buf.rfind(b"\n", 0, end)
            if cut < 0:  # no complete line yet (a line longer than a chunk): read more
                carry = bytes(buf[:end])
            else:
                carry = bytes(buf[cut + 1:end])
            if cut >= 0:
                yield buf, cut + 1, False
            if len(carry) > MAX_LINE:
                yield None, 0, False
                return

    def _collect(self, res: dict) -> None:
        if "steps" in res:
            self._check_steps(*res["steps"])
        if "segs" in res:
            if self.segments is None:
                self.segments = _Growing(self._rows_hint(res))
            self.segments.add(res["segs"] + self.header_count)
        self.header_count += res.get("nheaders", 0)
        for name, vals in res.get("parts", {}).items():
            if name not in self.parts:
                self.parts[name] = _Growing(self._rows_hint(res))
            self.parts[name].add(vals)
        if self.first_start is None and res.get("first_start"):
            self.first_start = res["first_start"]
        room = ERROR_SAMPLE - len(self.error_messages)
        if room > 0:
            self.error_messages += res.get("msgs", [])[:room]

    def _check_steps(self, keys: np.ndarray, lines: np.ndarray) -> None:
        """Refuse a step whose rows come back after another step's (the Go reader's rule): a credhub-perf
        file holds each step's rows together, so a step seen before is a sorted or concatenated file,
        whose step figures would be silently wrong. keys: the chunk's runs of one (concurrency, rate),
        as concurrency + 1j * rate; lines: each run's first line in the chunk. Chunks come in file order."""
        if len(keys) and self._last_step is not None and keys[0] == self._last_step:
            keys, lines = keys[1:], lines[1:]  # the previous chunk's last step goes on
        if len(keys) == 0:
            return
        # The first run whose step was seen before, in an earlier chunk or earlier in this one.
        uniq, first = np.unique(keys, return_index=True)
        again = np.ones(len(keys), dtype=bool)
        again[first] = False
        seen_at = np.searchsorted(self._seen, keys)
        seen_at = np.minimum(seen_at, len(self._seen) - 1) if len(self._seen) else seen_at
        if len(self._seen):
            again |= self._seen[seen_at] == keys
        bad = np.flatnonzero(again)
        if len(bad):
            i = int(bad[0])
            k = keys[i]
            if len(self._seen) and self._seen[seen_at[i]] == k:
                at = int(self._seen_line[seen_at[i]])
            else:
                at = self._base + int(lines[int(np.flatnonzero(keys == k)[0])])
            rate = np.format_float_positional(k.imag, trim="-")
            raise InputError(
                f"{self.path}:{self._base + int(lines[i])}: rows of the step at concurrency {int(k.real)}, rate "
                f"{rate} appear again after another step (first at line {at}): the rows are out of order (a "
                "sorted or concatenated file?); use the file as credhub-perf wrote it, each step's rows "
                "together in run order")
        order = np.argsort(np.concatenate((self._seen, uniq)), kind="stable")
        self._seen = np.concatenate((self._seen, uniq))[order]
        self._seen_line = np.concatenate((self._seen_line, self._base + lines[first]))[order]
        self._last_step = keys[-1]

    def _final_piece(self, chunk: bytes) -> None:
        """The bytes after the last line end: a line cut short by a killed writer.

        Skipped whatever it holds: a row cut inside its error message still parses."""
        if chunk.strip():
            self.warnings.append(
                f"{self.path}:{self._base}: last line has no line end (run killed mid-write?); skipped it")

    def _header_rows(self, isdata: np.ndarray, body, starts: np.ndarray, ends: np.ndarray, found: list):
        """The rows that are no data (their first byte is no digit, sign or dot): a repeated header
        (hey-fork files repeat theirs once per step) or damage, which goes into `found`.

        Returns (None, segs) when every row is data, else (which rows to keep, None): the rows before
        the first damaged one, whose header rows the caller counts into segments. Row i is
        body[starts[i]:ends[i]]."""
        if isdata.all():
            return None, np.zeros(len(isdata), dtype=np.int32)
        keep = np.ones(len(isdata), dtype=bool)
        for i in np.flatnonzero(~isdata):
            text = bytes(body[starts[i]:ends[i]])
            if text == self.header and self.format != "credhub-perf":
                continue  # hey-fork files repeat the header once per step
            if text == self.header:
                # credhub-perf writes its header once: a second one means two files were joined,
                # and their steps would be read as one run's (the Go reader's rule)
                found.append((int(starts[i]), "the header repeats (two results files concatenated?): "
                              "summarise each file on its own, or split it at that line"))
            elif text.strip() == self.header.strip():
                shown = text[:60].decode("utf-8", "replace")
                found.append((int(starts[i]), f"the header with spaces around it ({shown!r}): a header "
                              "line repeats the first byte for byte; fix or delete the line"))
            elif text.decode("utf-8", "replace").strip() in FORMATS:
                shown = text[:60].decode("utf-8", "replace")
                found.append((int(starts[i]), f"header of another CSV format ({shown!r}) inside a "
                              f"'{self.format}' file; split the file or convert it to one format"))
            else:
                shown = text[:60].decode("utf-8", "replace")
                found.append((int(starts[i]), f"unparseable row {shown!r}: expected a number in the first "
                              f"column or a repeated header; fix or delete the line"))
            # Rows after it do not matter: only one that comes earlier can be reported instead.
            keep = starts < starts[i]
            break
        return keep, None

    def _chunk(self, body, end: int) -> dict:
        """Parse the whole lines in body[:end]; returns the columns.

        No shared state: this runs in a worker thread.  Errors carry line numbers relative
        to the chunk (_LineError); the caller adds the chunk's first line number.
        """
        res: dict = {"parts": {}, "nbytes": end}
        buf = np.frombuffer(body, dtype=np.uint8, count=end)

        def lineno(pos: int) -> int:
            return body.count(b"\n", 0, pos)

        starts, ends, line = self._lines(buf, res, lineno)
        if len(starts) == 0:
            return res
        first = buf[starts]
        isdata = ((first >= 48) & (first <= 57)) | (first == 45) | (first == 46)
        # Bad rows found below, as (byte position, message): the first in the file is reported.
        found: list[tuple[int, str]] = []
        keep, segs = self._header_rows(isdata, body, starts, ends, found)
        if keep is not None:
            starts, ends, isdata, line = starts[keep], ends[keep], isdata[keep], line[keep]
            segs = np.cumsum(~isdata).astype(np.int32)
            starts, ends, segs, line = starts[isdata], ends[isdata], segs[isdata], line[isdata]
        res["segs"] = segs
        res["nheaders"] = int((~isdata).sum())
        if len(starts) == 0:
            if found:
                raise self.fail(lineno(found[0][0]), found[0][1])
            return res
        field_bounds = self._fields(buf, body, starts, ends, bool(isdata.all()), lineno, found)
        self._columns(res, buf, body, field_bounds, starts, line, lineno, found)
        return res

    def _lines(self, buf: np.ndarray, res: dict, lineno):
        """The chunk's non-blank lines: (starts, ends before the line end, each one's line in the chunk).

        One row per line: the writers turn line breaks in error messages into spaces, so a quote
        never spans lines and a stray one damages only its own line."""
        nl = np.flatnonzero(buf == 10)
        res["nlines"] = len(nl)
        starts = np.empty(len(nl), dtype=np.int64)
        if len(nl):
            starts[0] = 0
            starts[1:] = nl[:-1] + 1
        ends = nl.copy()
        cr = (ends > starts) & (buf[np.maximum(ends - 1, 0)] == 13)
        ends[cr] -= 1
        nonblank = ends > starts
        starts, ends = starts[nonblank], ends[nonblank]
        long = np.flatnonzero(ends - starts > MAX_LINE)
        if len(long):
            raise self.fail(lineno(starts[long[0]]), f"line longer than {MAX_LINE} bytes: not a results CSV "
                            "(binary data?)")
        return starts, ends, np.flatnonzero(nonblank)

    def _fields(self, buf: np.ndarray, body, starts: np.ndarray, ends: np.ndarray, all_data: bool, lineno,
                found: list):
        """Each data row's fields, checked for their number and their quotes (the first bad row in the
        file is raised, or an earlier one in `found`): returns field_bounds(j) -> (starts, ends) of
        column j in every row."""
        q = np.flatnonzero(buf == 34) if body.find(b'"', 0, len(buf)) >= 0 else None
        ncomma = self.ncols - 1
        cpos = np.flatnonzero(buf == 44)
        commas = None
        if ncomma and all_data:
            plain = _rows_without(starts, ends, q)
            if plain is not None:
                commas = self._plain_commas(buf, body, starts, ends, cpos, q, plain, lineno, found)
        if commas is None:
            commas = self._any_commas(buf, body, starts, ends, cpos, q, lineno, found)

        def field_bounds(j: int) -> tuple[np.ndarray, np.ndarray]:
            fs = starts if j == 0 else commas(j - 1) + 1
            fe = ends if j == ncomma else commas(j)
            return fs, fe

        return field_bounds

    def _plain_commas(self, buf, body, starts, ends, cpos, q, plain, lineno, found):
        """commas(j): comma j of every row, or None when the rows without a quote do not each hold the
        header's number of commas (_any_commas then finds the bad row).

        The usual case, checked without a search: as many commas as rows x (columns - 1), and each
        row's first and last comma inside that row, so every row has exactly its share; then comma j
        of every row is one column of a (rows, commas) matrix. Rows with a quote (an error message
        quoted, perhaps with commas) are left out of that count and read apart by _any_commas."""
        ncomma = self.ncols - 1
        every = plain.all()
        cp = cpos if every else cpos[~_inside(cpos, starts[~plain], ends[~plain])]
        sp, ep = (starts, ends) if every else (starts[plain], ends[plain])
        n = len(sp)
        if len(cp) != n * ncomma or (n and not ((cp[::ncomma] > sp).all() and (cp[ncomma - 1::ncomma] < ep).all())):
            return None
        # Comma j of every row as one contiguous array: the fields are read a column at a
        # time, and a column of a (rows, commas) matrix costs a cache miss per row.
        by_column = cp.reshape(n, ncomma).T.copy()
        if every:
            return lambda j: by_column[j]
        theirs = self._any_commas(buf, body, starts[~plain], ends[~plain], cpos, q, lineno, found)

        def both(j: int) -> np.ndarray:
            out = np.empty(len(starts), dtype=np.int64)
            out[plain] = by_column[j]
            out[~plain] = theirs(j)
            return out
        return _last_two(both)

    def _any_commas(self, buf, body, starts, ends, cpos, q, lineno, found):
        """commas(j): comma j of each row (the last one before the request column for j = columns - 2
        when there is one), after checking each row's number of fields and its quotes."""
        ncomma = self.ncols - 1
        nrows = len(starts)
        quoted = q is not None
        cs = np.searchsorted(cpos, starts)
        cnt = np.searchsorted(cpos, ends) - cs
        problems = []  # (row mask, message) pairs; the first bad row in the file is reported

        def shown(i: int) -> str:
            return repr(body[starts[i]:ends[i]][:60].decode("utf-8", "replace"))

        # The request column (never quoted, no commas) follows the error column, whose quotes
        # may hold commas: it is cut off at each row's last comma, and the rest is read as
        # before with the error column last.
        inner, nc, extra = ends, ncomma, 0
        if self.has_request:
            # cs + cnt - 1 indexes each row's last comma; a row without one has cnt 0.
            hascomma = cnt > 0
            problems.append((~hascomma, lambda i: f"1 fields where the header has {self.ncols} ({shown(i)})"))
            inner = np.where(hascomma, cpos[np.maximum(cs + cnt - 1, 0)] if len(cpos) else ends, ends)
            # The commas before `inner`: a row's commas but its last (none when it has none).
            cnt, nc, extra = np.maximum(cnt - 1, 0), ncomma - 1, 1
        has_q = np.zeros(nrows, dtype=bool)
        if quoted:
            qi = np.searchsorted(q, starts)
            has_q = (qi < len(q)) & (q[np.minimum(qi, len(q) - 1)] < inner)
        problems.append((~has_q & (cnt != nc), lambda i: f"{int(cnt[i]) + 1 + extra} fields where the header "
                         f"has {self.ncols} ({shown(i)})"))
        if has_q.any():
            # Quotes may only enclose the last (error) field, which can then hold commas.
            if not self.has_error_col:
                problems.append((has_q, lambda i: f"a quote (\") in a file whose columns are never quoted "
                                 f"({shown(i)})"))
            else:
                problems.append((has_q & (cnt < nc), lambda i: f"{int(cnt[i]) + 1 + extra} fields where the "
                                 f"header has {self.ncols} ({shown(i)})"))
                lastc = cpos[np.clip(cs + nc - 1, 0, max(len(cpos) - 1, 0))] if len(cpos) else starts - 1
                firstq = q[np.minimum(qi, len(q) - 1)]
                outside = has_q & (cnt >= nc) & (firstq <= lastc)
                problems.append((outside, lambda i: f"a quote (\") outside the error column ({shown(i)})"))
                problems.append((has_q & ~outside & (cnt >= nc) & ~self._quoted_ok(buf, q, lastc + 1, inner),
                                 lambda i: "the error column is not one quoted field with its inner quotes "
                                           f"doubled ({shown(i)})"))
        self._report_first(problems, starts, lineno, found)
        # A field's end is the next field's start, and the columns are mostly read left to right:
        # the last two gathered commas are kept, so most are gathered once, not twice.
        return _last_two(lambda j: inner if j == nc else cpos[cs + j])

    def _columns(self, res: dict, buf: np.ndarray, body, field, pos: np.ndarray, line: np.ndarray, lineno,
                 found: list) -> None:
        """Check and convert every column of a chunk's data rows into res["parts"] (and its error
        messages, first start-time and step runs); raises the first bad row's _LineError.

        field(j) -> (fs, fe): column j's fields are buf[fs:fe] (numpy uint8) and body[fs:fe] (bytes,
        for messages). pos orders the rows as the file does (found holds (pos, message)) and
        lineno(pos) is a row's line in the chunk; line is each row's line, for the step runs."""
        step_key = {}
        for name in WANTED:
            if name not in self.cols:
                continue
            vals = self._number(name, buf, body, field(self.cols.index(name)), pos, found)
            if name in ("concurrency", "rate"):
                step_key[name] = vals  # before rate is narrowed to float32: steps compare as float64
            if name in _INTEGER:
                vals = vals.astype(np.int16 if name == "status-code" else np.int32)
            elif name == "rate":
                vals = vals.astype(np.float32)  # req/s targets: float32 holds them exactly enough
            elif name == "sched-lag":
                vals = vals.astype(np.float32)
            res["parts"][name] = vals

        used = 0.0
        for name in PHASES:
            # Not used by the plots, but a row with a damaged column is a damaged row: the Go
            # reader refuses it too, so both tools agree on what a file holds.
            if name in self.cols:
                vals = self._number(name, buf, body, field(self.cols.index(name)), pos, found)
                if self.want_phases and name != "DNS":  # DNS is part of DNS+dialup
                    used = used + vals.astype(np.float64)
        if self.want_phases and "DNS+dialup" in self.cols:
            res["parts"]["phases"] = np.asarray(used, dtype=np.float64)

        if "start-time" in self.cols:
            fs, fe = field(self.cols.index("start-time"))
            res["first_start"] = body[fs[0]:fe[0]].decode("ascii", "replace")
            try:  # every row's, so a damaged one is found; the values only where there is no offset
                if "offset" not in self.cols:
                    res["parts"]["start"] = parse_rfc3339(buf, fs, fe)
                else:
                    check_rfc3339(buf, fs, fe)
            except ValueError as exc:
                i = int(str(exc))
                text = body[fs[i]:fe[i]][:40].decode("utf-8", "replace")
                found.append((int(pos[i]), f"unparseable row: start-time {text!r} is not RFC 3339 "
                              f"(like 2017-06-01T12:00:00.123456789Z); fix or delete the line"))
        if self.has_request:
            res["parts"]["request"] = self._request(buf, body, field(self.ncols - 1), pos, found)
        if found:
            at, msg = min(found)
            raise self.fail(lineno(at), msg)
        if self.format == "credhub-perf":
            res["steps"] = step_runs(step_key["concurrency"], step_key["rate"], line)
        if self.has_error_col:
            fs, fe = field(self.cols.index("error"))
            nonempty = fe > fs
            res["parts"]["error"] = nonempty
            msgs = res["msgs"] = []
            if nonempty.any():
                for i in np.flatnonzero(nonempty)[:ERROR_SAMPLE]:
                    raw = body[fs[i]:fe[i]].decode("utf-8", "replace")
                    if raw.startswith('"'):
                        raw = next(csv.reader(io.StringIO(raw)), [""])[0]
                    msgs.append(raw)

    @staticmethod
    def _request(buf, body, bounds, pos, found: list) -> np.ndarray:
        """The request column as int8 indices into REQUEST_TYPES (-1: empty); the first field that
        is none of them goes into `found`."""
        fs, fe = bounds
        width = fe - fs
        code = np.full(len(fs), -2, dtype=np.int8)
        code[width == 0] = -1
        for n, name in enumerate(REQUEST_TYPES):
            # Only the fields as long as the name are compared, so no row reads past its own.
            sel = np.flatnonzero(width == len(name))
            if len(sel):
                # As byte strings: one comparison a row.  A NUL byte cannot make a field equal:
                # 'S' drops trailing NULs, which leaves it shorter than the name.
                text = _gather(buf, fs[sel], len(name)).view(f"S{len(name)}").ravel()
                code[sel[text == name.encode()]] = n
        bad = np.flatnonzero(code == -2)
        if len(bad):
            i = int(bad[0])
            raw = bytes(body[fs[i]:fe[i]])
            text = raw[:40].decode("utf-8", "replace") + ("..." if len(raw) > 40 else "")
            what = ("a quote (\") in the request column, which is never quoted" if b'"' in raw else
                    f"request {text!r} is not a request type (want {', '.join(REQUEST_TYPES)}, or empty)")
            found.append((int(pos[i]), f"unparseable row: {what}; fix or delete the line"))
        return code

    def _report_first(self, problems, starts, lineno, found) -> None:
        """Raise for the first row (in file order) that a (mask, message) problem or `found` names."""
        first = min(found) if found else None
        for mask, msg in problems:
            bad = np.flatnonzero(mask)
            if len(bad) and (first is None or starts[bad[0]] < first[0]):
                i = int(bad[0])
                first = (int(starts[i]), f"unparseable row: {msg(i)}; fix or delete the line")
        if first is not None:
            raise self.fail(lineno(first[0]), first[1])

    @staticmethod
    def _quoted_ok(buf: np.ndarray, q: np.ndarray, fs: np.ndarray, fe: np.ndarray) -> np.ndarray:
        """Whether each field buf[fs:fe] is one CSV-quoted field: "...", inner quotes doubled."""
        qa, qb = np.searchsorted(q, fs), np.searchsorted(q, fe)
        nq = qb - qa
        last = np.clip(fe - 1, 0, len(buf) - 1)
        ok = (fe - fs >= 2) & (nq >= 2) & (nq % 2 == 0) & (buf[np.minimum(fs, len(buf) - 1)] == 34) & (buf[last] == 34)
        pairs = np.where(ok, (nq - 2) // 2, 0)
        if pairs.any():
            row = np.repeat(np.arange(len(fs)), pairs)
            k = np.arange(int(pairs.sum())) - np.repeat(np.cumsum(pairs) - pairs, pairs)
            first = qa[row] + 1 + 2 * k          # the inner quotes, two by two
            unpaired = q[first + 1] != q[first] + 1
            ok[row[unpaired]] = False
        return ok

    def _number(self, name: str, buf, body, bounds, pos, found: list) -> np.ndarray:
        """Column `name` as float64; its first value that is not a finite decimal within the
        documented range goes into `found` as (position, message)."""
        fs, fe = bounds
        vals, ok = parse_decimal(buf, fs, fe)
        lo, hi = _RANGES[name]

        def bad(i: int, what: str) -> np.ndarray:
            text = body[fs[i]:fe[i]][:40].decode("utf-8", "replace")
            found.append((int(pos[i]), f"unparseable row: {name} {what(text)}; fix or delete the line"))
            return np.zeros_like(vals)  # never used: the chunk is refused

        if name in _INTEGER:
            # Canonical digits only: no sign, decimals, exponent or leading zero (the Go reader's
            # rule).  A parsed field is canonical exactly when its width is its value's digit count.
            ndig = np.ones(len(vals), dtype=np.int64)
            for k in range(1, 10):
                ndig += vals >= 10.0 ** k
            ok &= (fe - fs == ndig) & (buf[np.minimum(fs, len(buf) - 1)] != 45)
            if not ok.all():
                return bad(int(np.flatnonzero(~ok)[0]), lambda t: f"{t!r} is not an integer in [{lo}, {hi}]")
        first_bad = None
        if name not in _INTEGER and not ok.all():
            for i in np.flatnonzero(~ok):
                raw = bytes(body[fs[i]:fe[i]])
                v = float(raw) if _DECIMAL.fullmatch(raw) else None
                if v is None or not np.isfinite(v):
                    first_bad = (int(i), "is not a decimal number" if v is None else "is not a finite number")
                    vals[i] = lo
                    break
                vals[i] = v
        out = np.flatnonzero((vals < lo) | (vals > hi))
        if len(out) and (first_bad is None or out[0] < first_bad[0]):
            return bad(int(out[0]), lambda t: f"{t} is out of range [{lo:g}, {hi:g}]")
        if first_bad is not None:
            return bad(first_bad[0], lambda t: f"{t!r} {first_bad[1]}")
        return vals

    def _rows_hint(self, res: dict) -> int:
        """How many rows the file holds, guessed from its size and this chunk's bytes per data row (at
        least a row per field's comma: never more than size / columns)."""
        rows = len(res["segs"])
        if not rows or not res.get("nbytes"):
            return 1024
        return int(min(self.size * rows / res["nbytes"] * 1.02, self.size / self.ncols)) + 1024

    def _table(self) -> Table:
        def cat(name):
            col = self.parts.pop(name, None)
            return None if col is None else col.array()

        latency = cat("response-time")
        if latency is None or len(latency) == 0:
            raise InputError(f"{self.path}: no data rows after the header; the run recorded nothing")
        segment = self.segments.array()
        self.segments = None
        offset = cat("offset")
        start = cat("start")
        start0 = None
        if self.first_start is not None:
            try:
                s = self.first_start.encode()
                a = np.frombuffer(s, dtype=np.uint8)
                start0 = float(parse_rfc3339(a, np.array([0]), np.array([len(s)]))[0])
            except ValueError:
                start0 = None
            if start0 is not None and offset is not None:
                start0 -= float(offset[0])  # the run's start: first row's start minus its offset
        if offset is None and start is not None:
            base = float(start.min())
            offset = start - base
            start0 = base
            far = np.flatnonzero(offset > MAX_OFFSET_S)
            if len(far):
                raise InputError(f"{self.path}: start-times span more than {MAX_OFFSET_S:g} s (data row "
                                 f"{int(far[0]) + 1}); fix or delete the damaged rows")
        return Table(path=self.path, format=self.format, columns=self.cols, latency=latency, offset=offset,
                     start=start, start0=start0, status=cat("status-code"), concurrency=cat("concurrency"),
                     rate=cat("rate"), sched_lag=cat("sched-lag"), error=cat("error"), request=cat("request"), segment=segment,
                     error_messages=self.error_messages, warnings=self.warnings, phases=cat("phases"))



def _last_two(f):
    """f, remembering its last two answers (field_bounds asks for comma j - 1 and j, column after
    column): two arrays kept per chunk in flight, not a matrix's worth."""
    kept: dict[int, np.ndarray] = {}

    def g(j: int) -> np.ndarray:
        if j not in kept:
            if len(kept) == 2:
                del kept[next(iter(kept))]
            kept[j] = f(j)
        return kept[j]
    return g


def _rows_without(starts: np.ndarray, ends: np.ndarray, q: np.ndarray | None) -> np.ndarray | None:
    """Which rows hold no quote (q: the chunk's quote positions); None when a quote lies outside every
    row, which only _any_commas judges."""
    plain = np.ones(len(starts), dtype=bool)
    if q is None or not len(q):
        return plain
    row = np.searchsorted(starts, q, side="right") - 1
    if (row < 0).any() or (q >= ends[np.maximum(row, 0)]).any():
        return None
    plain[row] = False
    return plain


def _inside(pos: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Which of the sorted positions pos lie in one of the sorted, disjoint spans [starts, ends)."""
    delta = np.zeros(len(pos) + 1, dtype=np.int32)
    np.add.at(delta, np.searchsorted(pos, starts), 1)
    np.add.at(delta, np.searchsorted(pos, ends), -1)
    return np.cumsum(delta[:-1]) > 0

def step_runs(concurrency: np.ndarray, rate: np.ndarray, line: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The runs of rows with one (concurrency, rate), in order: each run's step as concurrency + 1j * rate
    (one sortable number; both are finite) and its first row's line."""
    if len(concurrency) == 0:
        return np.empty(0, dtype=np.complex128), np.empty(0, dtype=np.int64)
    change = np.flatnonzero((np.diff(concurrency) != 0) | (np.diff(rate) != 0)) + 1
    first = np.concatenate(([0], change))
    return concurrency[first] + 1j * rate[first], line[first]


def _days_from_civil(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    # Howard Hinnant's algorithm, vectorised; exact for the proleptic Gregorian calendar.
    y = y - (m <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    doy = (153 * (m + np.where(m > 2, -3, 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def check_rfc3339(buf: np.ndarray, s: np.ndarray, e: np.ndarray) -> None:
    """Raise ValueError(str(index)) for the first field buf[s:e] that is not an RFC 3339 timestamp, as
    parse_rfc3339 does, without computing any value.

    Writers stamp every row alike (2026-11-18T11:06:40.000000000Z: one width, a fraction, Z): such
    a column is checked on one (width, rows) matrix of its bytes, each position a contiguous row,
    in a third of parse_rfc3339's time. Any other column, or one this check doubts, is parse_rfc3339's
    to judge, so both accept the same fields and name the same first bad one."""
    n = len(s)
    w = e - s
    if n == 0:
        return
    width = int(w[0])
    if width >= 21 and (w == width).all():
        m = np.ascontiguousarray(_gather(buf, s, width).T)  # a row per position
        d = m[_DIGITS] - np.uint8(48)  # wraps for non-digits: <= 9 tests digit-ness
        two = d[0::2].astype(np.uint16) * 10 + d[1::2]  # yy yy mm dd hh mi ss as numbers
        ok = ((d.max(axis=0) <= 9) & (m[4] == 45) & (m[7] == 45) & (m[13] == 58) & (m[16] == 58)
              & ((m[10] == 84) | (m[10] == 116) | (m[10] == 32)) & (m[19] == 46)
              & ((m[width - 1] == 90) | (m[width - 1] == 122))
              & (two[2] >= 1) & (two[2] <= 12) & (two[3] >= 1) & (two[3] <= 31) & (two[4] <= 23)
              & (two[5] <= 59) & (two[6] <= 60))
        for j in range(20, width - 1):  # the fraction's digits
            ok &= (m[j] - np.uint8(48)) <= 9
        if ok.all():
            return
    parse_rfc3339(buf, s, e)


# The digits of YYYY-MM-DDTHH:MM:SS, by position.
_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]


def parse_rfc3339(buf: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """RFC 3339 timestamps (any fraction length, Z or +hh:mm) -> epoch seconds.

    Raises ValueError(str(index)) for the first field that is not one.
    """
    n = len(s)
    w = e - s
    if n == 0:
        return np.empty(0)
    short = np.flatnonzero(w < 20)
    if len(short):
        raise ValueError(str(int(short[0])))
    m = _gather(buf, s, 19)
    digpos = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
    mt = np.ascontiguousarray(m.T)  # one row per character position: contiguous passes below
    du = mt[digpos] - np.uint8(48)  # wraps for non-digits: <= 9 tests digit-ness
    t = mt[10]
    sep_ok = (mt[4] == 45) & (mt[7] == 45) & ((t == 84) | (t == 116) | (t == 32)) & (mt[13] == 58) & (mt[16] == 58)
    good = sep_ok & (du.max(axis=0) <= 9)
    d = du.astype(np.int64)
    year = d[0] * 1000 + d[1] * 100 + d[2] * 10 + d[3]
    mon = d[4] * 10 + d[5]
    day = d[6] * 10 + d[7]
    hh = d[8] * 10 + d[9]
    mi = d[10] * 10 + d[11]
    ss = d[12] * 10 + d[13]
    last = buf[e - 1]
    isz = (last == 90) | (last == 122)
    tzs = np.where(isz, e - 1, e - 6)
    tzsign = buf[np.clip(tzs, 0, len(buf) - 1)]
    tz_ok = isz | (((tzsign == 43) | (tzsign == 45)) & (tzs >= s + 19))
    tzoff = np.zeros(n, dtype=np.int64)
    if not isz.all():
        idx = np.flatnonzero(~isz)
        t = buf[tzs[idx, None] + np.arange(6)].astype(np.int64)
        td = t[:, [1, 2, 4, 5]] - 48
        tz_ok[idx] &= ((td >= 0) & (td <= 9)).all(axis=1) & (t[:, 3] == 58)
        off = (td[:, 0] * 10 + td[:, 1]) * 3600 + (td[:, 2] * 10 + td[:, 3]) * 60
        tzoff[idx] = np.where(t[:, 0] == 45, -off, off)
    frac = np.zeros(n)
    hasfrac = tzs > s + 19
    if hasfrac.any():
        idx = np.flatnonzero(hasfrac)
        fv, fok = parse_decimal(buf, s[idx] + 19, tzs[idx])
        fok &= buf[s[idx] + 19] == 46
        frac[idx] = fv
        good[idx] &= fok
    good &= tz_ok & (mon >= 1) & (mon <= 12) & (day >= 1) & (day <= 31) & (hh <= 23) & (mi <= 59) & (ss <= 60)
    if not good.all():
        raise ValueError(str(int(np.flatnonzero(~good)[0])))
    secs = _days_from_civil(year, mon, day) * 86400 + hh * 3600 + mi * 60 + ss - tzoff
    return secs.astype(np.float64) + frac


def read_csv(path: str, phases: bool = False) -> Table:
    """Read one results CSV (any supported format) into columns; with phases, also Table.phases."""
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory; pass a run directory with meta.json and results*.csv")
    return _Reader(path, phases).read()
