package targetload

// The run's verdict: what ended capacity, over the steps that count as
// capacity; and, when none counts, what the target side showed anyway.
// "Add testers" is the advice only when the tester itself ran out of
// CPU: a tester-bound step caused by steal or by other work on the
// tester's machine needs a quieter or dedicated machine, not more
// testers.

import (
	"fmt"
	"math"
	"strings"
)

// StepInput is what JudgeRun needs of a step.
type StepInput struct {
	Step        int
	Load        *StepLoad
	Counts      bool // counts as capacity (Summary.CountsStep) and met the SLO
	TesterBound bool
	// TesterReason: why it was tester-bound (cpuload.Verdict.Reason, its
	// kind first: "tester CPU ...", "host CPU ...", "CPU steal ...").
	TesterReason string
	// TesterSteal: the share of the tester's CPUs stolen; nil unknown.
	TesterSteal *float64
}

// Verdict is the run's answer to "what ended capacity".
type Verdict struct {
	// Resource: credhub, database, another sampled resource, "shared"
	// (resources sharing CPUs or a VM), "other work" (a neighbour on the
	// target's CPUs), "steal" (the target's hypervisor), "elsewhere"
	// (nothing sampled was busy), "tester" (its own CPU), "tester host"
	// (other work on the tester's machine), "tester steal", or "" when
	// not judged.
	Resource string `json:"resource"`
	// Machine: the machine named, for shared, other work and steal.
	Machine string `json:"machine,omitempty"`
	// CPU and Step: the named resource's (or machine's busy and stolen)
	// share at the counted step where it was busiest.
	CPU           *float64 `json:"cpu,omitempty"`
	Step          int      `json:"step,omitempty"`
	Verdict       string   `json:"verdict"`
	BusyThreshold float64  `json:"busy_threshold"`
}

// NotConfigured is the verdict of a run without a target source.
func NotConfigured() *Verdict {
	return &Verdict{BusyThreshold: Busy, Verdict: "not measured: no target source configured (target_load.processes, target_load.credhub_sim or target_load.bosh_deployment)"}
}

// JudgeRun names the run's bottleneck from the steps that count as
// capacity. A machine past Busy that resources share, or that other
// work or steal took part of, comes first; then the busiest resource at
// or past Busy. When none reaches it the limit is outside what was
// sampled, unless a step was tester-bound, which names the tester's
// cause. Steal on the target or the tester is named whatever the verdict.
func JudgeRun(steps []StepInput) *Verdict {
	v := &Verdict{BusyThreshold: Busy}
	sampled, counted := false, 0
	var best *ResourceLoad
	var bestF *finding
	bestStep, fStep := 0, 0
	for _, st := range steps {
		if st.Load == nil {
			continue
		}
		sampled = true
		if !st.Counts {
			continue
		}
		counted++
		for i := range st.Load.Resources {
			r := st.Load.Resources[i]
			if r.CPU != nil && (best == nil || *r.CPU > *best.CPU) {
				best, bestStep = &r, st.Step
			}
		}
		if f := stepFinding(st.Load); f != nil && (bestF == nil || f.load > bestF.load) {
			bestF, fStep = f, st.Step
		}
	}
	bound := firstBound(steps)
	switch {
	case !sampled:
		v.Verdict = "not measured: no target sample fell within any step"
	case bestF != nil:
		v.Resource, v.Machine, v.CPU, v.Step, v.Verdict = bestF.kind, bestF.machine, ptr(round4(bestF.load)), fStep, bestF.text
	case best != nil && *best.CPU >= Busy:
		v.Resource, v.CPU, v.Step = best.Resource, best.CPU, bestStep
		v.Verdict = cpuText(*best)
	case bound != nil:
		testerVerdict(v, *bound, best == nil)
		v.Verdict += targetShowed(steps)
	case counted == 0:
		v.Verdict = "not judged: no sampled step counts as capacity (see why in the summary)" + targetShowed(steps)
	case best == nil:
		v.Verdict = "not judged: no step that counts as capacity has a CPU figure"
	default:
		v.Resource, v.CPU, v.Step = "elsewhere", best.CPU, bestStep
		v.Verdict = fmt.Sprintf("no measured resource above %s: the limit is elsewhere (connection pool, locks, network); busiest %s", pct(Busy), cpuText(*best))
	}
	v.Verdict += stealNotes(steps, v.Resource, v.Machine != "")
	return v
}

func firstBound(steps []StepInput) *StepInput {
	for i := range steps {
		if steps[i].TesterBound {
			return &steps[i]
		}
	}
	return nil
}

// testerVerdict names the tester's cause of a tester-bound step: its own
// CPU (add testers), steal on its VM, or other work on its machine.
func testerVerdict(v *Verdict, st StepInput, noneCounted bool) {
	why := fmt.Sprintf("step %d was tester-bound", st.Step)
	if noneCounted {
		why = fmt.Sprintf("no step counts as capacity, the first tester-bound was step %d", st.Step)
	}
	if st.TesterReason != "" {
		why += " (" + clip(st.TesterReason, 200) + ")"
	}
	if !noneCounted {
		why += fmt.Sprintf(" and no measured target resource reached %s CPU in the counted steps", pct(Busy))
	}
	v.Step = st.Step
	r := st.TesterReason
	switch {
	case r == "" || strings.Contains(r, "tester CPU"):
		v.Resource, v.Verdict = "tester", "the tester: "+why+"; add testers or use a bigger VM"
	case strings.Contains(r, "CPU steal") && !strings.Contains(r, "host CPU"):
		v.Resource, v.Verdict = "tester steal", "the tester's hypervisor: "+why+"; it gave the tester's CPUs to other guests: use a VM with dedicated CPUs, not more testers"
	default:
		v.Resource, v.Verdict = "tester host", "other work on the tester's machine: "+why+"; run the tester on a quiet machine (a target on the same machine counts too), not more testers"
	}
}

// targetShowed says what the target side showed from the first step a
// machine or resource on it was busy past Busy: "; the target's CPU 1
// was 97-100 % busy from step 1". "" when nothing was.
func targetShowed(steps []StepInput) string {
	first, what := 0, ""
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, st := range steps {
		if st.Load == nil {
			continue
		}
		for _, m := range st.Load.Machines {
			if l := m.load(); !math.IsNaN(l) && (first == 0 && l >= Busy || first > 0 && what == m.what()) {
				if first == 0 {
					first, what = st.Step, m.what()
				}
				lo, hi = math.Min(lo, l), math.Max(hi, l)
			}
		}
	}
	if first == 0 {
		return resourceShowed(steps)
	}
	span := pct(hi)
	if pct(lo) != pct(hi) {
		span = fmt.Sprintf("%.0f-%s", 100*lo, pct(hi))
	}
	verb := "was"
	if strings.HasPrefix(what, "CPUs ") {
		verb = "were"
	}
	return fmt.Sprintf("; on the target, %s %s %s busy from step %d", what, verb, span, first)
}

// resourceShowed: the first step a resource was busy past Busy.
func resourceShowed(steps []StepInput) string {
	for _, st := range steps {
		if st.Load == nil {
			continue
		}
		for _, r := range st.Load.Resources {
			if r.CPU != nil && *r.CPU >= Busy {
				return fmt.Sprintf("; on the target, %s at %s CPU from step %d", r.Label, pct(*r.CPU), st.Step)
			}
		}
	}
	return ""
}

// stealNotes names steal on the target's machines and on the tester, the
// most over the sampled steps, unless the verdict names it already.
func stealNotes(steps []StepInput, named string, machineNamed bool) string {
	var target, tester float64
	ts, tt, what := 0, 0, ""
	for _, st := range steps {
		if st.Load != nil {
			for _, m := range st.Load.Machines {
				if m.Steal != nil && *m.Steal > target {
					target, ts, what = *m.Steal, st.Step, m.what()
				}
			}
		}
		if st.TesterSteal != nil && *st.TesterSteal > tester {
			tester, tt = *st.TesterSteal, st.Step
		}
	}
	out := ""
	if target >= Steal && named != "steal" && !machineNamed {
		out += fmt.Sprintf("; the target's hypervisor stole %s of %s (step %d): use a VM with dedicated CPUs", pct(target), what, ts)
	}
	if tester >= Steal && named != "tester steal" {
		out += fmt.Sprintf("; the tester's hypervisor stole %s of its CPUs (step %d): use a VM with dedicated CPUs", pct(tester), tt)
	}
	return out
}
