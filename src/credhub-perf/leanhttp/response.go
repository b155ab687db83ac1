package leanhttp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"time"
)

var (
	errMalformed = errors.New("malformed HTTP response")
	errTooLong   = errors.New("response header line too long")
)

// readResponse reads one response and discards its body. It returns the
// status, the body bytes, whether the server asked to close, and when the
// first byte arrived (a phase stamp: monoNow).
func readResponse(br *bufio.Reader, bodyless bool, loc *[]byte) (status int, n int64, closeAfter bool, tfb time.Time, err error) {
	if _, err = br.Peek(1); err != nil {
		return 0, 0, true, tfb, err
	}
	tfb = monoNow()
	for {
		var line []byte
		if line, err = br.ReadSlice('\n'); err != nil {
			return 0, 0, true, tfb, fixErr(err)
		}
		// "HTTP/1.1 200 OK"
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
			return 0, 0, true, tfb, errMalformed
		}
		status = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
		if status < 100 || status > 999 {
			return 0, 0, true, tfb, errMalformed
		}
		http10 := line[7] == '0'
		closeAfter = http10
		contentLength := int64(-1)
		chunked := false
		for {
			if line, err = br.ReadSlice('\n'); err != nil {
				return status, 0, true, tfb, fixErr(err)
			}
			if len(line) <= 2 && (len(line) == 1 || line[0] == '\r') {
				break
			}
			colon := bytes.IndexByte(line, ':')
			if colon <= 0 {
				return status, 0, true, tfb, errMalformed
			}
			// The value is trimmed only for the headers read below: most
			// of a response's (Date, Content-Type) are skipped.
			name, val := line[:colon], line[colon+1:]
			switch len(name) {
			case 8:
				if loc != nil && status >= 300 && status < 400 && bytes.EqualFold(name, []byte("Location")) {
					*loc = append((*loc)[:0], bytes.TrimSpace(val)...)
				}
			case 14:
				if bytes.EqualFold(name, []byte("Content-Length")) {
					v, ok := parseUint(bytes.TrimSpace(val), 10)
					if !ok {
						return status, 0, true, tfb, errMalformed
					}
					contentLength = int64(v)
				}
			case 17:
				if bytes.EqualFold(name, []byte("Transfer-Encoding")) && containsFold(val, "chunked") {
					chunked = true
				}
			case 10:
				if bytes.EqualFold(name, []byte("Connection")) {
					if containsFold(val, "close") {
						closeAfter = true
					} else if http10 && containsFold(val, "keep-alive") {
						closeAfter = false
					}
				}
			}
		}
		if status >= 100 && status < 200 && status != 101 {
			continue // interim response; the real one follows
		}
		switch {
		case bodyless || status == 204 || status == 304 || status == 101:
			return status, 0, closeAfter || status == 101, tfb, nil
		case chunked:
			n, err = discardChunked(br)
			return status, n, closeAfter, tfb, err
		case contentLength >= 0:
			var d int
			d, err = br.Discard(int(contentLength))
			return status, int64(d), closeAfter, tfb, fixErr(err)
		default:
			// No length: the body runs to the end of the connection.
			n, err = io.Copy(io.Discard, br)
			return status, n, true, tfb, err
		}
	}
}

func fixErr(err error) error {
	if err == bufio.ErrBufferFull {
		return errTooLong
	}
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func discardChunked(br *bufio.Reader) (int64, error) {
	var total int64
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return total, fixErr(err)
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		line = bytes.TrimSpace(line)
		size, ok := parseUint(line, 16)
		if !ok {
			return total, errMalformed
		}
		if size == 0 {
			for { // trailers end with an empty line
				line, err = br.ReadSlice('\n')
				if err != nil {
					return total, fixErr(err)
				}
				if len(line) <= 2 && (len(line) == 1 || line[0] == '\r') {
					return total, nil
				}
			}
		}
		d, err := br.Discard(int(size))
		total += int64(d)
		if err != nil {
			return total, fixErr(err)
		}
		if line, err = br.ReadSlice('\n'); err != nil || len(bytes.TrimSpace(line)) != 0 {
			if err == nil {
				err = errMalformed
			}
			return total, fixErr(err)
		}
	}
}

func containsFold(b []byte, s string) bool {
	n := len(s)
	for i := 0; i+n <= len(b); i++ {
		if bytes.EqualFold(b[i:i+n], []byte(s)) {
			return true
		}
	}
	return false
}

// parseUint parses a decimal or hexadecimal length without allocating.
func parseUint(b []byte, base uint64) (uint64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		v = v*base + d
	}
	return v, true
}

// clockBase anchors monoNow's stamps.
var clockBase = time.Now()

// monoNow is now, for a phase stamp: one reading of the monotonic clock
// (time.Now reads the wall clock too, a second vDSO call, two of which a
// request used to make on the hot path). Stamps are only subtracted from
// one another and from time.Now's readings, which Go does on the
// monotonic clock; their wall part, clockBase's plus the time since, may
// drift from the wall clock and is not for display.
func monoNow() time.Time { return clockBase.Add(time.Since(clockBase)) }
