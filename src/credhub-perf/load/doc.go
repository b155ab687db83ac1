// Package load is the load engine shared by hey and credhub-perf: closed-loop
// and open-loop request generation over net/http (the default) or, opt-in,
// the lean HTTP/1.1 client of package leanhttp, with mutual TLS,
// per-request templates and per-request phase timings streamed to a Sink.
//
// The contract: New (or NewMix) validates a Template and ClientOptions
// into an Engine; each Engine.Run sends one Step (closed loop: Concurrency
// workers back to back; open loop: Rate requests/s, each due at its
// schedule, with latency counted from it) and records every request it
// issued, failures included, as one Result to the Sink, on the engine's
// Clock. Runs of one Engine go one after another.
//
// Where things are: engine.go (the Engine, its workers, Run and the
// pacer), std.go and stdgate.go (the net/http path and its open-loop
// gate), lean.go and leanpool.go (the engine's side of the lean client
// and its open-loop pool), dialpolicy.go (when an open-loop request dials,
// for both), clock.go and wake_*.go (time and the pacer's timer),
// template.go, tls.go and verify.go, errors.go (the Results' messages).
//
// # Open loop: pacing and connections
//
// An open-loop step sends request i at start + i/rate whatever the server
// does, and measures its latency from that schedule, so a stalled server
// or tester cannot hide latency (no coordinated omission). sched-lag is
// how late a worker took the request up; a wait for a connection after
// that is latency, not sched-lag.
//
// The pacer sleeps on a Linux timerfd through the runtime's poller and
// spins the last margin (the recent wake-up lateness plus a quarter,
// 50-200 µs, at most a tenth of the gap); requests under 500 µs apart are
// paced by the timerfd alone. Why: Go's timers fire up to a millisecond
// late, a spin per request would take a core at low rates, and a spin past
// 200 µs keeps responses unread on a one-core tester. Elsewhere Go timers
// pace.
//
// With requests at least 500 µs apart, net/http's worker gets the request
// at the pacer's wake-up, builds it, and spins to the schedule itself, so
// building the request (cold caches at low rates) is not in the latency.
// Nothing leaves before its schedule.
//
// Connections are shared by the open-loop workers, most recently used
// first, so a step opens about its peak in flight. A request that finds
// none idle waits for one given back and dials only when nothing is in
// flight, the server is slow (the busy connections come back more than a
// quarter of a dial apart), nothing came back for a whole dial's time (one
// request at a time), or the connections in flight cannot carry the rate
// (Little's law). While the tester is short of CPU only "nothing in
// flight" dials: each mutual-TLS handshake costs 1-2 ms of the CPU it
// lacks, and the connections it has clear the queue. How many requests
// wait is not a reason: dialling for a burst fed on itself. net/http
// follows the same policy through a gate in front of its Transport
// (dialpolicy.go, stdgate.go).
//
// A step dials its first connections (1-4: the requests due during one
// handshake) before its clock starts; a step's warm-up leaves its
// connections to the measured part (Step.KeepConns). A request that waited
// the client timeout for a worker or a connection is recorded as failed,
// not sent, so a step ends about one timeout after its duration at most.
//
// Before reusing an idle connection the tester peeks at its socket (Linux)
// and replaces one the server closed. A closed-loop worker without -q
// whose next request starts within a millisecond of its last response does
// not look: its connection never idled, and the look (a system call per
// request) was about 5 % of the lean client's CPU per request. A request
// whose reused connection dies before any answer is sent once more only
// when net/http would replay it (GET, HEAD, an idempotency key), so a set
// or interpolate is never written twice; its latency still counts from the
// schedule (load/idleconn).
package load
