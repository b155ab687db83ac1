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
	// Machine: the machine its instances ran on (MachineLoad.Machine);
	// absent when unknown. With several, the last sampled.
	Machine string `json:"machine,omitempty"`
}

// StepLoad is a step's target-side figures: every sampled resource, the
// machines they ran on (machinejudge.go), the busiest resource, and the
// step's verdict.
type StepLoad struct {
	Resources []ResourceLoad `json:"resources"`
	Machines  []MachineLoad  `json:"machines,omitempty"`
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
	machine := map[string]string{}
	for _, s := range samples {
		w := overlap(s, start, end)
		if w <= 0 {
			continue
		}
		if s.Machine != "" {
			machine[s.Resource] = s.Machine
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
			r = &ResourceLoad{Resource: k.resource, Label: Label(k.resource), Source: joinKeys(sources[k.resource]), Machine: machine[k.resource]}
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
	out.Machines = machineLoads(samples, start, end)
	out.judge()
	return out
}

// judge names the busiest resource and the step's verdict: a machine's
// finding first (machinejudge.go), else the busiest resource.
func (out *StepLoad) judge() {
	best := busiest(out.Resources)
	if best != nil {
		out.Busiest = best.Resource
	}
	switch f := stepFinding(out); {
	case f != nil:
		out.Verdict = f.text
	case best == nil:
		out.Verdict = "no CPU figure was sampled within the step"
	default:
		out.Verdict = cpuText(*best)
		if *best.CPU < Busy {
			out.Verdict += " (the busiest)"
		}
	}
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
	if strings.Contains(r.Source, "bosh") {
		t += " (BOSH vitals: its whole VM, other jobs on it included)"
	}
	if r.Resource == Database && *r.CPU >= Busy {
		t += ": more CredHub instances will not raise capacity"
	}
	return t
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
