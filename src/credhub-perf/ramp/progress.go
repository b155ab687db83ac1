package ramp

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/results"
)

// logger writes log lines and, on a terminal, one live progress line that
// the next log line replaces.
type logger struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	showing bool
}

func (l *logger) Printf(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	fmt.Fprintf(l.w, "%s credhub-perf: %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, a...))
}

func (l *logger) clear() {
	if l.showing {
		fmt.Fprint(l.w, "\r\033[K")
		l.showing = false
	}
}

// Progress replaces the live line (terminals only).
func (l *logger) Progress(s string) {
	if !l.tty {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "\r\033[K%s", s)
	l.showing = true
}

// Finish removes the live line.
func (l *logger) Finish() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
}

// progressSink counts a step's results for the live line. The engine
// records results one at a time (load's recorder), this sink after the
// Stats sink, so reading stats is safe; a ticker redraws the line even
// when no result arrives (a stall).
type progressSink struct {
	log      *logger
	stats    *results.Stats
	step     int
	total    int
	st       load.Step
	eta      func(time.Duration, int64, float64) time.Duration
	clock    load.Clock // of the step's schedule: elapsed time and ETA
	began    time.Time
	lastCalc time.Time
	lastLog  time.Time

	mu     sync.Mutex
	done   int64
	errors int64
	p95    time.Duration
	quit   chan struct{}
	wg     sync.WaitGroup
}

func newProgressSink(l *logger, clock load.Clock, stats *results.Stats, step, total int, st load.Step, eta func(time.Duration, int64, float64) time.Duration) *progressSink {
	p := &progressSink{log: l, clock: clock, stats: stats, step: step, total: total, st: st, eta: eta, quit: make(chan struct{})}
	p.began = clock.Now()
	if !st.StartAt.IsZero() && st.StartAt.After(p.began) {
		p.began = st.StartAt
	}
	p.lastLog = p.began
	p.wg.Add(1)
	go p.loop()
	return p
}

func (p *progressSink) Record(r *load.Result) {
	p.mu.Lock()
	p.done++
	if r.Failed() {
		p.errors++
	}
	if p.done&255 == 1 {
		if now := time.Now(); now.Sub(p.lastCalc) > 500*time.Millisecond {
			p.lastCalc = now
			p.p95 = p.stats.Quantile(0.95)
		}
	}
	p.mu.Unlock()
}

func (p *progressSink) line() string {
	p.mu.Lock()
	done, errs, p95 := p.done, p.errors, p.p95
	p.mu.Unlock()
	el := p.clock.Now().Sub(p.began)
	rate := 0.0
	if el > 0 {
		rate = float64(done) / el.Seconds()
	}
	eta := "?"
	if d := p.eta(el, done, rate); d >= 0 {
		eta = d.Round(time.Second).String()
	}
	return fmt.Sprintf("step %d/%d %s: %d req, %.0f req/s, p95 %s, errors %d, ETA %s",
		p.step+1, p.total, strings.TrimSpace(loadLabel(p.st)), done, rate, fmtMS(p95), errs, eta)
}

func (p *progressSink) loop() {
	defer p.wg.Done()
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.quit:
			return
		case <-t.C:
			// The ticker only redraws; what the line says is on the
			// run's clock.
			now := p.clock.Now()
			if now.Before(p.began) {
				continue
			}
			if p.log.tty {
				p.log.Progress(p.line())
			} else if now.Sub(p.lastLog) >= 30*time.Second {
				p.lastLog = now
				p.log.Printf("%s", p.line())
			}
		}
	}
}

func (p *progressSink) stop() {
	close(p.quit)
	p.wg.Wait()
}
