package workload

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/url"
)

const (
	maxLine     = 1 << 20
	readBufSize = 64 << 10
	// groupCap bounds the resources remembered per request: past it a
	// request's lines are told apart by the key alone.
	groupCap = 4096
)

// Request is one CredHub request, however many lines it wrote.
type Request struct {
	At     int64 // ms since the epoch
	Type   Type
	Auth   authKind
	Status int
	Lines  int
	Names  []uint64 // distinct credentials it touched (hashes)
}

// lineReader yields lines of at most maxLine bytes without copying the
// usual ones.
type lineReader struct {
	br   *bufio.Reader
	long []byte
	n    int // lines read
}

// next returns the next line without its newline; tooLong reports a
// line over maxLine (skipped whole). err is io.EOF at the end.
func (lr *lineReader) next() (line []byte, tooLong bool, err error) {
	line, err = lr.br.ReadSlice('\n')
	switch {
	case err == nil, err == io.EOF && len(line) > 0:
	case errors.Is(err, bufio.ErrBufferFull):
		return lr.nextLong(line)
	default:
		return nil, false, err
	}
	lr.n++
	return bytes.TrimRight(line, "\r\n"), false, nil
}

// nextLong reads the rest of a line longer than the read buffer,
// keeping at most maxLine bytes of it.
func (lr *lineReader) nextLong(first []byte) ([]byte, bool, error) {
	lr.long = append(lr.long[:0], first...)
	tooLong := false
	for {
		part, err := lr.br.ReadSlice('\n')
		if !tooLong && len(lr.long)+len(part) > maxLine+1 {
			tooLong = true
			lr.long = lr.long[:0]
		} else if !tooLong {
			lr.long = append(lr.long, part...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && err != io.EOF {
			return nil, false, err
		}
		lr.n++
		if tooLong {
			return nil, true, nil
		}
		return bytes.TrimRight(lr.long, "\r\n"), false, nil
	}
}

// source reads one file's requests, in time order within a reorder
// window: CredHub stamps rt when a request starts but writes the line
// when it ends, so a file is ordered by end, not by rt.
type source struct {
	name    string
	lr      lineReader
	window  int64
	pending reqHeap
	maxAt   int64
	lastOut int64
	eof     bool
	skipped map[string]int64
	records int64 // lines read as CEF records
	nskip   int64
	names   *nameTable

	cur     Request
	curKey  uint64
	curRes  []uint64
	hasCur  bool
	rec     record
	scratch []byte
}

func newSource(name string, r io.Reader, window int64, names *nameTable) *source {
	return &source{
		name: name, lr: lineReader{br: bufio.NewReaderSize(r, readBufSize)}, window: window,
		skipped: map[string]int64{}, names: names, lastOut: -1 << 62,
	}
}

func (s *source) skip(reason string, n int64) {
	s.skipped[reason] += n
	s.nskip += n
}

// peek returns the source's earliest request not yet taken, once no
// later line can be earlier; ok is false at the end.
func (s *source) peek() (r *Request, ok bool, err error) {
	for !s.eof && (len(s.pending) == 0 || s.pending[0].At > s.maxAt-s.window) {
		if err := s.readOne(); err != nil {
			return nil, false, err
		}
	}
	if len(s.pending) == 0 {
		return nil, false, nil
	}
	return &s.pending[0], true, nil
}

// pop removes what peek returned.
func (s *source) pop() {
	s.lastOut = s.pending[0].At
	s.pending.pop()
}

// readOne reads one line and files it: a line that begins a new request
// completes the one before.
func (s *source) readOne() error {
	line, tooLong, err := s.lr.next()
	if err == io.EOF {
		s.eof = true
		s.flush()
		if s.lr.n == 0 {
			s.skip(skipEmptyFile, 1)
		}
		return nil
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum) {
		return fmt.Errorf("%s: a truncated or corrupt gzip stream after line %d (an interrupted copy?): re-fetch it, or pass what is readable as a plain file (zcat FILE > FILE.log)", s.name, s.lr.n)
	}
	if err != nil {
		return fmt.Errorf("%s: after line %d: %w", s.name, s.lr.n, err)
	}
	if tooLong {
		s.skip(skipTooLong, 1)
		return nil
	}
	if reason := parseLine(line, &s.rec); reason != "" {
		s.skip(reason, 1)
		return nil
	}
	s.records++
	s.add(&s.rec)
	return nil
}

// add puts a line into the current request or starts the next one. The
// lines of one request are adjacent (CredHub logs them as one event)
// and equal but for the resource; a resource seen twice means a second,
// identical request (two finds of one path in one millisecond).
func (s *source) add(rec *record) {
	if s.hasCur && rec.key == s.curKey && !s.seen(rec.res) {
		s.cur.Lines++
		s.addName(rec.name)
		if len(s.curRes) < groupCap {
			s.curRes = append(s.curRes, rec.res)
		}
		return
	}
	s.flush()
	s.hasCur = true
	s.curKey = rec.key
	s.curRes = append(s.curRes[:0], rec.res)
	s.cur = Request{At: rec.at, Type: rec.typ, Auth: rec.auth, Status: rec.status, Lines: 1}
	s.addName(rec.name)
}

func (s *source) seen(res uint64) bool {
	for _, r := range s.curRes {
		if r == res {
			return true
		}
	}
	return false
}

func (s *source) addName(raw []byte) {
	if len(raw) == 0 {
		return
	}
	h := s.names.hash(s.normalise(raw))
	for _, n := range s.cur.Names {
		if n == h {
			return
		}
	}
	s.cur.Names = append(s.cur.Names, h)
}

// normalise is the name as CredHub looks it up: unescaped, with a
// leading slash, case-insensitive.
func (s *source) normalise(raw []byte) []byte {
	b := s.scratch[:0]
	if bytes.ContainsAny(raw, "%+") {
		if u, err := url.QueryUnescape(string(raw)); err == nil {
			raw = []byte(u)
		}
	}
	if len(raw) > 0 && raw[0] != '/' {
		b = append(b, '/')
	}
	for _, c := range raw {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	s.scratch = b
	return b
}

func (s *source) flush() {
	if !s.hasCur {
		return
	}
	s.hasCur = false
	r := s.cur
	s.cur.Names = nil
	if r.At < s.lastOut {
		s.skip(skipBackwards, int64(r.Lines))
		return
	}
	if r.At > s.maxAt {
		s.maxAt = r.At
	}
	s.pending.push(r)
}

// reqHeap is a min-heap of requests by time, by value (no boxing).
type reqHeap []Request

func (h *reqHeap) push(r Request) {
	*h = append(*h, r)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if a[p].At <= a[i].At {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func (h *reqHeap) pop() {
	a := *h
	n := len(a) - 1
	a[0] = a[n]
	a[n] = Request{}
	a = a[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && a[l].At < a[m].At {
			m = l
		}
		if l+1 < n && a[l+1].At < a[m].At {
			m = l + 1
		}
		if m == i {
			break
		}
		a[m], a[i] = a[i], a[m]
		i = m
	}
	*h = a
}
