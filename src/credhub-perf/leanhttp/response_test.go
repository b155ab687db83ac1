package leanhttp

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestReadResponse: the framings a server may use, each read to the end
// of its body (and no further: the next response follows on the reader),
// with whether the connection must close after it.
func TestReadResponse(t *testing.T) {
	const next = "HTTP/1.1 204 No Content\r\n\r\n"
	for _, c := range []struct {
		name, resp string
		bodyless   bool
		status     int
		n          int64
		closeAfter bool
		loc        string
		err        error
		followed   bool // the next response is still on the reader
		alone      bool // the stream ends with resp (no next response)
	}{
		{name: "length", resp: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", status: 200, n: 5, followed: true},
		{name: "chunked with trailer", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=1\r\nabc\r\n5\r\ndefgh\r\n0\r\nT: v\r\n\r\n", status: 200, n: 8, followed: true},
		{name: "interim then final", resp: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", status: 201, n: 2, followed: true},
		{name: "connection close", resp: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", status: 200, n: 1, closeAfter: true, followed: true},
		{name: "HTTP/1.0 closes", resp: "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", status: 200, n: 1, closeAfter: true, followed: true},
		{name: "HTTP/1.0 keep-alive", resp: "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\nx", status: 200, n: 1, followed: true},
		{name: "no length: to the end", resp: "HTTP/1.1 200 OK\r\n\r\nuntil-eof", status: 200, n: 9 + int64(len(next)), closeAfter: true},
		{name: "HEAD has no body", resp: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", bodyless: true, status: 200, followed: true},
		{name: "redirect keeps Location", resp: "HTTP/1.1 302 Found\r\nLocation: /final\r\nContent-Length: 0\r\n\r\n", status: 302, loc: "/final", followed: true},
		{name: "Location of a 200 ignored", resp: "HTTP/1.1 200 OK\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n", status: 200, followed: true},
		{name: "not HTTP/1.x", resp: "HTTP/2 200 OK\r\n\r\n", closeAfter: true, err: errMalformed},
		{name: "bad length", resp: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", status: 200, closeAfter: true, err: errMalformed},
		{name: "cut short", resp: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", alone: true, status: 200, n: 3, err: io.ErrUnexpectedEOF},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := c.resp + next
			if c.alone {
				raw = c.resp
			}
			br := bufio.NewReaderSize(strings.NewReader(raw), 64)
			var loc []byte
			status, n, closeAfter, _, err := readResponse(br, c.bodyless, &loc)
			if !errors.Is(err, c.err) || status != c.status || n != c.n || closeAfter != c.closeAfter || string(loc) != c.loc {
				t.Fatalf("got status %d, %d bytes, close %v, Location %q, err %v; want %d, %d, %v, %q, %v",
					status, n, closeAfter, loc, err, c.status, c.n, c.closeAfter, c.loc, c.err)
			}
			if !c.followed {
				return
			}
			if status, _, _, _, err := readResponse(br, false, nil); err != nil || status != 204 {
				t.Fatalf("the next response: status %d, err %v; want 204", status, err)
			}
		})
	}
}

// TestReadResponseLongLine: a header line longer than the reader's
// buffer is an error of its own, not a hang or a misparse.
func TestReadResponseLongLine(t *testing.T) {
	br := bufio.NewReaderSize(strings.NewReader("HTTP/1.1 200 OK\r\nX: "+strings.Repeat("a", 200)+"\r\n\r\n"), 64)
	if _, _, _, _, err := readResponse(br, false, nil); !errors.Is(err, errTooLong) {
		t.Fatalf("err %v, want %v", err, errTooLong)
	}
}
