package targetload

// Shared capacity: the resources that run on one machine (the same CPUs,
// or one VM) are judged together, since what limits each is what is left
// of those CPUs, whoever used it. A machine busy past Busy is the limit
// when two sampled resources share it (the core they share), when work
// other than theirs took a noticeable part of it (a neighbour), or when
// the hypervisor stole it.

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// OtherWork is the share of a machine's CPUs busy with unsampled work
// from which it is named: below it, it is the odd daemon.
const OtherWork = 0.10

// Steal is the share of a machine's CPUs stolen from which the
// hypervisor is named: a few percent is common on shared clouds, more
// slows every request.
const Steal = 0.05

// MachineLoad is one machine's figures over a step: the CPUs the sampled
// resources on it may use (or a VM), how busy they were, stolen, in
// iowait, and busy with work other than the sampled resources'. Figures
// are null when unknown.
type MachineLoad struct {
	Machine   string   `json:"machine"`
	CPUs      string   `json:"cpus,omitempty"`
	Source    string   `json:"source"`
	Busy      *float64 `json:"busy"`
	Steal     *float64 `json:"steal"`
	Iowait    *float64 `json:"iowait"`
	Other     *float64 `json:"other"`
	Resources []string `json:"resources"`
}

// machineLoads attributes the samples' machine figures to [start, end),
// each weighed by its overlap, per machine.
func machineLoads(samples []Sample, start, end time.Duration) []MachineLoad {
	type acc struct {
		w, v   [4]float64
		cpus   string
		source string
		res    map[string]bool
	}
	per := map[string]*acc{}
	for _, s := range samples {
		w := overlap(s, start, end)
		if w <= 0 || s.Machine == "" {
			continue
		}
		a := per[s.Machine]
		if a == nil {
			a = &acc{res: map[string]bool{}, cpus: s.CPUs, source: s.Source}
			per[s.Machine] = a
		}
		a.res[s.Resource] = true
		for i, f := range []float64{s.MachineBusy, s.MachineSteal, s.MachineIowait, s.MachineOther} {
			if !math.IsNaN(f) {
				a.w[i] += w
				a.v[i] += w * f
			}
		}
	}
	var out []MachineLoad
	for name, a := range per {
		m := MachineLoad{Machine: name, CPUs: a.cpus, Source: a.source}
		if set, ok := strings.CutPrefix(name, "cpus "); ok {
			m.CPUs = set // the machine's, which may be more than one instance's
		}
		for i, dst := range []**float64{&m.Busy, &m.Steal, &m.Iowait, &m.Other} {
			if a.w[i] > 0 {
				*dst = ptr(round4(a.v[i] / a.w[i]))
			}
		}
		for r := range a.res {
			m.Resources = append(m.Resources, r)
		}
		sort.Slice(m.Resources, func(i, j int) bool { return order(m.Resources[i]) < order(m.Resources[j]) })
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Machine < out[j].Machine })
	return out
}

// overlap is how many seconds of a sample lie within [start, end); an
// instant reading within counts a millisecond.
func overlap(s Sample, start, end time.Duration) float64 {
	lo, hi := max(s.Start, start), min(s.End, end)
	w := (hi - lo).Seconds()
	if s.End == s.Start && s.Start >= start && s.Start < end {
		w = 1e-3
	}
	return w
}

// finding is what a machine says about a step's limit.
type finding struct {
	kind    string  // shared, other work, steal
	load    float64 // busy + stolen share
	machine string
	text    string
}

// load is the share of the machine's CPUs that was not there for more
// work: busy, or stolen.
func (m MachineLoad) load() float64 {
	if m.Busy == nil {
		return math.NaN()
	}
	l := *m.Busy
	if m.Steal != nil {
		l += *m.Steal
	}
	return math.Min(l, 1)
}

// findingOf judges a machine: nil when it was not busy past Busy, or
// when it holds one resource that used it alone (the resource's own
// verdict says that better).
func findingOf(m MachineLoad, rs []ResourceLoad) *finding {
	load := m.load()
	if math.IsNaN(load) || load < Busy {
		return nil
	}
	other := m.Other != nil && *m.Other >= OtherWork
	steal := m.Steal != nil && *m.Steal >= Steal
	shared := len(m.Resources) > 1
	if !shared && !other && !steal {
		return nil
	}
	f := &finding{load: load, machine: m.Machine}
	what := m.what()
	var b strings.Builder
	if shared {
		f.kind = "shared"
		fmt.Fprintf(&b, "%s, shared by %s, is %s busy", what, sharers(m, rs), pct(load))
	} else {
		fmt.Fprintf(&b, "%s's %s %s busy", shortLabel(m.Resources[0]), uncap(what), pct(load))
	}
	if other {
		fmt.Fprintf(&b, ", %s of it other processes", pct(*m.Other))
	}
	if steal {
		fmt.Fprintf(&b, ", %s of it stolen by the hypervisor", pct(*m.Steal))
	}
	switch {
	case shared && other && *m.Other >= *m.Busy/2:
		// Most of the busy time was not theirs: separating them would
		// not free the core.
		f.kind = "other work"
		fmt.Fprintf(&b, ": other work on the %s they share is the limit; move it off or give them %s of their own", m.noun(), m.plural())
	case shared:
		f.kind = "shared"
		fmt.Fprintf(&b, ": the %s they share %s the limit; give them separate %s", m.noun(), m.verb(), m.separate())
	case other:
		f.kind = "other work"
		own := "a " + m.noun()
		if m.noun() == "cores" {
			own = "cores"
		}
		fmt.Fprintf(&b, ": other work on its %s is the limit; move it off or give %s %s of its own", m.noun(), shortLabel(m.Resources[0]), own)
	default:
		f.kind = "steal"
		fmt.Fprintf(&b, ": the hypervisor gives the target's %s to other guests; use a VM with dedicated CPUs", m.noun())
	}
	if steal && f.kind != "steal" {
		b.WriteString("; and a VM with dedicated CPUs, for the part the hypervisor took")
	}
	if strings.HasPrefix(m.Machine, "vm ") {
		b.WriteString(" (BOSH vitals are the whole VM's: they include every job on it)")
	}
	f.text = b.String()
	return f
}

// what names the machine: "CPU 1", "CPUs 0-1", "VM credhub/0",
// "machine host".
func (m MachineLoad) what() string {
	switch {
	case strings.HasPrefix(m.Machine, "vm "):
		return "VM " + strings.TrimPrefix(m.Machine, "vm ")
	case strings.HasPrefix(m.Machine, "cpus ") && m.CPUs != "":
		if set, err := ParseCPUList(m.CPUs); err == nil && len(set) == 1 {
			return "CPU " + m.CPUs
		}
		return "CPUs " + m.CPUs
	}
	return "machine " + m.Machine
}

// noun is what the resources run on: "core", "cores", "VM".
func (m MachineLoad) noun() string {
	if strings.HasPrefix(m.Machine, "vm ") {
		return "VM"
	}
	if set, err := ParseCPUList(m.CPUs); err == nil && len(set) == 1 {
		return "core"
	}
	return "cores"
}

// verb agrees with noun: "the core they share is", "the cores ... are".
func (m MachineLoad) verb() string {
	if m.noun() == "cores" {
		return "are"
	}
	return "is"
}

// plural is what to give resources of their own: "cores", "VMs".
func (m MachineLoad) plural() string {
	if m.noun() == "VM" {
		return "VMs"
	}
	return "cores"
}

func (m MachineLoad) separate() string {
	if m.noun() == "VM" {
		return "VMs"
	}
	return "cores or VMs"
}

// sharers: "CredHub (73 %) and the database (24 %)". A resource's CPU is
// a share of the cores it may use: on one core that is the core's share,
// so the figures add up to the machine's; on several, an instance may use
// fewer cores than the machine has, so the share says whose it is.
func sharers(m MachineLoad, rs []ResourceLoad) string {
	of := ""
	if m.noun() != "core" {
		of = " of its cores"
	}
	var parts []string
	for _, name := range m.Resources {
		p := shortLabel(name)
		for _, r := range rs {
			if r.Resource == name && r.CPU != nil {
				p += " (" + pct(*r.CPU) + of + ")"
			}
		}
		parts = append(parts, p)
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// shortLabel names a resource within a sentence.
func shortLabel(resource string) string {
	switch resource {
	case CredHub:
		return "CredHub"
	case Database:
		return "the database"
	}
	return clip(resource, 64)
}

func uncap(s string) string {
	if strings.HasPrefix(s, "VM ") || strings.HasPrefix(s, "CPU") {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// stepFinding is the step's strongest machine finding, nil for none.
func stepFinding(l *StepLoad) *finding {
	var best *finding
	for _, m := range l.Machines {
		if f := findingOf(m, l.Resources); f != nil && (best == nil || f.load > best.load) {
			best = f
		}
	}
	return best
}

// MachineText is a machine's figures in a few words, for the live output
// and summary.txt: "CPU 1 97 % busy (41 % other work, 2 % stolen)".
func MachineText(m MachineLoad) string {
	t := m.what()
	if m.Busy == nil {
		return t + " busy share unknown"
	}
	t += " " + pct(*m.Busy) + " busy"
	var more []string
	if m.Other != nil {
		more = append(more, pct(*m.Other)+" other work")
	}
	if m.Steal != nil {
		more = append(more, pct(*m.Steal)+" stolen")
	}
	if m.Iowait != nil && *m.Iowait >= 0.005 {
		more = append(more, pct(*m.Iowait)+" iowait")
	}
	if len(more) > 0 {
		t += " (" + strings.Join(more, ", ") + ")"
	}
	if strings.HasPrefix(m.Machine, "vm ") {
		t += ", every job on the VM"
	}
	return t
}
