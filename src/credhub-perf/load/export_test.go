package load

import "time"

// UseRawSock switches the Linux socket fast path for one test (it has no
// effect elsewhere) and returns the function that restores it. Not for
// parallel tests: it sets a package variable.
func UseRawSock(on bool) (restore func()) {
	old := rawSock
	rawSock = on
	return func() { rawSock = old }
}

// Draws returns n request-type names as one worker of e draws them.
func Draws(e *Engine, wi, n int) []string {
	w := &worker{e: e, t: e, mix: e.mix.seed ^ uint64(wi)*0x9e3779b97f4a7c15}
	out := make([]string, n)
	for i := range out {
		w.pick()
		out[i] = w.t.name
	}
	return out
}

// UseAliveCheck switches the look at idle connections (alive) for one
// test and returns the function that restores it. Not for parallel tests.
func UseAliveCheck(on bool) (restore func()) {
	old := aliveCheck
	aliveCheck = on
	return func() { aliveCheck = old }
}

// SetHandLead sets how early, on a test's clock, the pacer hands
// net/http's open-loop requests over (Engine.pace's handEarly).
func SetHandLead(e *Engine, d time.Duration) { e.hooks.handLead = d }
