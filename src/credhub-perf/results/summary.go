package results

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/credhub-perf/credhub-perf/targetload"
)

// SLO is the latency objective capacity figures are measured against.
type SLO struct {
	Percentile   float64 `json:"percentile"`
	LatencyS     float64 `json:"latency_s"`
	MaxErrorRate float64 `json:"max_error_rate"`
	// LatencyByRequestS: a mix run's own bounds per request type (get,
	// set, interpolate: slo.latency_<type>); a type not listed is held to
	// LatencyS.
	LatencyByRequestS map[string]float64 `json:"latency_by_request_s,omitempty"`
}

// LatencyFor is the latency bound of one request type.
func (s SLO) LatencyFor(request string) float64 {
	if b := s.LatencyByRequestS[request]; b > 0 {
		return b
	}
	return s.LatencyS
}

// SummaryStep holds one step's figures (seconds and requests/s).
type SummaryStep struct {
	Step        int     `json:"step"`
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"rate"`
	Tally
	DurationS  float64 `json:"duration_s"`
	Throughput float64 `json:"throughput"`
	Latencies
	// MeetsSLO: whether the step met the SLO (latency and error rate).
	MeetsSLO bool `json:"meets_slo"`
	// Open loop: how late requests left versus their schedule.
	SchedLagMeanS float64 `json:"sched_lag_mean_s"`
	SchedLagMaxS  float64 `json:"sched_lag_max_s"`
	// Steady: true when judged steady (no drift between the step's
	// halves, see Stationarity), false when judged drifting, null when
	// too short or too small to judge (Stationarity.NotJudged). A
	// drifting step never counts as capacity; an unjudged one only after
	// a run warm-up judged steady (Summary.CountsStep).
	Steady       *bool         `json:"steady"`
	Stationarity *Stationarity `json:"stationarity,omitempty"`
	// Tail: stalls, dials and the cause of the requests over the SLO
	// latency (tailcause.go); absent for a merge of several testers.
	Tail *TailFigures `json:"tail,omitempty"`
	// ByRequest: a mixed run's figures per request type (get, set,
	// interpolate); absent when the step held one type.
	ByRequest map[string]RequestStep `json:"by_request,omitempty"`
	// The testers' own resources: the worst tester's figures, bound if any
	// tester was (the reason then names it); a bound step never counts as
	// capacity.
	TesterUsage
	// TesterBoundAdvice: what to do about a tester-bound step, one item a
	// kind of bound its reason names (testerBoundKinds), so that
	// headroom-plot gives the advice summary.txt gives.
	TesterBoundAdvice []string `json:"tester_bound_advice,omitempty"`
	// Incomplete: with several testers, some tester did not load the step
	// for its whole slot (stopped, crashed, started late, or its results
	// are missing), so its throughput undercounts the load the target
	// carried; IncompleteReason names the testers and why. Such a step
	// never counts as capacity. Absent: complete.
	Incomplete       bool   `json:"incomplete,omitempty"`
	IncompleteReason string `json:"incomplete_reason,omitempty"`
	// Target: the target's resources sampled within the step (package
	// targetload); absent when none was sampled.
	Target *targetload.StepLoad `json:"target,omitempty"`
	// span: when the step ran, to attribute target samples by (not in
	// summary.json).
	span stepSpan
	// rampKey: a merged step's per-tester concurrency and rate, its place
	// in the ramp; zero for a single tester's step, whose own values are.
	rampKey stepKey
	// parts: the files' own steps the step was made of (not in
	// summary.json: a step read back from one has none).
	parts []StepPart
}

// Parts lists the files' own steps the step is made of, when it was
// computed from CSV files (nil for one read from summary.json).
func (st SummaryStep) Parts() []StepPart { return st.parts }

// order is the step's place in increasing load.
func (st *SummaryStep) order() stepKey {
	if st.rampKey != (stepKey{}) {
		return st.rampKey
	}
	return stepKey{st.Concurrency, st.Rate}
}

// Judge records the step's stationarity verdict.
func (st *SummaryStep) Judge(v Stationarity) {
	st.Stationarity = &v
	st.Steady = nil
	if v.Judged {
		b := v.Steady()
		st.Steady = &b
	}
}

// Drifted: judged not steady.
func (st SummaryStep) Drifted() bool { return st.Steady != nil && !*st.Steady }

// Unjudged: steadiness not judged (too short or too few requests).
func (st SummaryStep) Unjudged() bool { return st.Steady == nil }

// AddTester folds one tester's usage during the step into it: figures are
// the worst tester's, and the step is tester-bound if any tester was.
func (st *SummaryStep) AddTester(tester, testers int, m MetaStep) {
	worst := func(dst **float64, v *float64) {
		if v != nil && (*dst == nil || *v > **dst) {
			x := *v
			*dst = &x
		}
	}
	worst(&st.TesterCPU, m.TesterCPU)
	worst(&st.HostCPU, m.HostCPU)
	worst(&st.HostSteal, m.HostSteal)
	worst(&st.TesterWait, m.TesterWait)
	worst(&st.TesterWaitS, m.TesterWaitS)
	st.GCPauseS = math.Max(st.GCPauseS, m.GCPauseS)
	if m.HostBusy != "" {
		why := m.HostBusy
		if testers > 1 {
			why = fmt.Sprintf("tester %d: %s", tester, why)
		}
		if st.HostBusy != "" {
			why = st.HostBusy + "; " + why
		}
		st.HostBusy = why
	}
	if m.TesterBound {
		why := m.TesterBoundReason
		if testers > 1 {
			why = fmt.Sprintf("tester %d: %s", tester, why)
		}
		if st.TesterBound {
			why = st.TesterBoundReason + "; " + why
		}
		st.TesterBound, st.TesterBoundReason = true, why
	}
}

// AddTesterUsage folds the testers' meta.json steps into the steps: merged
// steps by their per-tester concurrency and rate (a tester that missed a
// slot recorded fewer steps), a single tester's by position (steps
// without requests are recorded by none).
func (s *Summary) AddTesterUsage(metas []*Meta) {
	for _, m := range metas {
		if s.addTesterByKey(m, max(m.Testers, len(metas))) {
			continue
		}
		if len(m.Steps) != len(s.Steps) {
			s.Warnings = append(s.Warnings, fmt.Sprintf("tester %d recorded %d steps, the CSV has %d: its CPU figures are left out", m.Tester, len(m.Steps), len(s.Steps)))
			continue
		}
		for i := range s.Steps {
			s.Steps[i].AddTester(m.Tester, max(m.Testers, len(metas)), m.Steps[i])
		}
	}
}

func (s *Summary) addTesterByKey(m *Meta, testers int) bool {
	if len(s.Steps) == 0 || s.Steps[0].rampKey == (stepKey{}) {
		return false
	}
	at := map[stepKey][]int{}
	for i := range s.Steps {
		at[s.Steps[i].rampKey] = append(at[s.Steps[i].rampKey], i)
	}
	left := 0
	for _, ms := range m.Steps {
		// One step per key in a ramp; a key in two slots (testers that did
		// not run one plan) cannot say which.
		if i := at[stepKey{ms.Concurrency, ms.Rate}]; len(i) == 1 {
			s.Steps[i[0]].AddTester(m.Tester, testers, ms)
		} else {
			left++
		}
	}
	if left > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("tester %d: %d of its %d meta.json steps match no one step of the CSVs by concurrency and rate: their CPU figures are left out", m.Tester, left, len(m.Steps)))
	}
	return true
}

// SetByRequest records a mix step's figures per request type: the step
// meets the SLO only when the whole step and every type meet theirs (a
// fast majority of gets must not hide sets beyond their bound).
func (st *SummaryStep) SetByRequest(figs map[string]RequestStep) {
	st.ByRequest = figs
	for _, f := range figs {
		if !f.MeetsSLO {
			st.MeetsSLO = false
		}
	}
}

// sloRatio is how far the step is from its latency bounds: its SLO
// percentile over the SLO's latency, and for a mix the worst of that and
// each type's over its own bound (+Inf when a type is over the error
// bound: no latency makes that step pass). At most 1 when every bound
// holds.
func (st SummaryStep) sloRatio(slo SLO) float64 {
	r := st.SLOPercentileS / slo.LatencyS
	for k, f := range st.ByRequest {
		if f.Requests == 0 || f.ErrorRate > slo.MaxErrorRate {
			return math.Inf(1)
		}
		r = math.Max(r, f.SLOPercentileS/slo.LatencyFor(k))
	}
	return r
}

// Counts says whether the step may count as capacity as far as the step
// itself tells: within the error bound, not judged drifting, not limited
// by the tester, and loaded by every tester for its whole slot. An
// unjudged step also needs a run warm-up judged steady: Summary.CountsStep.
func (st SummaryStep) Counts(slo SLO) bool {
	return st.Requests > 0 && st.ErrorRate <= slo.MaxErrorRate && !st.Drifted() && !st.TesterBound && !st.Incomplete
}

// WarmupSteady: the run warm-up was judged steady (warmup.run auto, three
// agreeing windows). Only then do steps too short to judge count.
func (s *Summary) WarmupSteady() bool {
	return s.Warmup != nil && s.Warmup.Mode == "auto" && s.Warmup.Steady
}

// CountsStep says whether the step counts as capacity: Counts, and when
// its steadiness could not be judged, a run warm-up judged steady.
func (s *Summary) CountsStep(st SummaryStep) bool {
	return st.Counts(s.SLO) && (!st.Unjudged() || s.WarmupSteady())
}

// warmupNote is why unjudged steps do not count: the warm-up's state.
func (s *Summary) warmupNote() string {
	switch {
	case s.Warmup == nil:
		return "no run warm-up recorded"
	case s.Warmup.Mode == "off":
		return "the run warm-up was off"
	case s.Warmup.Mode == "fixed":
		return "the fixed run warm-up was not judged steady"
	default:
		return "the run warm-up was not judged steady"
	}
}

// label names the step's load for warnings.
func (st SummaryStep) label() string {
	if st.Rate > 0 {
		return fmt.Sprintf("rate %g/s", st.Rate)
	}
	return fmt.Sprintf("concurrency %d", st.Concurrency)
}

// Capacity is the answer of a capacity search.
type Capacity struct {
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"rate"`
	Throughput  float64 `json:"throughput"`
	Probes      int     `json:"probes"`
	Found       bool    `json:"found"`
	Note        string  `json:"note,omitempty"`
}

// Summary is summary.json.
type Summary struct {
	Steps []SummaryStep `json:"steps"`
	// Knee is the throughput (requests/s) of the step with the highest
	// "power" (throughput / mean latency, Kleinrock) among steps within the
	// error bound: past it, latency grows faster than throughput.
	Knee            *float64 `json:"knee"`
	KneeConcurrency *int     `json:"knee_concurrency"`
	KneeRate        *float64 `json:"knee_rate"`
	KneeStep        *int     `json:"knee_step"`
	// MaxThroughputAtSLO is the highest throughput meeting the SLO,
	// interpolated linearly between a passing and the next failing step.
	MaxThroughputAtSLO *float64 `json:"max_throughput_at_slo"`
	// CapacityIsLowerBound: some step at a higher load than the step the
	// capacity comes from met the SLO but was not counted (tester-bound,
	// drifting, not judged steady, incomplete), so the capacity is at
	// least MaxThroughputAtSLO; LowerBoundReason says which steps and why.
	CapacityIsLowerBound bool   `json:"capacity_is_lower_bound"`
	LowerBoundReason     string `json:"lower_bound_reason,omitempty"`
	// NoCapacity is NoCapacityReason(), kept so that a reader of
	// summary.json need not run credhub-perf to learn why the run has no
	// capacity; always written ("" with a capacity, or with no step
	// within the SLO), so its absence marks a summary.json written before.
	NoCapacity string `json:"no_capacity_reason"`
	// StepsNotJudged: how many steps were too short or too small to judge
	// steady (`steady` null); NotJudgedReason says why and what to do.
	StepsNotJudged  int    `json:"steps_not_judged"`
	NotJudgedReason string `json:"not_judged_reason,omitempty"`
	// Warmup: meta.json's run warm-up (tester 0's), when the run recorded
	// one; its mode and verdict decide whether unjudged steps count.
	Warmup   *Warmup  `json:"warmup,omitempty"`
	SLO      SLO      `json:"slo"`
	Requests int64    `json:"requests"`
	Errors   int64    `json:"errors"`
	Testers  int      `json:"testers"`
	Sources  []string `json:"sources"`
	// MissingTesters: the testers meta.json's `testers` names that left no
	// results file, checked whenever the directory is one of several
	// testers ([] when every one did); null when not checked (one
	// tester's own summary cannot see the others). Incomplete: some are
	// missing, so every step undercounts the load the target carried and
	// the run gives no capacity figure (knee and max throughput at SLO
	// null); IncompleteReason names them (MissingTestersReason), as every
	// step's incomplete_reason does. headroom-plot takes this verdict from
	// here when summary.json was computed from the directory's files.
	MissingTesters   []int  `json:"missing_testers"`
	Incomplete       bool   `json:"incomplete,omitempty"`
	IncompleteReason string `json:"incomplete_reason,omitempty"`
	StoppedReason    string `json:"stopped_reason"`
	// Stopped says how far a run that did not complete its planned steps
	// got, why, and whether its credentials were removed (StoppedNote);
	// absent when it completed them.
	Stopped  string    `json:"stopped,omitempty"`
	Capacity *Capacity `json:"capacity,omitempty"`
	// OpenLoop: the open-loop confirmation of the ramp's capacity (see
	// openloop.go); absent when the run had none. SizeWith is the
	// capacity (req/s) the operator should size with (sizewith.go has the
	// rule), SizeWithKind its kind (KindClosedLoop, KindOpenLoop; "" when
	// null), and ClosedLoopCapacity the closed-loop ramp's capacity
	// (max_throughput_at_slo; null after an open-loop ramp), so a reader
	// can fit or compare one kind of figure. Headline says it in one
	// sentence ("" without a capacity).
	OpenLoop           *OpenLoop `json:"open_loop,omitempty"`
	SizeWith           *float64  `json:"size_with"`
	SizeWithKind       string    `json:"size_with_kind,omitempty"`
	ClosedLoopCapacity *float64  `json:"closed_loop_capacity"`
	Headline           string    `json:"headline,omitempty"`
	// CapacityLabel: with the run warm-up off, why the capacity may be a
	// cold target's (coldlabel.go); also in Warnings. Absent when the
	// warm-up ran or the steps show the target warm.
	CapacityLabel string `json:"capacity_label,omitempty"`
	// Previous: the comparison with the previous run of the same set-up in
	// the same output directory (previous.go); absent when there is none
	// (and in summaries recomputed from CSV files).
	Previous *PreviousRun `json:"previous,omitempty"`
	// TargetSources: what sampled the target (proc, bosh, credhub-sim);
	// Bottleneck: which resource ended capacity, judged on the counted
	// steps (targetload.JudgeRun), or that nothing was sampled.
	TargetSources []string            `json:"target_sources,omitempty"`
	Bottleneck    *targetload.Verdict `json:"bottleneck,omitempty"`
	// TargetProblems: the first problems each target source reported
	// ("bosh: the director did not answer ..."), from meta.json's
	// target_load; they say why a run has no target figures.
	TargetProblems []string `json:"target_problems,omitempty"`
	Warnings       []string `json:"warnings,omitempty"`
	// StepWarnings flag steps whose figures describe the tester more than
	// the target (an open-loop schedule the tester could not keep).
	StepWarnings []string `json:"step_warnings,omitempty"`
	// Workload: the production workload the run replayed (meta.json's),
	// with the types it could not send; absent for a run without one.
	Workload *Workload `json:"workload,omitempty"`
	// mergeWarnings: the testers whose rows in one slot say different
	// steps (also in Warnings), when computed from CSV files.
	mergeWarnings []string
}

// MergeWarnings are the warnings of the several testers' merge: testers
// whose rows in one slot say different steps (they are in Warnings too).
func (s *Summary) MergeWarnings() []string { return s.mergeWarnings }

func secs(d time.Duration) float64 { return math.Round(d.Seconds()*1e6) / 1e6 }

// NewSummaryStep turns a step's statistics into its summary line.
func NewSummaryStep(index, concurrency int, rate float64, s Snapshot, slo SLO) SummaryStep {
	st := SummaryStep{
		Step: index, Concurrency: concurrency, Rate: rate,
		DurationS: secs(s.Duration), Throughput: round3(s.Throughput),
		SchedLagMeanS: secs(s.SchedLagMean), SchedLagMaxS: secs(s.SchedLagMax),
	}
	st.Tally, st.Latencies, st.MeetsSLO = figures(s, slo, slo.LatencyS)
	return st
}

// Finish fills the run-wide figures (totals, knee, max throughput at SLO)
// from Steps.
func (s *Summary) Finish() {
	// Capacity searches probe out of order; every figure below reads the
	// steps in increasing load.
	// A merged step sorts by its per-tester values: one some tester was
	// absent from has a smaller sum than the ramp's steps around it.
	mixed := s.hasConfirmation()
	sort.SliceStable(s.Steps, func(i, j int) bool {
		a, b := s.Steps[i].order(), s.Steps[j].order()
		// An open-loop confirmation's steps follow the ramp's.
		if oa, ob := mixed && a.rate > 0, mixed && b.rate > 0; oa != ob {
			return ob
		}
		if a.concurrency != b.concurrency {
			return a.concurrency < b.concurrency
		}
		return a.rate < b.rate
	})
	// Steps are numbered from 1, as every human-facing text counts them.
	for i := range s.Steps {
		s.Steps[i].Step = i + 1
	}
	s.Requests, s.Errors = 0, 0
	s.clearHeldTesterBounds()
	s.stepWarnings()
	s.StepsNotJudged, s.NotJudgedReason = s.notJudged()
	// The ramp's figures come from the ramp's steps alone; a confirmation's
	// steps have figures of their own (finishOpenLoop).
	all := s.Steps
	s.Steps = all[:s.rampSteps()]
	s.totalsAndKnee()
	s.lowerBound(s.maxThroughput(), len(all))
	// The bottleneck is judged on the steps the capacity comes from.
	s.judgeBottleneck()
	s.Steps = all
	s.finishOpenLoop()
	if s.Incomplete {
		// Every step is flagged already; this holds even for a step a
		// hand-edited summary.json lists as complete.
		s.Knee, s.KneeConcurrency, s.KneeRate, s.KneeStep, s.MaxThroughputAtSLO = nil, nil, nil, nil, nil
		s.SizeWith, s.SizeWithKind, s.ClosedLoopCapacity = nil, "", nil
	}
	s.NoCapacity = s.NoCapacityReason()
	s.setColdLabel()
	s.Headline = s.headline()
}

// lowerBound sets CapacityIsLowerBound and LowerBoundReason from the
// steps above bestStep (the counted step within the SLO of the most
// throughput) that met the SLO but do not count; total is the run's step
// count, for the reason's wording.
func (s *Summary) lowerBound(bestStep, total int) {
	s.CapacityIsLowerBound, s.LowerBoundReason = false, ""
	if s.MaxThroughputAtSLO == nil || s.Incomplete {
		return
	}
	var above []SummaryStep
	for _, st := range s.Steps[bestStep+1:] {
		if st.Requests > 0 && st.MeetsSLO && !s.CountsStep(st) {
			above = append(above, st)
		}
	}
	if len(above) > 0 {
		s.CapacityIsLowerBound = true
		s.LowerBoundReason = s.leftOutReason(above, total, false)
	}
}

// stepWarnings sets StepWarnings, and each tester-bound step's advice,
// from the steps.
func (s *Summary) stepWarnings() {
	s.StepWarnings = nil
	for i := range s.Steps {
		st := &s.Steps[i]
		if st.Requests > 0 && st.Drifted() {
			s.StepWarnings = append(s.StepWarnings, notSteadyWarning(*st))
		}
		st.TesterBoundAdvice = nil
		if st.TesterBound {
			st.TesterBoundAdvice = TesterBoundAdvice(st.TesterBoundReason)
			s.StepWarnings = append(s.StepWarnings, fmt.Sprintf("%s at step %d (%s): %s; the step measured the tester, not CredHub, and is not counted as capacity", st.TesterBoundReason, st.Step, st.label(), strings.Join(st.TesterBoundAdvice, "; ")))
		}
		if st.HostBusy != "" && !st.TesterBound {
			// Reported so a reader knows the host was busy, but the
			// tester's own wait says it was not held back by it.
			s.StepWarnings = append(s.StepWarnings, fmt.Sprintf("step %d (%s): %s", st.Step, st.label(), st.HostBusy))
		}
		if st.Incomplete {
			s.StepWarnings = append(s.StepWarnings, fmt.Sprintf("step %d (%s) is incomplete: %s; its throughput undercounts the load the target carried, and it is not counted as capacity", st.Step, st.label(), st.IncompleteReason))
		}
		if st.Rate <= 0 || st.Requests == 0 {
			continue
		}
		if late := LateSchedule(st.SchedLagMeanS, st.SchedLagMaxS, st.MeanS, "steps.max_concurrency"); late != "" {
			s.StepWarnings = append(s.StepWarnings, fmt.Sprintf("step %d (rate %g/s): %s", st.Step, st.Rate, late))
		}
	}
}

// totalsAndKnee sets the totals and the knee: the counted step of the most
// throughput per mean latency (power).
func (s *Summary) totalsAndKnee() {
	s.Knee, s.KneeConcurrency, s.KneeRate, s.KneeStep, s.MaxThroughputAtSLO = nil, nil, nil, nil, nil
	bestPower := 0.0
	for i := range s.Steps {
		st := &s.Steps[i]
		s.Requests += st.Requests
		s.Errors += st.Errors
		if !s.CountsStep(*st) || st.MeanS <= 0 {
			continue
		}
		if p := st.Throughput / st.MeanS; p > bestPower {
			bestPower = p
			t, c, r, k := st.Throughput, st.Concurrency, st.Rate, st.Step
			s.Knee, s.KneeConcurrency, s.KneeRate, s.KneeStep = &t, &c, &r, &k
		}
	}
}

// maxThroughput sets MaxThroughputAtSLO, interpolated between a counted
// step within the SLO and the next one over it, and returns the index of
// the counted step within the SLO of the most throughput (-1: none).
func (s *Summary) maxThroughput() int {
	// A mix interpolates on the worst ratio of a latency to its bound
	// (sloRatio), whichever type it is, so the crossing is where the first
	// type reaches its bound; a single-type run on its percentile, as ever.
	mix := false
	for _, st := range s.Steps {
		mix = mix || st.ByRequest != nil
	}
	lat, bound := func(st SummaryStep) float64 { return st.SLOPercentileS }, s.SLO.LatencyS
	if mix {
		lat, bound = func(st SummaryStep) float64 { return st.sloRatio(s.SLO) }, 1
	}
	best, bestStep := math.Inf(-1), -1
	for i := range s.Steps {
		st := s.Steps[i]
		if !st.MeetsSLO || !s.CountsStep(st) {
			continue
		}
		if st.Throughput >= best {
			bestStep = i
		}
		best = math.Max(best, st.Throughput)
		if i+1 < len(s.Steps) {
			nx := s.Steps[i+1]
			a, b := lat(st), lat(nx)
			if !nx.MeetsSLO && s.CountsStep(nx) &&
				nx.Throughput > st.Throughput && b > a && !math.IsInf(b, 1) {
				f := (bound - a) / (b - a)
				best = math.Max(best, st.Throughput+f*(nx.Throughput-st.Throughput))
			}
		}
	}
	if !math.IsInf(best, -1) {
		b := round3(best)
		s.MaxThroughputAtSLO = &b
	}
	return bestStep
}

// notJudged counts the steps whose steadiness was not judged and says why
// and what to do ("steps of 1.5 s are too short to judge ...").
func (s *Summary) notJudged() (int, string) {
	var n, short int
	longest := 0.0
	for _, st := range s.Steps {
		if st.Requests == 0 || !st.Unjudged() {
			continue
		}
		n++
		if st.Stationarity != nil && st.Stationarity.NotJudged == NotJudgedShort {
			short++
			longest = math.Max(longest, st.DurationS)
		}
	}
	if n == 0 {
		return 0, ""
	}
	return n, NotJudgedText(n, len(s.Steps), short, longest)
}

// NotJudgedText says why n of total steps could not be judged steady, short
// of them too short (the longest of those lasting longest s), the rest
// with too few requests. headroom-plot's not_judged_text says the same.
func NotJudgedText(n, total, short int, longest float64) string {
	var why []string
	if short > 0 {
		why = append(why, fmt.Sprintf("steps of %.3g s are too short to judge (their requests must start over at least %g s): use steps.duration of %g s or more", longest, SteadyMinSpanS, SteadyMinSpanS+1))
	}
	if n > short {
		why = append(why, fmt.Sprintf("%d had too few requests to judge (at least %d in each half)", n-short, SteadyMinHalf))
	}
	return fmt.Sprintf("%d of %d steps could not be judged steady: %s", n, total, strings.Join(why, "; "))
}

// leftOutReason says why steps that met the SLO were not counted:
// "2 tester-bound (...): ...; 1 not judged steady (...)". long adds the
// advice for drifting and incomplete steps (the no-capacity sentence).
func (s *Summary) leftOutReason(steps []SummaryStep, total int, long bool) string {
	var bound []SummaryStep
	var unsteady, unjudged, incomplete int
	for _, st := range steps {
		switch {
		case st.TesterBound:
			bound = append(bound, st)
		case st.Drifted():
			unsteady++
		case st.Incomplete:
			incomplete++
		case st.Unjudged():
			unjudged++
		}
	}
	var why []string
	if len(bound) > 0 {
		why = append(why, fmt.Sprintf("%d tester-bound (%s): %s", len(bound), boundKinds(bound), boundAdvice(bound)))
	}
	if unsteady > 0 {
		w := fmt.Sprintf("%d not steady", unsteady)
		if long {
			w += ": the target was warming up or changing under the load (see warmup.run)"
		}
		why = append(why, w)
	}
	if incomplete > 0 {
		w := fmt.Sprintf("%d incomplete", incomplete)
		if long {
			w += ": some tester did not load them for their whole slot (see the step warnings)"
		}
		why = append(why, w)
	}
	if unjudged > 0 {
		why = append(why, fmt.Sprintf("%d too short to judge steady, and %s", unjudged, s.warmupNote()))
	}
	return strings.Join(why, "; ")
}

// CapacityText is the headline capacity: "812.3 req/s", or "at least
// 812.3 req/s (steps up to 1020.0 req/s within the SLO were not counted:
// 2 tester-bound ...)"; "" when there is no capacity.
func (s *Summary) CapacityText() string {
	if s.MaxThroughputAtSLO == nil {
		return ""
	}
	if !s.CapacityIsLowerBound {
		return fmt.Sprintf("%.1f req/s", *s.MaxThroughputAtSLO)
	}
	top := 0.0
	for _, st := range s.Steps {
		if st.Requests > 0 && st.MeetsSLO && !s.CountsStep(st) {
			top = math.Max(top, st.Throughput)
		}
	}
	return fmt.Sprintf("at least %.1f req/s (steps up to %.1f req/s within the SLO were not counted: %s)", *s.MaxThroughputAtSLO, top, s.LowerBoundReason)
}

// WarmupHeadline is the warm-up's line in the headline: off, or ended
// before the target was steady; "" otherwise (or when none is recorded).
func (s *Summary) WarmupHeadline() string {
	return WarmupHeadline(s.Warmup)
}

// WarmupHeadline says a run warm-up that was off or not judged steady;
// "" for a steady auto or a fixed warm-up, and for none recorded.
// headroom-plot's warmup_headline says the same.
func WarmupHeadline(w *Warmup) string {
	switch {
	case w == nil:
		return ""
	case w.Mode == "off":
		return "warm-up off: the first steps may measure a cold JVM"
	case w.Mode == "auto" && !w.Steady:
		return fmt.Sprintf("warm-up not steady (%s): the first steps may measure a JVM still warming up", w.Reason)
	}
	return ""
}

// testerBoundKinds are the figures that make a step tester-bound (the
// start of each cpuload.Usage.Bound reason) and what to do about each, in
// the order advice is given. A tester short of CPU needs more or bigger
// testers, but a busy host is other work beside the tester (on a laptop,
// other programs or a target that runs on the same machine), which a
// bigger tester does not cure. headroom-plot takes the advice from
// summary.json's tester_bound_advice, or from summary --json for runs
// written without it: this table is the only copy.
var testerBoundKinds = []struct{ kind, advice string }{
	{"tester CPU", "add testers or use a bigger VM"},
	{"host CPU", "other work kept the tester's CPUs busy: run on a quiet machine (a target on the same machine counts too: lower the load, or move the target or the tester to another host)"},
	{"CPU steal", "the hypervisor gave the tester's CPUs to other guests: use a VM with dedicated CPUs, or run again later"},
}

// TesterBoundAdvice is what to do about a tester_bound_reason (a
// cpuload.Usage.Bound reason), one item a kind of bound it names (a merged
// step's may name several); a reason naming none gets the tester's advice.
// hey gives the same advice under its tester-bound warning.
func TesterBoundAdvice(reason string) []string {
	var do []string
	for _, k := range testerBoundKinds {
		if strings.Contains(reason, k.kind) {
			do = append(do, k.advice)
		}
	}
	if len(do) == 0 {
		return []string{testerBoundKinds[0].advice}
	}
	return do
}

// LateSchedule says how far an open-loop schedule fell behind, from the
// mean and largest sched-lag and the mean latency (seconds), or "" when it
// was kept. A schedule kept within a few ms is fine; a tester that falls
// behind by more than 10 % of the mean latency (and 5 ms) measures its own
// queue. Its latencies still count the lag, so they stay honest, but the
// load did not offer the rate it names. workerCap names the setting that
// caps the requests in flight (steps.max_concurrency, hey's -c), the other
// cause of lag. summary.json's step warnings and hey's summary both judge
// with it.
func LateSchedule(lagMeanS, lagMaxS, meanS float64, workerCap string) string {
	if lagMeanS > 0.005 && lagMeanS > 0.1*meanS {
		return fmt.Sprintf("requests left %.1f ms late on average (max %.1f ms): the tester or its worker cap (%s) could not keep the schedule", lagMeanS*1000, lagMaxS*1000, workerCap)
	}
	return ""
}

// boundAdvice is what to do about several tester-bound steps: their
// advice, each item once, in the steps' order.
func boundAdvice(steps []SummaryStep) string {
	var do []string
	seen := map[string]bool{}
	for _, st := range steps {
		for _, a := range TesterBoundAdvice(st.TesterBoundReason) {
			if !seen[a] {
				seen[a] = true
				do = append(do, a)
			}
		}
	}
	return strings.Join(do, "; ")
}

// boundKinds names the kinds of bound among tester-bound steps, with the
// range of the figure where summary.json has it ("tester CPU 93 %", "host
// CPU 97-100 % busy"), in testerBoundKinds' order.
func boundKinds(steps []SummaryStep) string {
	var kinds []string
	for _, k := range testerBoundKinds {
		lo, hi, hit := math.Inf(1), math.Inf(-1), false
		for _, st := range steps {
			if !strings.Contains(st.TesterBoundReason, k.kind) {
				continue
			}
			hit = true
			var fig *float64
			switch k.kind {
			case "tester CPU":
				fig = st.TesterCPU
			case "host CPU":
				fig = st.HostCPU
			}
			if fig != nil {
				lo, hi = math.Min(lo, *fig), math.Max(hi, *fig)
			}
		}
		if !hit {
			continue
		}
		name := k.kind
		if !math.IsInf(lo, 1) {
			l, h := fmt.Sprintf("%.0f", 100*lo), fmt.Sprintf("%.0f", 100*hi)
			if l == h {
				name += " " + l + " %"
			} else {
				name += " " + l + "-" + h + " %"
			}
		}
		if k.kind == "host CPU" {
			name += " busy"
		}
		kinds = append(kinds, name)
	}
	if len(kinds) == 0 {
		return "no reason recorded"
	}
	return strings.Join(kinds, ", ")
}

// NoCapacityReason explains a run without a capacity at the SLO in which
// some step met the SLO but did not count (tester-bound, not steady or
// incomplete):
// the capacity is unknown, not absent. "" otherwise. headroom-plot shows
// it (summary --json's no_capacity_reason, at headroom-plot's SLO).
//
// An incomplete run (testers missing) has no capacity whatever its steps
// did: "unknown: incomplete run: <incomplete_reason>".
func (s *Summary) NoCapacityReason() string {
	if s.Incomplete {
		return "unknown: incomplete run: " + s.IncompleteReason
	}
	if s.MaxThroughputAtSLO != nil {
		return ""
	}
	var met []SummaryStep
	for _, st := range s.Steps {
		if !st.MeetsSLO || s.CountsStep(st) {
			continue
		}
		met = append(met, st)
	}
	if len(met) == 0 {
		return ""
	}
	return fmt.Sprintf("unknown: %d of %d steps met the SLO but none counts: %s", len(met), len(s.Steps), s.leftOutReason(met, len(s.Steps), true))
}

func notSteadyWarning(st SummaryStep) string {
	v := st.Stationarity
	if v == nil {
		return fmt.Sprintf("step %d (%s): not steady; not counted as capacity", st.Step, st.label())
	}
	var what []string
	if v.P50Drift {
		what = append(what, fmt.Sprintf("p50 %s -> %s ms (%+.0f %%)", ms(v.FirstP50S), ms(v.SecondP50S), 100*v.P50Change))
	}
	if v.ThroughputDrift {
		what = append(what, fmt.Sprintf("throughput %.1f -> %.1f req/s (%+.0f %%)", v.FirstThroughput, v.SecondThroughput, 100*v.ThroughputChange))
	}
	return fmt.Sprintf("step %d (%s): not steady, %s from the step's first half to its second: the target was still warming up or changing under the load (see warmup.run); not counted as capacity", st.Step, st.label(), strings.Join(what, ", "))
}

// WriteFiles writes summary.json and summary.txt into dir.
func (s *Summary) WriteFiles(dir string) error { return s.WriteFilesAs(dir, "summary") }

// WriteFilesAs writes <base>.json and <base>.txt into dir.
func (s *Summary) WriteFilesAs(dir, base string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(filepath.Join(dir, base+".json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	var sb strings.Builder
	s.WriteTable(&sb)
	return WriteFileAtomic(filepath.Join(dir, base+".txt"), []byte(sb.String()), 0o644)
}

// ReadSummary reads a summary.json.
func ReadSummary(path string) (*Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

func ms(s float64) string { return fmt.Sprintf("%.2f", s*1000) }

// WriteTable writes the summary as a table for people.
func (s *Summary) WriteTable(w io.Writer) {
	s.writeSteps(w)
	s.writeVerdicts(w)
}

// writeSteps writes the table of steps (a mix step's types under it).
func (s *Summary) writeSteps(w io.Writer) {
	open := false
	for _, st := range s.Steps {
		if st.Rate > 0 {
			open = true
		}
	}
	load := "conc"
	if open {
		load = "rate"
	}
	mixed := s.hasConfirmation()
	if mixed {
		// A ramp and its open-loop confirmation: concurrencies, then rates.
		load = "load"
	}
	fmt.Fprintf(w, "%4s %7s %9s %7s %7s %8s %10s %9s %9s %9s %9s %9s %9s %4s %s\n",
		"step", load, "requests", "errors", "err%", "dur(s)", "req/s", "mean(ms)", "p50(ms)", "p90(ms)", "p95(ms)", "p99(ms)", "max(ms)", "slo", "flags")
	for _, st := range s.Steps {
		l := fmt.Sprintf("%d", st.Concurrency)
		if mixed && st.Rate > 0 {
			l = fmt.Sprintf("%.4g/s", st.Rate)
		} else if open && !mixed {
			l = fmt.Sprintf("%g", st.Rate)
		}
		ok := "no"
		if st.MeetsSLO {
			ok = "yes"
		}
		var flags []string
		if st.Requests > 0 && st.Drifted() {
			flags = append(flags, "unsteady")
		} else if st.Requests > 0 && st.Unjudged() {
			flags = append(flags, "not-judged")
		}
		if st.TesterBound {
			flags = append(flags, "tester-bound")
		}
		if st.Incomplete {
			flags = append(flags, "incomplete")
		}
		fmt.Fprintf(w, "%4d %7s %9d %7d %7.2f %8.2f %10.1f %9s %9s %9s %9s %9s %9s %4s %s\n",
			st.Step, l, st.Requests, st.Errors, st.ErrorRate*100, st.DurationS, st.Throughput,
			ms(st.MeanS), ms(st.P50S), ms(st.P90S), ms(st.P95S), ms(st.P99S), ms(st.MaxS), ok, strings.Join(flags, ","))
		// A mix step's types, one line each under the step (slo: the
		// type's own bound).
		for _, k := range sortedTypes(st.ByRequest) {
			f := st.ByRequest[k]
			ok := "no"
			if f.MeetsSLO {
				ok = "yes"
			}
			fmt.Fprintf(w, "%12s %9d %7d %7.2f %8s %10.1f %9s %9s %9s %9s %9s %9s %4s\n",
				k, f.Requests, f.Errors, f.ErrorRate*100, "", f.Throughput,
				ms(f.MeanS), ms(f.P50S), ms(f.P90S), ms(f.P95S), ms(f.P99S), ms(f.MaxS), ok)
		}
	}
}

// writeVerdicts writes the lines under the table: totals, SLO, capacity,
// knee, steadiness, why the run stopped and the warnings.
func (s *Summary) writeVerdicts(w io.Writer) {
	fmt.Fprintf(w, "total: %d requests, %d errors", s.Requests, s.Errors)
	if s.Testers > 1 {
		fmt.Fprintf(w, ", %d testers", s.Testers)
	}
	fmt.Fprintln(w)
	if s.Incomplete {
		fmt.Fprintf(w, "INCOMPLETE RUN: %s; every step is incomplete and the run gives no capacity\n", s.IncompleteReason)
	}
	fmt.Fprintf(w, "SLO: p%g <= %s ms, error rate <= %g %%\n", s.SLO.Percentile, ms(s.SLO.LatencyS), s.SLO.MaxErrorRate*100)
	s.Workload.WriteNote(w)
	if mix := s.requestTypes(); len(mix) > 0 {
		var b []string
		for _, k := range mix {
			b = append(b, fmt.Sprintf("%s <= %s ms", k, ms(s.SLO.LatencyFor(k))))
		}
		fmt.Fprintf(w, "SLO per request type (p%g): %s; a step meets the SLO only when every type does\n", s.SLO.Percentile, strings.Join(b, ", "))
	}
	if h := s.WarmupHeadline(); h != "" {
		fmt.Fprintln(w, h)
	}
	if s.MaxThroughputAtSLO != nil {
		label := ""
		if s.CapacityLabel != "" {
			label = " [warm-up off: may be a cold target's]"
		}
		fmt.Fprintf(w, "max throughput at SLO: %s%s\n", s.CapacityText(), label)
		if s.OpenLoop != nil || s.CapacityLabel != "" {
			fmt.Fprintln(w, s.Headline)
		}
	} else if why := s.NoCapacityReason(); why != "" {
		fmt.Fprintf(w, "max throughput at SLO: %s\n", why)
	} else {
		fmt.Fprintln(w, "max throughput at SLO: not reached (no step met the SLO)")
	}
	if s.Knee != nil {
		at := fmt.Sprintf("concurrency %d", *s.KneeConcurrency)
		if s.KneeRate != nil && *s.KneeRate > 0 {
			at = fmt.Sprintf("rate %g req/s", *s.KneeRate)
		} else if *s.KneeConcurrency == 0 && s.KneeStep != nil {
			at = fmt.Sprintf("step %d", *s.KneeStep) // a format without a concurrency column
		}
		fmt.Fprintf(w, "knee: %.1f req/s (at %s)\n", *s.Knee, at)
	} else if s.Incomplete {
		fmt.Fprintln(w, "knee: none (incomplete run)")
	} else {
		fmt.Fprintf(w, "knee: none (%s)\n", s.noKneeReason())
	}
	if s.Capacity != nil {
		if s.Capacity.Found {
			at := fmt.Sprintf("concurrency %d", s.Capacity.Concurrency)
			if s.Capacity.Rate > 0 {
				at = fmt.Sprintf("rate %g req/s", s.Capacity.Rate)
			}
			if s.Incomplete {
				fmt.Fprintf(w, "capacity: unknown: incomplete run (the search found %s at %.1f req/s without the missing testers' load)\n", at, s.Capacity.Throughput)
			} else {
				floor := ""
				if s.CapacityIsLowerBound {
					floor = "; a lower bound: higher probes within the SLO were not counted (see max throughput at SLO)"
				}
				fmt.Fprintf(w, "capacity: %s meets the SLO at %.1f req/s (%d probes)%s\n", at, s.Capacity.Throughput, s.Capacity.Probes, floor)
			}
		} else {
			fmt.Fprintf(w, "capacity: not found (%d probes)\n", s.Capacity.Probes)
		}
		if s.Capacity.Note != "" {
			fmt.Fprintf(w, "capacity note: %s\n", s.Capacity.Note)
		}
	}
	if p := s.Previous; p != nil && p.Warning == "" {
		fmt.Fprintf(w, "previous run of this set-up: %s; no large difference (capacity within %.0f %%, medians within %.0f %%)\n", p.Dir, 100*PreviousCapacityChange, 100*PreviousMedianChange)
	}
	if s.NotJudgedReason != "" {
		note := "they count as capacity: the run warm-up was judged steady"
		if !s.WarmupSteady() {
			note = "they are not counted as capacity: " + s.warmupNote()
		}
		fmt.Fprintf(w, "steadiness: %s; %s\n", s.NotJudgedReason, note)
	}
	s.writeTarget(w)
	if s.Stopped != "" {
		fmt.Fprintln(w, s.Stopped)
	} else if s.StoppedReason != "" {
		fmt.Fprintf(w, "stopped: %s\n", s.StoppedReason)
	}
	for _, warn := range append(append([]string(nil), s.Warnings...), s.StepWarnings...) {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

// WriteFileAtomic replaces path (mode perm) so a reader never sees half a
// file. On any failure (a full disk included) the temporary file is
// removed, so a directory never keeps one.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, perm); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// requestTypes lists the request types of a mix run's steps, sorted; none
// for a single-type run.
func (s *Summary) requestTypes() []string {
	seen := map[string]RequestStep{}
	for _, st := range s.Steps {
		for k, f := range st.ByRequest {
			seen[k] = f
		}
	}
	return sortedTypes(seen)
}

func sortedTypes(m map[string]RequestStep) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
