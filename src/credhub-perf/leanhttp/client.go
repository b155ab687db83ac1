package leanhttp

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/credhub-perf/credhub-perf/load/idleconn"
)

// Config is what the client needs of the engine's target and options.
type Config struct {
	Hostname string
	Port     string
	// TLS is the client's TLS configuration, ServerName set; nil: plain
	// HTTP.
	TLS *tls.Config
	// Timeout is the client's per-request timeout (0: none). With one,
	// writes are held and sent from inside the read that waits for the
	// answer (sockConn): without a deadline a lost wake-up would hang a
	// worker for ever.
	Timeout   time.Duration
	KeepAlive bool
	// PortableIO leaves TCP connections unwrapped on Linux too: the path
	// other systems take (tests run it there).
	PortableIO bool
}

// Client dials and sends for the workers' Senders.
type Client struct {
	cfg Config
}

// New returns a client for cfg.
func New(cfg Config) *Client { return &Client{cfg: cfg} }

// Conn is one connection of the client: closed (Open false) once its
// socket is, when it may still lend its buffers to the next dial of the
// Sender that holds it.
type Conn struct {
	nc net.Conn
	sc *sockConn // the TCP connection under nc, when it could be wrapped
	br *bufio.Reader
	// answered: when the first byte of the connection's last response
	// came (zero: none yet), for AliveRecent.
	answered time.Time
}

// NewConn is a Conn over nc, a connection established elsewhere, used as
// it is (no TLS of its own, no held writes).
func NewConn(nc net.Conn) *Conn {
	return &Conn{nc: nc, br: bufio.NewReaderSize(nc, readBuffer)}
}

// readBuffer is the size of a connection's response reader.
const readBuffer = 16 << 10

// Open: the connection's socket is open.
func (c *Conn) Open() bool { return c != nil && c.nc != nil }

// Alive: the idle connection c can carry a request (idleconn.Alive).
// Without a sockConn (not Linux, or PortableIO) there is no look: yes.
func (c *Conn) Alive() bool {
	if c.sc == nil {
		return idleconn.Alive(c.nc, nil, c.br)
	}
	return idleconn.Alive(c.nc, &c.sc.probe, c.br)
}

// AliveRecent is Alive for a connection about to carry a request at now,
// without the look at its socket (a system call) when its last response
// began less than recent before now: then only bytes left in its reader,
// which no request asked for, make it unusable. The caller chooses
// recent, and when such a connection counts as not idle (load's
// lookAfter).
func (c *Conn) AliveRecent(now time.Time, recent time.Duration) bool {
	if !c.answered.IsZero() && now.Sub(c.answered) < recent {
		return c.br.Buffered() == 0
	}
	return c.Alive()
}

// Close closes the connection's socket (the Conn is then closed: Open is
// false).
func (c *Conn) Close() {
	_ = c.nc.Close()
	c.nc = nil
}

// Flush sends what the connection holds: after a dial, the client's last
// handshake flight, which would otherwise leave with the first request.
// Only Linux's sockConn holds bytes.
func (c *Conn) Flush() error {
	if c.sc == nil {
		return nil
	}
	return c.sc.flush()
}

// Sender sends one worker's requests, on at most one connection at a
// time. Abort may be called from another goroutine; the rest from the
// worker's alone.
type Sender struct {
	c *Client
	// afterDial is called once a dial of RoundTrip has ended, failed or
	// not (nil: nothing to call): the engine's pool gives its dial token
	// back then.
	afterDial func()
	mu        sync.Mutex // guards conn's socket against a concurrent Abort
	conn      *Conn
	dead      bool   // aborted: a dial that ends now closes its connection
	loc       []byte // Location of a redirect
}

// NewSender is a Sender of c's; afterDial, if not nil, is called after
// each of its dials (Sender.afterDial).
func (c *Client) NewSender(afterDial func()) *Sender {
	return &Sender{c: c, afterDial: afterDial}
}

// Conn is the connection the Sender holds (nil: none).
func (s *Sender) Conn() *Conn { return s.conn }

// Use makes c, lent by a pool (nil: none, the next RoundTrip dials), the
// Sender's connection.
func (s *Sender) Use(c *Conn) {
	s.mu.Lock()
	s.conn = c
	s.mu.Unlock()
}

// Take ends the Sender's hold of its connection and returns it (nil:
// none), open or closed, for a pool to keep or drop.
func (s *Sender) Take() *Conn {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	return c
}

// Abort makes in-flight I/O on the Sender's connection fail now, and any
// later dial of it.
func (s *Sender) Abort() {
	s.mu.Lock()
	s.dead = true
	if s.conn != nil && s.conn.nc != nil {
		if s.conn.sc != nil {
			s.conn.sc.abort() // and no lazy deadline moves it back
		} else {
			_ = s.conn.nc.SetDeadline(time.Unix(1, 0))
		}
	}
	s.mu.Unlock()
}

// CloseConn closes the Sender's connection, if open.
func (s *Sender) CloseConn() {
	s.mu.Lock()
	if s.conn != nil && s.conn.nc != nil {
		_ = s.conn.nc.Close()
		s.conn.nc = nil
	}
	s.mu.Unlock()
}

// deadlineSlack: a sockConn's socket deadline may lie up to an eighth of
// the client's timeout before the request's (lazyDeadline): it then moves
// about once per eighth on a busy connection, and a request pays a second
// move only when still in flight past 7/8 of its timeout.
const deadlineSlack = 8

// Request is one request to send.
type Request struct {
	Raw []byte // the whole request, as written on the wire
	// Start is when the request started (system clock): its phases count
	// from it. Deadline (zero: none) bounds its dial and I/O.
	Start, Deadline time.Time
	// Replayable: net/http would send it again after a closed connection
	// (idleconn.Replayable).
	Replayable bool
	Bodyless   bool // HEAD: the response carries no body
	// WantLocation: keep a redirect's Location (Outcome.Location).
	WantLocation bool
}

// Outcome is what became of a request, over its tries: phase timings
// (each set by the try that ran the phase), status and body bytes, or
// the phase Op and error Err it failed with.
type Outcome struct {
	DNS       time.Duration
	DNSDial   time.Duration // DNS + dial + TLS handshake (new connections)
	ReqWrite  time.Duration
	RespDelay time.Duration // request written -> first response byte
	RespRead  time.Duration // first byte -> body read
	Status    int           // 0 when no response came back
	BytesIn   int64         // response body bytes
	// Op is the phase Err came in: "dial", "tls handshake", "write",
	// "read" (no status yet) or "read body".
	Op  string
	Err error
	// Location is a redirect response's Location when Request.WantLocation
	// (empty: none); valid until the Sender's next RoundTrip.
	Location []byte
}

func (o *Outcome) fail(op string, err error) { o.Op, o.Err = op, err }

// RoundTrip sends q once, on the Sender's connection or, when it has
// none open, on one it dials. It returns true when a reused connection
// turned out to be closed by the server before answering, which is worth
// one retry on a fresh connection, as net/http does: when mayRetry (the
// first try), for a request it may replay (q.Replayable), or one of which
// nothing was written. The caller looks at an idle connection of its own
// before the first try (Conn.Alive); a pool's was looked at when lent.
func (s *Sender) RoundTrip(ctx context.Context, q *Request, o *Outcome, mayRetry bool) (retry bool) {
	c := s.conn
	reused := c != nil && c.nc != nil
	if !reused {
		var err error
		c, err = s.dial(ctx, o, q.Start, q.Deadline)
		if s.afterDial != nil {
			s.afterDial()
		}
		if err != nil {
			var he *handshakeError
			if errors.As(err, &he) {
				o.fail("tls handshake", he.err)
			} else {
				o.fail("dial", err)
			}
			return false
		}
	}
	if c.sc != nil {
		// Under TLS too: crypto/tls's deadlines are its connection's.
		c.sc.deadlineBy(q.Deadline, s.c.cfg.Timeout/deadlineSlack)
	} else if !q.Deadline.IsZero() {
		_ = c.nc.SetDeadline(q.Deadline)
	}
	if ctx.Err() != nil {
		o.fail("write", ctx.Err())
		s.CloseConn()
		return false
	}
	t0 := q.Start
	if !reused {
		t0 = time.Now()
	}
	wn, err := c.nc.Write(q.Raw)
	// Bytes held by the sockConn leave from inside the first read, which
	// stamps their going (readResponse): a reading now would be dropped.
	var t1 time.Time
	if err != nil || c.sc == nil || !c.sc.held() {
		t1 = time.Now()
		o.ReqWrite = t1.Sub(t0)
	}
	if err != nil {
		s.CloseConn()
		if reused && mayRetry && idleconn.PeerClosed(err) && ctx.Err() == nil && (wn == 0 || q.Replayable) {
			return true
		}
		o.fail("write", err)
		return false
	}
	return s.readResponse(ctx, c, q, o, reused && mayRetry, t0, t1)
}

// readResponse reads q's response on c, written from t0 to t1 (zero: held,
// to go from within the first read: sockConn), into o; true when the try
// may be retried (RoundTrip).
func (s *Sender) readResponse(ctx context.Context, c *Conn, q *Request, o *Outcome, mayRetry bool, t0, t1 time.Time) (retry bool) {
	var loc *[]byte
	if q.WantLocation {
		s.loc = s.loc[:0]
		loc = &s.loc
	}
	status, n, closeAfter, tfb, err := readResponse(c.br, q.Bodyless, loc)
	if t1.IsZero() {
		// The held bytes went out inside the first read, or never did
		// (the read failed first): then the request's write ends now.
		if t1 = c.sc.wroteAt; t1.IsZero() {
			t1 = time.Now()
		}
		o.ReqWrite = t1.Sub(t0)
	}
	if !tfb.IsZero() {
		o.RespDelay = tfb.Sub(t1)
		o.RespRead = time.Since(tfb)
	} else {
		o.RespDelay = time.Since(t1)
	}
	o.BytesIn = n
	if err != nil {
		s.CloseConn()
		if mayRetry && tfb.IsZero() && idleconn.PeerClosed(err) && ctx.Err() == nil && q.Replayable {
			o.RespDelay, o.BytesIn = 0, 0
			return true
		}
		o.Status = status
		if status == 0 {
			o.fail("read", err)
		} else {
			o.fail("read body", err)
		}
		return false
	}
	o.Status = status
	c.answered = tfb
	if closeAfter || !s.c.cfg.KeepAlive {
		s.CloseConn()
	}
	if loc != nil {
		o.Location = s.loc
	}
	return false
}

// Dial dials a connection from start, bounded by deadline (zero: none),
// and makes it the Sender's; its phases go to o. (A pool dials its warm
// connections so, and takes them: Take.)
func (s *Sender) Dial(ctx context.Context, o *Outcome, start, deadline time.Time) (*Conn, error) {
	return s.dial(ctx, o, start, deadline)
}

func (s *Sender) dial(ctx context.Context, o *Outcome, start, deadline time.Time) (*Conn, error) {
	cfg := &s.c.cfg
	nc, err := dialTCP(ctx, cfg, o, start, deadline)
	if err != nil {
		return nil, err
	}
	var spare *sockConn
	if s.conn != nil && s.conn.nc == nil {
		spare = s.conn.sc // its connection is closed: only the Sender uses it
	}
	sc := wrapSock(nc, spare, !cfg.PortableIO)
	if sc != nil {
		nc = sc
		if cfg.Timeout > 0 {
			// Without a deadline a lost wake-up would hang a worker
			// forever; with one, holding writes is safe. Held from the
			// start, each handshake flight goes out from inside the read
			// that waits for the answer, and the client's last flight
			// (Finished) leaves in one segment with the request.
			sc.hold = true
		}
	}
	if cfg.TLS != nil {
		tc := tls.Client(nc, cfg.TLS)
		if !deadline.IsZero() {
			_ = nc.SetDeadline(deadline)
		}
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			o.DNSDial = time.Since(start)
			return nil, &handshakeError{err}
		}
		nc = tc
	}
	o.DNSDial = time.Since(start)
	return s.install(ctx, nc, sc)
}

// install makes nc (over sc, nil when unwrapped) the Sender's connection,
// reusing its Conn's reader; unless the Sender was aborted meanwhile.
func (s *Sender) install(ctx context.Context, nc net.Conn, sc *sockConn) (*Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		_ = nc.Close()
		return nil, ctx.Err()
	}
	if s.conn == nil {
		s.conn = &Conn{}
	}
	s.conn.nc = nc
	s.conn.sc = sc
	s.conn.answered = time.Time{}
	if s.conn.br == nil {
		s.conn.br = bufio.NewReaderSize(nc, readBuffer)
	} else {
		s.conn.br.Reset(nc)
	}
	return s.conn, nil
}

// dialTCP opens the TCP connection. A hostname (not an IP) is resolved
// separately, so the DNS phase can be reported on its own (o.DNS). A
// failed lookup has no DNSDial; a failed dial has, from start.
func dialTCP(ctx context.Context, cfg *Config, o *Outcome, start, deadline time.Time) (net.Conn, error) {
	d := net.Dialer{KeepAlive: -1, Deadline: deadline}
	var nc net.Conn
	var err error
	if ip := net.ParseIP(cfg.Hostname); ip != nil {
		nc, err = d.DialContext(ctx, "tcp", net.JoinHostPort(cfg.Hostname, cfg.Port))
	} else {
		var addrs []net.IPAddr
		if addrs, err = lookup(ctx, cfg.Hostname, o, deadline); err != nil {
			return nil, err
		}
		for _, a := range addrs {
			nc, err = d.DialContext(ctx, "tcp", net.JoinHostPort(a.IP.String(), cfg.Port))
			if err == nil {
				break
			}
		}
		if nc == nil && err == nil {
			err = fmt.Errorf("no addresses for %s", cfg.Hostname)
		}
	}
	if err != nil {
		o.DNSDial = time.Since(start)
		return nil, err
	}
	return nc, nil
}

// lookup resolves host by deadline (zero: none), timed into o.DNS.
func lookup(ctx context.Context, host string, o *Outcome, deadline time.Time) ([]net.IPAddr, error) {
	t0 := time.Now()
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	o.DNS = time.Since(t0)
	return addrs, err
}

// handshakeError is a dial's failed TLS handshake (Outcome.Op "tls
// handshake").
type handshakeError struct{ err error }

func (h *handshakeError) Error() string { return h.err.Error() }
func (h *handshakeError) Unwrap() error { return h.err }
