package targetload

import (
	"strings"
	"testing"
)

// machineLoad is a step where CredHub and the database ran on the given
// machines at the given shares.
func machineLoad(ch, db float64, machines ...MachineLoad) *StepLoad {
	l := load(ch, db)
	l.Machines = machines
	return l
}

func cpu1(busy, steal, other float64, res ...string) MachineLoad {
	return MachineLoad{Machine: "cpus 1", CPUs: "1", Busy: &busy, Steal: &steal, Other: &other, Resources: res}
}

func TestJudgeRunSharedCapacity(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		name  string
		steps []StepInput
		res   string
		text  string
	}{
		{"shared core", []StepInput{{Step: 1, Load: machineLoad(0.73, 0.24, cpu1(0.97, 0, 0, CredHub, Database)), Counts: true}},
			"shared", "CPU 1, shared by CredHub (73 %) and the database (24 %), is 97 % busy: the core they share is the limit; give them separate cores or VMs"},
		{"separate cores", []StepInput{{Step: 1, Load: machineLoad(0.95, 0.3, cpu1(0.96, 0, 0.01, CredHub), MachineLoad{Machine: "cpus 0", CPUs: "0", Busy: f(0.31), Resources: []string{Database}}), Counts: true}},
			CredHub, "CredHub instances at 95 % CPU"},
		{"busy neighbour", []StepInput{{Step: 1, Load: machineLoad(0.59, 0.1, cpu1(1, 0, 0.41, CredHub)), Counts: true}},
			"other work", "CredHub's CPU 1 100 % busy, 41 % of it other processes: other work on its core is the limit; move it off or give CredHub a core of its own"},
		{"target steal", []StepInput{{Step: 1, Load: machineLoad(0.7, 0.1, cpu1(0.75, 0.2, 0.02, CredHub)), Counts: true}},
			"steal", "CredHub's CPU 1 95 % busy, 20 % of it stolen by the hypervisor: the hypervisor gives the target's core to other guests; use a VM with dedicated CPUs"},
		{"tester short of CPU", []StepInput{{Step: 1, Load: load(0.3, 0.1), Counts: true}, {Step: 2, Load: load(0.3, 0.1), TesterBound: true, TesterReason: "tester CPU 97 % of 1 core(s)"}},
			"tester", "the tester: step 2 was tester-bound (tester CPU 97 % of 1 core(s)) and no measured target resource reached 70 % CPU in the counted steps; add testers"},
		{"tester steal", []StepInput{{Step: 1, Load: load(0.3, 0.1), TesterBound: true, TesterReason: "CPU steal 12 % on the tester's core(s)", TesterSteal: f(0.12)}},
			"tester steal", "the tester's hypervisor: no step counts as capacity, the first tester-bound was step 1 (CPU steal 12 % on the tester's core(s)); it gave the tester's CPUs to other guests: use a VM with dedicated CPUs, not more testers"},
		{"tester beside a busy target", []StepInput{{Step: 1, Load: machineLoad(0.5, 0.1, cpu1(1, 0, 0.45, CredHub)), TesterBound: true, TesterReason: "host CPU 100 % busy on the tester's core(s), and the tester's threads waited"}},
			"tester host", "other work on the tester's machine: no step counts as capacity, the first tester-bound was step 1 (host CPU 100 % busy on the tester's core(s), and the tester's threads waited); run the tester on a quiet machine (a target on the same machine counts too), not more testers; on the target, CPU 1 was 100 % busy from step 1"},
		{"a neighbour on a shared core", []StepInput{{Step: 1, Load: machineLoad(0.27, 0.02, cpu1(1, 0, 0.71, CredHub, Database)), Counts: true}},
			"other work", "CPU 1, shared by CredHub (27 %) and the database (2 %), is 100 % busy, 71 % of it other processes: other work on the core they share is the limit; move it off or give them cores of their own"},
		{"nothing counts", []StepInput{{Step: 1, Load: machineLoad(0.6, 0.3, cpu1(0.92, 0, 0, CredHub, Database))}, {Step: 2, Load: machineLoad(0.7, 0.3, cpu1(1, 0, 0, CredHub, Database))}},
			"", "not judged: no sampled step counts as capacity (see why in the summary); on the target, CPU 1 was 92-100 % busy from step 1"},
	}
	for _, c := range cases {
		v := JudgeRun(c.steps)
		if v.Resource != c.res || !strings.HasPrefix(v.Verdict, c.text) {
			t.Errorf("%s: %s %q\nwant %s %q", c.name, v.Resource, v.Verdict, c.res, c.text)
		}
		if c.res != "tester" && strings.Contains(v.Verdict, "add testers") {
			t.Errorf("%s: %q advises more testers", c.name, v.Verdict)
		}
	}
	// Steal on the tester is named beside any verdict.
	v := JudgeRun([]StepInput{{Step: 1, Load: load(0.9, 0.1), Counts: true, TesterSteal: f(0.11)}})
	if !strings.HasSuffix(v.Verdict, "; the tester's hypervisor stole 11 % of its CPUs (step 1): use a VM with dedicated CPUs") {
		t.Errorf("verdict %q", v.Verdict)
	}
}
