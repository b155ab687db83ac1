package targetload

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Sampler reads its sources periodically and turns their readings into
// samples on the run's CSV origin. Problems become warnings, each distinct
// one printed once; a source that fails leaves gaps, never zeros.
type Sampler struct {
	sources []Source
	origin  time.Time
	now     func() time.Time // the run's clock
	out     *Writer
	warn    func(string)

	mu       sync.Mutex
	samples  []Sample
	prev     map[string]reading
	warned   map[string]bool
	problems map[string][]string // source -> its first few warnings
	cancel   context.CancelFunc
	done     sync.WaitGroup
	readMu   []sync.Mutex // one read of a source at a time
	// slow: the source's last read took over slowRead; a step's end does
	// not wait for it until one is quick again (the ticker keeps reading).
	slow []atomic.Bool
	// began: when the read of a source under way began (UnixNano), 0
	// when none is: a read that never ends leaves no warning of its own
	// until its timeout, which a short run may not reach.
	began []atomic.Int64
}

// slowRead is the read time past which a step end stops waiting for a
// source.
const slowRead = 500 * time.Millisecond

type reading struct {
	r   Reading
	off time.Duration
}

// NewSampler samples sources; offsets are now() - origin, the run's CSV
// origin. out may be nil (samples kept in memory only); warn prints a
// warning line.
func NewSampler(sources []Source, origin time.Time, now func() time.Time, out *Writer, warn func(string)) *Sampler {
	return &Sampler{sources: sources, origin: origin, now: now, out: out, warn: warn,
		prev: map[string]reading{}, warned: map[string]bool{}, readMu: make([]sync.Mutex, len(sources)), slow: make([]atomic.Bool, len(sources)), began: make([]atomic.Int64, len(sources))}
}

// Sources names the sources.
func (s *Sampler) Sources() []string {
	var n []string
	for _, src := range s.sources {
		n = append(n, src.Name())
	}
	return n
}

// Start reads every source now and then at its interval until Stop. The
// sources that answer at once are read before Start returns, so the first
// step, however short, has a reading before it to count from.
func (s *Sampler) Start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	s.SampleNow(ctx)
	for i := range s.sources {
		_, slow := s.sources[i].(*BoshSource)
		s.done.Add(1)
		go func(i int) {
			defer s.done.Done()
			t := time.NewTicker(s.sources[i].Interval())
			defer t.Stop()
			if slow {
				s.readSource(ctx, i)
			}
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				s.readSource(ctx, i)
			}
		}(i)
	}
}

// SampleNow reads the sources that answer at once (all but BOSH, whose
// figures move only every VitalsWindow), so a step's last moments are
// sampled before it is judged.
//
// Only a process source's read is waited for: it takes milliseconds. A
// read of another source already under way (a sim that hangs, up to its
// timeout) is not waited for; that read gives the step its figures.
func (s *Sampler) SampleNow(ctx context.Context) {
	for i, src := range s.sources {
		switch src.(type) {
		case *BoshSource:
		case *ProcSource:
			s.readMu[i].Lock()
			s.readLocked(ctx, i)
		default:
			if !s.slow[i].Load() && s.readMu[i].TryLock() {
				s.readLocked(ctx, i)
			}
		}
	}
}

// SampleNowAll reads every source once now, BOSH too.
func (s *Sampler) SampleNowAll(ctx context.Context) {
	for i := range s.sources {
		s.readSource(ctx, i)
	}
}

// Stop ends sampling and closes the file.
func (s *Sampler) Stop() error {
	if s.cancel != nil {
		s.cancel()
	}
	s.done.Wait()
	if s.out != nil {
		return s.out.Close()
	}
	return nil
}

// Between returns the samples that overlap [start, end).
func (s *Sampler) Between(start, end time.Duration) []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Sample
	for _, x := range s.samples {
		if x.End >= start && x.Start <= end {
			out = append(out, x)
		}
	}
	return out
}

func (s *Sampler) readSource(ctx context.Context, i int) {
	s.readMu[i].Lock()
	s.readLocked(ctx, i)
}

// readLocked reads source i, whose read lock the caller holds, and
// releases it.
func (s *Sampler) readLocked(ctx context.Context, i int) {
	defer s.readMu[i].Unlock()
	src := s.sources[i]
	began := time.Now()
	s.began[i].Store(began.UnixNano())
	rs, warnings := src.Read(ctx)
	s.began[i].Store(0)
	s.slow[i].Store(time.Since(began) > slowRead)
	off := s.now().Sub(s.origin)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range warnings {
		s.warnOnce(w)
		s.noteProblem(src.Name(), w)
	}
	var batch []Sample
	for _, r := range rs {
		if x, ok := s.toSample(src.Name(), r, off); ok {
			batch = append(batch, asWritten(x))
		}
	}
	sort.Slice(batch, func(a, b int) bool { return batch[a].Instance < batch[b].Instance })
	s.samples = append(s.samples, batch...)
	if s.out != nil && len(batch) > 0 {
		if err := s.out.Write(batch); err != nil {
			s.warnOnce(fmt.Sprintf("writing %s: %v; later samples are kept for the summary only", FileName, err))
		}
	}
}

// toSample makes a sample from a reading and the previous one of the
// same instance; false when there is nothing to report yet, or the
// figures make no sense (warned).
func (s *Sampler) toSample(source string, r Reading, off time.Duration) (Sample, bool) {
	key := source + "\x00" + r.Resource + "\x00" + r.Instance
	x := Sample{Source: source, Resource: r.Resource, Instance: r.Instance, End: off, CPU: math.NaN(), RSSBytes: r.RSSBytes,
		CPUs: r.CPUs, MachineBusy: math.NaN(), MachineSteal: math.NaN(), MachineIowait: math.NaN(), MachineOther: math.NaN()}
	if !math.IsNaN(r.Share) || r.Window > 0 {
		x.Start = off - r.Window
		x.CPU = math.Min(r.Share, 1) // NaN stays NaN: a colocated job's
		if r.Machine != "" && finite(r.MachineShare) {
			x.Machine, x.MachineBusy = r.Machine, math.Min(r.MachineShare, 1)
		}
		return x, true
	}
	p, ok := s.prev[key]
	s.prev[key] = reading{r, off}
	if !ok {
		return Sample{}, false
	}
	dt := r.At.Sub(p.r.At).Seconds()
	busy := (r.Busy - p.r.Busy).Seconds()
	if dt <= 0 || off <= p.off {
		return Sample{}, false
	}
	x.Start = p.off
	if r.Machine != "" && r.Machine == p.r.Machine && machineShares(&x, p.r.Counters, r.Counters) {
		x.Machine = r.Machine
	}
	cores := r.Cores
	if cores <= 0 {
		s.warnOnce(fmt.Sprintf("%s %s: %v cores: its CPU share is unknown", source, r.Instance, cores))
		return x, r.RSSBytes >= 0
	}
	share := busy / dt / cores
	switch {
	case busy < 0 || share > maxShare || math.IsNaN(share):
		s.warnOnce(fmt.Sprintf("%s %s: CPU time went from %v to %v in %.3f s on %g cores: not a share from 0 to 1; left out", source, r.Instance, p.r.Busy, r.Busy, dt, cores))
		return x, r.RSSBytes >= 0
	default:
		x.CPU = math.Min(share, 1)
	}
	return x, true
}

func (s *Sampler) warnOnce(w string) {
	if s.warned[w] || s.warn == nil {
		return
	}
	s.warned[w] = true
	s.warn("warning: target load: " + w)
}

// asWritten rounds a sample as the file holds it (times up to the
// millisecond, shares to 1e-4), so figures judged from memory during the
// run equal those judged from the file later. Times round up: a step is
// judged right after its last answer, with a reading taken then, so the
// reading after that one starts after the step's end, and rounding must
// not move it back into the step (which the file, read later, would then
// give the step a share of, and the run, judging before it existed, not).
func asWritten(x Sample) Sample {
	x.Start, x.End = ceilMS(x.Start), ceilMS(x.End)
	for _, f := range []*float64{&x.CPU, &x.MachineBusy, &x.MachineSteal, &x.MachineIowait, &x.MachineOther} {
		if !math.IsNaN(*f) {
			*f = math.Round(*f*1e4) / 1e4
		}
	}
	return x
}

// ceilMS rounds d up to a whole millisecond.
func ceilMS(d time.Duration) time.Duration {
	t := d.Truncate(time.Millisecond) // towards zero: up for a negative d
	if t < d {
		t += time.Millisecond
	}
	return t
}

// machineShares sets x's machine figures from two readings of its
// machine's counters; none when either is missing or time went back.
func machineShares(x *Sample, a, b *MachineCounters) bool {
	if a == nil || b == nil {
		return false
	}
	total := b.Total - a.Total
	busy := b.Busy - a.Busy
	if !(total > 0) || busy < 0 {
		return false
	}
	share := func(d float64) float64 { return math.Min(math.Max(d/total, 0), 1) }
	x.MachineBusy = share(busy)
	if a.Steal >= 0 && b.Steal >= 0 {
		x.MachineSteal = share(b.Steal - a.Steal)
	}
	// iowait can step back on Linux (it is counted per CPU as idle time
	// a task waiting on I/O last ran on): clamped at 0.
	if a.Iowait >= 0 && b.Iowait >= 0 {
		x.MachineIowait = share(b.Iowait - a.Iowait)
	}
	if a.Sampled >= 0 && b.Sampled >= 0 {
		x.MachineOther = share(busy - (b.Sampled - a.Sampled))
	}
	return true
}
