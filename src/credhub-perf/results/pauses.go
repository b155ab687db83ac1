package results

import (
	"cmp"
	"slices"
)

// A target that pauses (a JVM's collection, credhub-sim -pause-every)
// holds every request in flight and every one that arrives during the
// pause, and under open arrivals the backlog then drains at the rate the
// target serves above the arrivals': at 85 % of its capacity a 50 ms pause
// holds about 330 ms of arrivals. Where a pause lands in a short step
// decides which half of it is slower: one pause in a 2.2 s step's first
// half and none in its second moved the halves' medians by far more than
// SteadyBound, and steps that met the SLO under those pauses were judged
// "not steady" and not counted, so the figure to size with fell well
// below what open arrivals hold. A pause is the target's normal
// behaviour, not drift. So an open-loop step's medians are compared over
// the requests no pause held (OpenLoopVerdict): drift is a change of
// what the target does between its pauses. The throughput is compared
// over every request: open arrivals start on their schedule, pause or not.
//
// Which requests a pause held, from the stalls TailCause found (a gap in
// completions ended by requests in flight through it): those in flight
// when it began, those that started during it, and those that started
// after it until the first request as fast as the step's median, where
// the backlog has drained. A step over its capacity never drains, so all
// its requests after its first pause are held and it is not judged; it
// missed or met the SLO on its percentile alone (openinterval.go's
// missed).

// maxStallsKept bounds the stalls a step keeps for its verdict: a step
// with more pauses than that is far from a target's normal behaviour.
const maxStallsKept = 4096

// heldByStalls marks the samples a stall held.
func heldByStalls(samples []startLatency, stalls []stall) []bool {
	held := make([]bool, len(samples))
	if len(stalls) == 0 {
		return held
	}
	lat := make([]float64, len(samples))
	var longest float32
	for i, p := range samples {
		lat[i] = float64(p.latency)
		longest = max(longest, p.latency)
	}
	m := float32(median(lat)) // sorts lat, not samples
	order := make([]int, len(samples))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int { return cmp.Compare(samples[i].start, samples[j].start) })
	for _, st := range stalls {
		from, to := float32(st.from.Seconds()), float32(st.to.Seconds())
		// The first request that can have been in flight when it began.
		k, _ := slices.BinarySearchFunc(order, from-longest, func(i int, t float32) int { return cmp.Compare(samples[i].start, t) })
		for _, i := range order[k:] {
			p := samples[i]
			if p.start >= to && p.latency <= m {
				break // the backlog has drained
			}
			if p.start >= from || p.start+p.latency > from {
				held[i] = true
			}
		}
	}
	return held
}

// keep adds a stall to those the step's verdict leaves out.
func (t *TailCause) keep(s stall) {
	if len(t.all) < maxStallsKept {
		t.all = append(t.all, s)
	}
}
