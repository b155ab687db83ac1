// Package leanhttp is the opt-in lean HTTP/1.1 client of the load engine
// (package load, ClientOptions.FastHTTP): requests written as one
// pre-rendered buffer, responses parsed from a bufio.Reader without
// allocating, phase timings taken directly, and on Linux raw system calls
// that send a request from inside the read that waits for its response.
// net/http with httptrace costs several times more CPU per request, which
// a load generator spends instead of the server under test.
//
// The contract: a Client knows the server (address, TLS) and the
// connection options; each worker of the engine has a Sender, which holds
// at most one Conn at a time (its own, or one lent by the engine's
// open-loop pool: Use, Take) and sends one request per RoundTrip, filling
// an Outcome with its status, body bytes, phase timings, or the phase and
// error it failed with. Templates, pacing, redirects, Results and their
// error messages are the engine's.
package leanhttp
