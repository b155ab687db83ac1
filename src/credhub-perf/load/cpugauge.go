package load

import (
	"time"

	"github.com/credhub-perf/credhub-perf/cpuload"
)

// testerShort is the open-loop pacer's judgement of whether the tester is
// short of CPU, which its dial policy acts on (dialPolicy.noteTester):
// short from a request handed over more than stallLate after its
// schedule (the tester lost the CPU to other work, or fell behind) until
// one leaves on time, or over a window in which the tester's own process
// used nearly all of its cores (cpuGauge), until a window in which it did
// not. The pacer judges because it runs at every request, and whatever
// starves the tester starves it too. Both signals are needed: a tester
// that runs out of its own CPU falls behind in its gate's or pool's queue
// first, while the pacer, woken by its timer, still hands requests over
// on time; a tester whose CPU goes to other processes never shows a full
// process.
type testerShort struct {
	cpu     cpuGauge
	cpuFull bool // the last window's verdict
}

// judge: the pacer handed over a request at now, late or not.
func (s *testerShort) judge(now time.Time, late bool) bool {
	if full, ok := s.cpu.note(now); ok {
		s.cpuFull = full
	}
	return late || s.cpuFull
}

// cpuWindow is the span over which cpuGauge judges whether the tester had
// CPU to spare: long enough to average over many requests, short enough
// to follow the few milliseconds a dial spiral takes to start.
const cpuWindow = 10 * time.Millisecond

// cpuFull: a tester whose process used this share of its cores over a
// window had none to spare for a handshake (1-2 ms of CPU each): the
// bound past which credhub-perf calls a step tester-bound, for the same
// reason (too little slack to send on time).
var cpuFull = cpuload.DefaultLimits.TesterCPU

// cpuGauge tells, window by window, whether the tester's own process used
// nearly all of its cores.
type cpuGauge struct {
	// read is the process's CPU so far; nil: unknown (never full). The
	// system's count only means something on the system clock: a
	// simulated clock's engine gets none unless its test gives one.
	read  func() (time.Duration, bool)
	cores int
	at    time.Time // start of the current window; zero: none yet
	cpu   time.Duration
}

func (e *Engine) newCPUGauge() cpuGauge {
	g := cpuGauge{read: e.hooks.cpuRead, cores: cpuload.Cores()}
	if e.opts.Clock == nil && g.read == nil {
		g.read = cpuload.ProcessCPU
	}
	return g
}

// note reads the gauge at now; ok when a window ended, with whether the
// tester's CPU was full over it.
func (g *cpuGauge) note(now time.Time) (full, ok bool) {
	if g.read == nil || g.cores <= 0 {
		return false, false
	}
	if !g.at.IsZero() && now.Sub(g.at) < cpuWindow {
		return false, false
	}
	c, known := g.read()
	if !known {
		g.read = nil
		return false, false
	}
	if g.at.IsZero() {
		g.at, g.cpu = now, c
		return false, false
	}
	full = float64(c-g.cpu) >= cpuFull*float64(g.cores)*float64(now.Sub(g.at))
	g.at, g.cpu = now, c
	return full, true
}
