package targetload

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Busy is the CPU share from which a resource is named as the limit: a
// resource of one or a few cores queues requests noticeably from about
// 70 % (an M/M/1 queue's wait is 2.3 service times there), so a busier
// one explains a bending curve, and when none is this busy the limit is
// something the samples cannot see.
const Busy = 0.70

// ResourceLoad is one resource's figures over a step.
type ResourceLoad struct {
	Resource string `json:"resource"`
	Label    string `json:"label"`
	Source   string `json:"source"`
	// Instances sampled within the step.
	Instances int `json:"instances"`
	// CPU: the mean over instances of each one's share (overlap-weighted
	// over its samples); CPUMax: the busiest instance's. Null when no
	// sample within the step had a CPU figure.
	CPU    *float64 `json:"cpu"`
	CPUMax *float64 `json:"cpu_max"`
	// RSSBytes: the instances' resident memory, summed (each the mean of
	// its samples); null when unknown.
	RSSBytes *int64 `json:"rss_bytes"`
	Samples  int    `json:"samples"`
}

// StepLoad is a step's target-side figures: every sampled resource, the
// busiest, and the step's verdict.
type StepLoad struct {
	Resources []ResourceLoad `json:"resources"`
	Busiest   string         `json:"busiest,omitempty"`
	Verdict   string         `json:"verdict"`
}

// Label is how reports name a resource.
func Label(resource string) string {
	switch resource {
	case CredHub:
		return "CredHub instances"
	case Database:
		return "database"
	}
	return resource
}

func pct(f float64) string { return fmt.Sprintf("%.0f %%", 100*f) }

// Judge attributes samples to the step that ran over [start, end) (offsets
// on the CSV origin) and names the busiest resource. Each sample weighs by
// how much of it lies within the step. nil when no sample touches it.
func Judge(samples []Sample, start, end time.Duration) *StepLoad {
	if end <= start {
		return nil
	}
	type acc struct {
		w, cpu, rssW, rss float64
		n                 int
	}
	type key struct{ resource, instance string }
	per := map[key]*acc{}
	sources := map[string]map[string]bool{}
	for _, s := range samples {
		lo, hi := max(s.Start, start), min(s.End, end)
		w := (hi - lo).Seconds()
		if s.End == s.Start && s.Start >= start && s.Start < end {
			w = 1e-3 // an instant reading within the step
		}
		if w <= 0 {
			continue
		}
		k := key{s.Resource, s.Instance}
		a := per[k]
		if a == nil {
			a = &acc{}
			per[k] = a
		}
		a.n++
		if !math.IsNaN(s.CPU) {
			a.w += w
			a.cpu += w * math.Min(s.CPU, 1)
		}
		if s.RSSBytes >= 0 {
			a.rssW += w
			a.rss += w * float64(s.RSSBytes)
		}
		if sources[s.Resource] == nil {
			sources[s.Resource] = map[string]bool{}
		}
		sources[s.Resource][s.Source] = true
	}
	if len(per) == 0 {
		return nil
	}
	byRes := map[string]*ResourceLoad{}
	cpuSum := map[string]float64{}
	cpuN := map[string]int{}
	for k, a := range per {
		r := byRes[k.resource]
		if r == nil {
			r = &ResourceLoad{Resource: k.resource, Label: Label(k.resource), Source: joinKeys(sources[k.resource])}
			byRes[k.resource] = r
		}
		r.Instances++
		r.Samples += a.n
		if a.w > 0 {
			c := a.cpu / a.w
			cpuSum[k.resource] += c
			cpuN[k.resource]++
			if r.CPUMax == nil || c > *r.CPUMax {
				r.CPUMax = ptr(round4(c))
			}
		}
		if a.rssW > 0 {
			v := int64(a.rss / a.rssW)
			if r.RSSBytes != nil {
				v += *r.RSSBytes
			}
			r.RSSBytes = &v
		}
	}
	out := &StepLoad{}
	for res, r := range byRes {
		if n := cpuN[res]; n > 0 {
			r.CPU = ptr(round4(cpuSum[res] / float64(n)))
		}
		out.Resources = append(out.Resources, *r)
	}
	sort.Slice(out.Resources, func(i, j int) bool { return order(out.Resources[i].Resource) < order(out.Resources[j].Resource) })
	best := busiest(out.Resources)
	if best == nil {
		out.Verdict = "no CPU figure was sampled within the step"
		return out
	}
	out.Busiest = best.Resource
	out.Verdict = cpuText(*best)
	if *best.CPU < Busy {
		out.Verdict += " (the busiest)"
	}
	return out
}

// order puts CredHub first, the database second, others by name.
func order(resource string) string {
	switch resource {
	case CredHub:
		return "0"
	case Database:
		return "1"
	}
	return "2" + resource
}

func busiest(rs []ResourceLoad) *ResourceLoad {
	var best *ResourceLoad
	for i := range rs {
		if rs[i].CPU != nil && (best == nil || *rs[i].CPU > *best.CPU) {
			best = &rs[i]
		}
	}
	return best
}

// cpuText names a resource at its CPU share; the database's adds what it
// means for sizing.
func cpuText(r ResourceLoad) string {
	t := fmt.Sprintf("%s at %s CPU", r.Label, pct(*r.CPU))
	if r.Resource == Database && *r.CPU >= Busy {
		t += ": more CredHub instances will not raise capacity"
	}
	return t
}

// StepInput is what JudgeRun needs of a step.
type StepInput struct {
	Step        int
	Load        *StepLoad
	Counts      bool // counts as capacity (Summary.CountsStep) and met the SLO
	TesterBound bool
}

// Verdict is the run's answer to "what ended capacity".
type Verdict struct {
	// Resource: credhub, database, another sampled resource, "elsewhere"
	// (nothing sampled was busy), "tester", or "" when not judged.
	Resource string `json:"resource"`
	// CPU and Step: the named resource's share at the counted step where
	// it was busiest.
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
// capacity: each resource's highest share over them; the busiest at or
// past Busy is named. When none reaches it the limit is outside what was
// sampled, unless a step was tester-bound, which names the tester.
func JudgeRun(steps []StepInput) *Verdict {
	v := &Verdict{BusyThreshold: Busy}
	sampled, counted := false, 0
	var best *ResourceLoad
	bestStep := 0
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
	}
	bound := 0
	for _, st := range steps {
		if st.TesterBound && bound == 0 {
			bound = st.Step
		}
	}
	switch {
	case !sampled:
		v.Verdict = "not measured: no target sample fell within any step"
	case best != nil && *best.CPU >= Busy:
		v.Resource, v.CPU, v.Step = best.Resource, best.CPU, bestStep
		v.Verdict = cpuText(*best)
	case bound > 0 && best == nil:
		v.Resource, v.Step = "tester", bound
		v.Verdict = fmt.Sprintf("the tester: no step counts as capacity, the first tester-bound was step %d; add testers", bound)
	case bound > 0:
		v.Resource, v.Step = "tester", bound
		v.Verdict = fmt.Sprintf("the tester: step %d was tester-bound and no measured target resource reached %s CPU in the counted steps; add testers", bound, pct(Busy))
	case counted == 0:
		v.Verdict = "not judged: no sampled step counts as capacity (see why in the summary)"
	case best == nil:
		v.Verdict = "not judged: no step that counts as capacity has a CPU figure"
	default:
		v.Resource, v.CPU, v.Step = "elsewhere", best.CPU, bestStep
		v.Verdict = fmt.Sprintf("no measured resource above %s: the limit is elsewhere (connection pool, locks, network); busiest %s", pct(Busy), cpuText(*best))
	}
	return v
}

func joinKeys(m map[string]bool) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

func ptr[T any](v T) *T { return &v }

func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }
