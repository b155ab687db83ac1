"""Vectorised reader for credhub-perf and hey CSV files.

Rows are never handled one at a time in Python: the file is read in large
byte chunks, line ends and commas are located with numpy, and each numeric
column is parsed by gathering its characters into a (rows, width) matrix and
combining the digits arithmetically.  That keeps 10 million rows within
seconds and a few hundred MB, where csv.reader or pandas take minutes.

Only the columns the analysis needs are parsed (response-time, status-code,
offset, concurrency, rate, sched-lag, whether error is empty; start-time only
when there is no offset).  The phase columns are skipped.
"""
from __future__ import annotations

import csv
import io
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


class InputError(Exception):
    """Bad input: the message is one line naming the file (and line) and the fix."""


OURS = ("start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,"
        "status-code,offset,concurrency,rate,sched-lag,error")
FORK7 = "start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read"
FORK2 = "start-time,response-time"
UPSTREAM = "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset"

FORMATS = {
    OURS: "credhub-perf",
    FORK7: "hey-fork-7",
    FORK2: "hey-fork-2",
    UPSTREAM: "hey",
}
KNOWN_COLUMNS = set(OURS.split(","))
WANTED = ("response-time", "status-code", "offset", "concurrency", "rate", "sched-lag")

CHUNK = 16 << 20
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
    error_messages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.latency)


def detect_format(header: str, where: str) -> tuple[str, list[str]]:
    header = header.strip().lstrip("\ufeff")
    if header in FORMATS:
        return FORMATS[header], header.split(",")
    cols = [c.strip() for c in header.split(",")]
    known = all(c in KNOWN_COLUMNS for c in cols) and len(set(cols)) == len(cols)
    if known and "response-time" in cols and ("offset" in cols or "start-time" in cols):
        return "custom-columns", cols
    shown = header if len(header) < 60 else header[:57] + "..."
    raise InputError(
        f"{where}:1: no recognised CSV header (got {shown!r}); expected the credhub-perf header "
        f"'{OURS[:40]}...', hey's '{UPSTREAM[:30]}...' or the hey fork's '{FORK2}[,...]'")


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
        ss = s if sel is None else s[sel]
        if len(buf) >= width and (ss + width <= len(buf)).all():
            m = sliding_window_view(buf, width)[ss]  # copies n x width bytes, no index matrix
        else:
            m = buf[ss[:, None] + np.arange(width)]
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
    d = m[:, cols] - np.uint8(48)  # wraps around for non-digits, so <= 9 tests digit-ness
    if d.max() <= 9:  # one pass over the block instead of a per-row reduction
        good = np.ones(len(d), dtype=bool)
    else:
        good = (d <= 9).all(axis=1)
    if len(cols) > 15 or not cols:  # beyond 15 digits the float mantissa is no longer exact
        return None, None
    scale = 10.0 ** (width - k - 1) if k < width else 1.0
    ints = 10.0 ** np.arange(len(cols) - 1, -1, -1)
    val = (d.astype(np.float64) @ ints) / scale
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


class _Reader:
    def __init__(self, path: str):
        self.path = path
        self.parts: dict[str, list[np.ndarray]] = {}
        self.segments: list[np.ndarray] = []
        self.error_messages: list[str] = []
        self.warnings: list[str] = []
        self.header_count = 0
        self.first_start: str | None = None

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
            first = f.readline()
            if not first.strip():
                raise InputError(f"{self.path}:1: file is empty; a results CSV starts with a header line")
            try:
                header = first.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                raise InputError(f"{self.path}:1: not a text CSV file (header is not UTF-8)") from None
            self.format, self.cols = detect_format(header, self.path)
            self.header = header.strip().lstrip("\ufeff").encode()
            self.ncols = len(self.cols)
            self.has_error_col = self.cols[-1] == "error"
            if "error" in self.cols and not self.has_error_col:
                raise InputError(f"{self.path}:1: the error column must be the last column")
            # Two chunks are parsed at once: numpy releases the GIL in its array loops, so on a
            # shared 2-core machine the parse gets both cores.  Results are collected in file
            # order, so the first bad line in the file is the one reported.
            pending: deque = deque()
            self._base = 2  # physical line number of the next chunk's first line
            with ThreadPoolExecutor(max_workers=2) as pool:
                for body, end, final in self._bodies(f):
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
        previous ones), so no chunk is copied on its way to numpy.
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
            cut = self._cut(buf, end)
            if cut < 0:  # no complete line yet (a line longer than a chunk): read more
                carry = bytes(buf[:end])
                continue
            carry = bytes(buf[cut + 1:end])
            yield buf, cut + 1, False

    def _collect(self, res: dict) -> None:
        if "segs" in res:
            self.segments.append(res["segs"] + self.header_count)
        self.header_count += res.get("nheaders", 0)
        for name, vals in res.get("parts", {}).items():
            self.parts.setdefault(name, []).append(vals)
        if self.first_start is None and res.get("first_start"):
            self.first_start = res["first_start"]
        room = ERROR_SAMPLE - len(self.error_messages)
        if room > 0:
            self.error_messages += res.get("msgs", [])[:room]

    @staticmethod
    def _cut(chunk, end: int) -> int:
        """Index of the last line end before `end` that is not inside a quoted field."""
        cut = chunk.rfind(b"\n", 0, end)
        if cut < 0 or chunk.find(b'"', 0, end) < 0:
            return cut
        quotes = chunk.count(b'"', 0, cut)
        while quotes % 2:
            prev = chunk.rfind(b"\n", 0, cut)
            if prev < 0:
                return -1
            quotes -= chunk.count(b'"', prev, cut)
            cut = prev
        return cut

    def _final_piece(self, chunk: bytes) -> None:
        """The bytes after the last line end: a line cut short by a killed writer."""
        nl = chunk.rfind(b"\n")
        if nl >= 0:  # only possible when a quoted field never closed
            try:
                res = self._chunk(chunk, nl + 1)
            except _LineError as exc:
                raise InputError(f"{self.path}:{self._base + exc.line}: {exc.msg}") from None
            self._collect(res)
            self._base += res["nlines"]
            chunk = chunk[nl + 1:]
        if chunk.strip():
            self.warnings.append(
                f"{self.path}:{self._base}: last line has no line end (run killed mid-write?); skipped it")

    def _chunk(self, body, end: int) -> dict:
        """Parse the whole lines in body[:end]; returns the columns.

        No shared state: this runs in a worker thread.  Errors carry line numbers relative
        to the chunk (_LineError); the caller adds the chunk's first line number.
        """
        res: dict = {"parts": {}}
        buf = np.frombuffer(body, dtype=np.uint8, count=end)
        nl = np.flatnonzero(buf == 10)
        res["nlines"] = len(nl)
        quoted = body.find(b'"', 0, end) >= 0
        q = np.flatnonzero(buf == 34) if quoted else None
        if quoted:
            nl = nl[np.searchsorted(q, nl) % 2 == 0]
        starts = np.empty(len(nl), dtype=np.int64)
        starts[0] = 0
        starts[1:] = nl[:-1] + 1
        ends = nl.copy()
        cr = (ends > starts) & (buf[np.maximum(ends - 1, 0)] == 13)
        ends[cr] -= 1
        nonblank = ends > starts
        starts, ends = starts[nonblank], ends[nonblank]
        if len(starts) == 0:
            return res

        def lineno(pos: int) -> int:
            return body.count(b"\n", 0, pos)

        first = buf[starts]
        isdata = ((first >= 48) & (first <= 57)) | (first == 45) | (first == 46)
        segs = np.zeros(len(starts), dtype=np.int32)
        if not isdata.all():
            hdr = np.flatnonzero(~isdata)
            for i in hdr:
                text = body[starts[i]:ends[i]]
                if text.strip() == self.header:
                    continue
                shown = text[:60].decode("utf-8", "replace")
                if text.decode("utf-8", "replace").strip() in FORMATS:
                    raise self.fail(lineno(starts[i]), f"header of another CSV format ({shown!r}) inside a "
                                    f"'{self.format}' file; split the file or convert it to one format")
                raise self.fail(lineno(starts[i]), f"unparseable row {shown!r}: expected a number in the first "
                                f"column or a repeated header; fix or delete the line")
            segs = np.cumsum(~isdata).astype(np.int32)
            starts, ends, segs = starts[isdata], ends[isdata], segs[isdata]
        res["segs"] = segs
        res["nheaders"] = int((~isdata).sum())
        if len(starts) == 0:
            return res

        ncomma = self.ncols - 1
        cpos = np.flatnonzero(buf == 44)
        nrows = len(starts)
        if (not quoted and isdata.all() and ncomma and len(cpos) == nrows * ncomma
                and (cpos[::ncomma] > starts).all() and (cpos[ncomma - 1::ncomma] < ends).all()):
            # The usual case, checked without a search: as many commas as rows x (columns - 1),
            # and each row's first and last comma inside that row, so every row has exactly its share.
            cs = np.arange(0, nrows * ncomma, ncomma)
            cnt = None
        else:
            cs = np.searchsorted(cpos, starts)
            cnt = np.searchsorted(cpos, ends) - cs
        if cnt is None:
            bad = np.zeros(nrows, dtype=bool)
        elif quoted:
            # Quotes may only open the last (error) field, which can hold commas.
            qi = np.searchsorted(q, starts)
            has_q = (qi < len(q)) & (q[np.minimum(qi, len(q) - 1)] < ends)
            bad = np.where(has_q, cnt < ncomma, cnt != ncomma)
            if self.has_error_col and has_q.any():
                lastc = cpos[np.minimum(cs + ncomma - 1, len(cpos) - 1)]
                firstq = q[np.minimum(qi, len(q) - 1)]
                bad |= has_q & (firstq <= lastc)
            elif has_q.any():
                bad |= has_q
        else:
            bad = cnt != ncomma
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            text = body[starts[i]:ends[i]][:80].decode("utf-8", "replace")
            raise self.fail(lineno(starts[i]), f"unparseable row: {int(cnt[i]) + 1} fields where the header has "
                            f"{self.ncols} ({text!r}); fix or delete the line")
        if cnt is None:
            cm = cpos.reshape(nrows, ncomma)
        else:
            cm = cpos[cs[:, None] + np.arange(ncomma)] if ncomma else np.empty((nrows, 0), dtype=np.int64)

        def field_bounds(j: int) -> tuple[np.ndarray, np.ndarray]:
            fs = starts if j == 0 else cm[:, j - 1] + 1
            fe = ends if j == ncomma else cm[:, j]
            return fs, fe

        closed_only = False
        for name in WANTED:
            if name not in self.cols:
                continue
            if name == "sched-lag" and closed_only:
                # closed-loop steps have no schedule, the column is 0 by contract: skip the parse
                res["parts"][name] = np.zeros(nrows, dtype=np.float32)
                continue
            j = self.cols.index(name)
            fs, fe = field_bounds(j)
            vals, ok = parse_decimal(buf, fs, fe)
            if not ok.all():
                for i in np.flatnonzero(~ok):
                    text = body[fs[i]:fe[i]].decode("utf-8", "replace")
                    try:
                        vals[i] = float(text)
                    except ValueError:
                        raise self.fail(lineno(starts[i]), f"unparseable row: column '{name}' is {text!r}, "
                                        f"expected a number; fix or delete the line") from None
            if name in ("status-code", "concurrency"):
                if not np.all(vals == np.round(vals)):
                    i = int(np.flatnonzero(vals != np.round(vals))[0])
                    raise self.fail(lineno(starts[i]), f"unparseable row: column '{name}' must be an integer")
                vals = vals.astype(np.int16 if name == "status-code" else np.int32)
            elif name == "rate":
                closed_only = not vals.any()
                vals = vals.astype(np.float32)  # req/s targets: float32 holds them exactly enough
            elif name == "sched-lag":
                vals = vals.astype(np.float32)
            res["parts"][name] = vals

        if "start-time" in self.cols:
            j = self.cols.index("start-time")
            fs, fe = field_bounds(j)
            res["first_start"] = body[fs[0]:fe[0]].decode("ascii", "replace")
            if "offset" not in self.cols:
                try:
                    res["parts"]["start"] = parse_rfc3339(buf, fs, fe)
                except ValueError as exc:
                    i = int(str(exc))
                    text = body[fs[i]:fe[i]].decode("utf-8", "replace")
                    raise self.fail(lineno(starts[i]), f"unparseable row: start-time {text!r} is not RFC 3339 "
                                    f"(like 2017-06-01T12:00:00.123456789Z); fix or delete the line") from None
        if self.has_error_col:
            fs, fe = field_bounds(ncomma)
            nonempty = fe > fs
            res["parts"]["error"] = nonempty
            msgs = res["msgs"] = []
            if nonempty.any():
                for i in np.flatnonzero(nonempty)[:ERROR_SAMPLE]:
                    raw = body[fs[i]:fe[i]].decode("utf-8", "replace")
                    if raw.startswith('"'):
                        raw = next(csv.reader(io.StringIO(raw)), [""])[0]
                    msgs.append(raw)
        return res

    def _table(self) -> Table:
        def cat(name, dtype=None):
            parts = self.parts.pop(name, None)  # drop the pieces as soon as they are joined
            if parts is None:
                return None
            out = np.concatenate(parts) if parts else np.empty(0, dtype=dtype)
            parts.clear()
            return out

        latency = cat("response-time")
        if latency is None or len(latency) == 0:
            raise InputError(f"{self.path}: no data rows after the header; the run recorded nothing")
        segment = np.concatenate(self.segments)
        self.segments.clear()
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
        return Table(path=self.path, format=self.format, columns=self.cols, latency=latency, offset=offset,
                     start=start, start0=start0, status=cat("status-code"), concurrency=cat("concurrency"),
                     rate=cat("rate"), sched_lag=cat("sched-lag"), error=cat("error"), segment=segment,
                     error_messages=self.error_messages, warnings=self.warnings)


def _days_from_civil(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    # Howard Hinnant's algorithm, vectorised; exact for the proleptic Gregorian calendar.
    y = y - (m <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    doy = (153 * (m + np.where(m > 2, -3, 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


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
    m = buf[s[:, None] + np.arange(19)].astype(np.int64)
    digpos = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
    d = m[:, digpos] - 48
    sep_ok = (m[:, 4] == 45) & (m[:, 7] == 45) & np.isin(m[:, 10], (84, 116, 32)) & (m[:, 13] == 58) & (m[:, 16] == 58)
    good = sep_ok & ((d >= 0) & (d <= 9)).all(axis=1)
    year = d[:, 0] * 1000 + d[:, 1] * 100 + d[:, 2] * 10 + d[:, 3]
    mon = d[:, 4] * 10 + d[:, 5]
    day = d[:, 6] * 10 + d[:, 7]
    hh = d[:, 8] * 10 + d[:, 9]
    mi = d[:, 10] * 10 + d[:, 11]
    ss = d[:, 12] * 10 + d[:, 13]
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


def read_csv(path: str) -> Table:
    """Read one results CSV (any supported format) into columns."""
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory; pass a run directory with meta.json and results*.csv")
    return _Reader(path).read()
