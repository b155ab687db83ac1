package ramp

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/results"
)

// capacitySearch is one search for the highest concurrency (or rate, open
// loop) that meets the SLO: the values probed lie between first and
// bound; lo is the highest that passed so far, hi the lowest that failed.
type capacitySearch struct {
	s            *scenarioState
	open         bool    // rates (open loop), not concurrencies
	first, bound float64 // the first probe and the highest allowed
	res          float64 // the bisection stops at brackets this narrow
	lo, hi       float64
	result       *results.Capacity
	passTput     map[float64]float64 // throughput of each probe that passed
	// firstLeftOut: the first probe met the SLO but did not count.
	firstLeftOut bool
}

// capacity searches the highest concurrency (or rate) meeting the SLO:
// doubling from the first value until a probe fails or the bound is reached,
// then bisection, within capacity.max_probes probes.
func (s *scenarioState) capacity(ctx context.Context) error {
	cs := s.newCapacitySearch()
	s.sum.Capacity = cs.result
	if err := cs.double(ctx); err != nil {
		return err
	}
	if err := cs.bisect(ctx); err != nil {
		return err
	}
	cs.conclude()
	sort.SliceStable(s.meta.Steps, func(i, j int) bool {
		return s.meta.Steps[i].Concurrency < s.meta.Steps[j].Concurrency || (s.meta.Steps[i].Concurrency == s.meta.Steps[j].Concurrency && s.meta.Steps[i].Rate < s.meta.Steps[j].Rate)
	})
	return nil
}

// newCapacitySearch takes the search's range from steps.*: concurrencies
// from min to max, or rates from the first to the last (no bound with one
// rate), and its resolution from capacity.resolution, else steps.step
// (closed loop) or 2 % of the value (open loop).
func (s *scenarioState) newCapacitySearch() *capacitySearch {
	c := s.r.c
	cs := &capacitySearch{s: s, open: len(c.Steps.Rates) > 0, hi: math.Inf(1), result: &results.Capacity{}, passTput: map[float64]float64{}}
	cs.first, cs.bound = float64(c.Steps.MinConcurrency), float64(c.Steps.MaxConcurrency)
	cs.res = c.Capacity.Resolution
	if cs.open {
		cs.first, cs.bound = c.Steps.Rates[0], math.Inf(1)
		if len(c.Steps.Rates) > 1 {
			cs.bound = c.Steps.Rates[len(c.Steps.Rates)-1]
		}
	}
	if cs.res == 0 {
		cs.res = float64(c.Steps.Step)
		if cs.open {
			cs.res = 0
		}
	}
	return cs
}

// probe runs one step at v and says whether it passed: met the SLO and
// counts (steady, not tester-bound).
func (cs *capacitySearch) probe(ctx context.Context, v float64) (bool, error) {
	s, c := cs.s, cs.s.r.c
	st := load.Step{Concurrency: int(v), Duration: c.Steps.Duration.D()}
	if cs.open {
		st = load.Step{Concurrency: c.Steps.MaxConcurrency, Rate: v, Duration: c.Steps.Duration.D()}
	} else if c.Steps.Duration == 0 {
		st.Requests = c.Steps.Requests
	}
	cs.result.Probes++
	snap, last, err := s.runStep(ctx, cs.result.Probes-1, c.Capacity.MaxProbes, st)
	if err != nil {
		return false, err
	}
	pass := last.MeetsSLO && s.sum.CountsStep(last)
	why := ""
	if last.MeetsSLO && !pass && v == cs.first {
		cs.firstLeftOut = true
	}
	if last.MeetsSLO && !pass {
		why = " but does not count (not steady, not judged steady, or tester-bound; see the warnings)"
	}
	s.r.log.Printf("probe %d: %s %s the SLO (p%g %s, errors %.2f%%)%s", cs.result.Probes, loadLabel(st), map[bool]string{true: "meets", false: "misses"}[last.MeetsSLO], c.SLO.Percentile, fmtMS(snap.Quantile(c.SLO.Percentile/100)), 100*last.ErrorRate, why)
	if pass {
		cs.passTput[v] = last.Throughput
	}
	return pass, nil
}

// double probes first, 2·first, 4·first... up to the bound, until a probe
// fails (hi) or the probes run out.
func (cs *capacitySearch) double(ctx context.Context) error {
	maxProbes := cs.s.r.c.Capacity.MaxProbes
	v := cs.first
	for cs.result.Probes < maxProbes {
		ok, err := cs.probe(ctx, v)
		if err != nil {
			return err
		}
		if !ok {
			cs.hi = v
			return nil
		}
		cs.lo = v
		if v >= cs.bound {
			cs.result.Note = "the upper bound meets the SLO; raise steps.max_concurrency (or the last rate) to search further"
			return nil
		}
		v = math.Min(v*2, cs.bound)
	}
	return nil
}

// bisect narrows the bracket lo..hi a failed probe opened, down to the
// resolution (whole concurrencies, closed loop), within the probes left.
func (cs *capacitySearch) bisect(ctx context.Context) error {
	maxProbes := cs.s.r.c.Capacity.MaxProbes
	for !math.IsInf(cs.hi, 1) && cs.result.Probes < maxProbes {
		width := cs.res
		if cs.open && width == 0 {
			width = math.Max(cs.lo, 1) * 0.02
		}
		if cs.hi-cs.lo <= math.Max(width, 1e-9) || (!cs.open && cs.hi-cs.lo <= 1) {
			return nil
		}
		mid := (cs.lo + cs.hi) / 2
		if !cs.open {
			mid = math.Floor(mid)
		}
		ok, err := cs.probe(ctx, mid)
		if err != nil {
			return err
		}
		if ok {
			cs.lo = mid
		} else {
			cs.hi = mid
		}
	}
	return nil
}

// conclude records the capacity found, or why there is none.
func (cs *capacitySearch) conclude() {
	c, capRes := cs.s.r.c, cs.result
	if cs.lo > 0 {
		capRes.Found = true
		capRes.Throughput = cs.passTput[cs.lo]
		if cs.open {
			capRes.Rate = cs.lo
			capRes.Concurrency = c.Steps.MaxConcurrency
		} else {
			capRes.Concurrency = int(cs.lo)
		}
	} else {
		capRes.Note = fmt.Sprintf("even the first probe (%s) misses the SLO", loadLabelValue(cs.open, cs.first))
		if cs.firstLeftOut {
			capRes.Note = fmt.Sprintf("the first probe (%s) met the SLO but does not count (not steady, not judged steady, or tester-bound; see the warnings)", loadLabelValue(cs.open, cs.first))
		}
	}
	if capRes.Probes >= c.Capacity.MaxProbes && capRes.Note == "" {
		capRes.Note = "stopped at capacity.max_probes; the answer is within the last bracket"
	}
}

func loadLabelValue(open bool, v float64) string {
	if open {
		return fmt.Sprintf("rate %g/s", v)
	}
	return fmt.Sprintf("concurrency %g", v)
}
