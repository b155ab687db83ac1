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
package load
