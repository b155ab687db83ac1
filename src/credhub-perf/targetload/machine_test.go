package targetload

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A /proc fixture read twice: the machine's shares over the interval are
// the differences of its CPUs' /proc/stat times, steal included, and the
// other work is the busy time the sampled processes did not use.
func TestProcMachineFiguresFromAFixture(t *testing.T) {
	fp := newFakeProc(t)
	pinned := "Name:\tjava\nVmRSS:\t1 kB\nCpus_allowed_list:\t1\n"
	fp.set(10, "java", 1000, pinned)
	fp.set(11, "postgres", 500, pinned)
	fp.stat("cpu0 100 0 50 1000 5 0 0 0 0 0", "cpu1 1000 0 500 100 10 0 0 50 0 0")
	t0 := time.Unix(0, 0)
	clock := t0
	src := &ProcSource{Root: fp.root, Targets: []ProcTarget{{Resource: CredHub, PID: 10}, {Resource: Database, Name: "postgres"}}, Now: func() time.Time { return clock }}
	s := NewSampler([]Source{src}, t0, func() time.Time { return clock }, nil, func(w string) { t.Error(w) })
	s.SampleNow(context.Background())
	// 100 ticks (1 s) on CPU 1: CredHub 50, the database 20, busy 85 in
	// all (user 60 + system 20 + irq 3 + softirq 2), idle 0, iowait 5,
	// steal 10.
	fp.set(10, "java", 1050, pinned)
	fp.set(11, "postgres", 520, pinned)
	fp.stat("cpu0 150 0 50 1050 5 0 0 0 0 0", "cpu1 1060 0 520 100 15 3 2 60 0 0")
	clock = clock.Add(time.Second)
	s.SampleNow(context.Background())
	got := s.Between(0, sec(2))
	if len(got) != 2 {
		t.Fatalf("samples %+v", got)
	}
	for _, x := range got {
		if x.Machine != "cpus 1" || x.CPUs != "1" || x.MachineBusy != 0.85 || x.MachineSteal != 0.1 || x.MachineIowait != 0.05 || math.Abs(x.MachineOther-0.15) > 1e-9 {
			t.Errorf("%s: machine %q cpus %q busy %v steal %v iowait %v other %v; want cpus 1, 0.85, 0.1, 0.05, 0.15",
				x.Resource, x.Machine, x.CPUs, x.MachineBusy, x.MachineSteal, x.MachineIowait, x.MachineOther)
		}
	}
	l := Judge(got, 0, sec(1))
	if len(l.Machines) != 1 || !strings.HasPrefix(l.Verdict, "CPU 1, shared by CredHub (50 %) and the database (20 %), is 95 % busy, 15 % of it other processes, 10 % of it stolen by the hypervisor: the core they share is the limit; give them separate cores or VMs; and a VM with dedicated CPUs, for the part the hypervisor took") {
		t.Errorf("verdict %q machines %+v", l.Verdict, l.Machines)
	}
}

// One PID named for two resources counts for each (the previous reading
// is kept per resource, not per PID), with a warning that says so.
func TestProcOnePIDForTwoResources(t *testing.T) {
	fp := newFakeProc(t)
	fp.set(10, "java", 100, okStatus)
	src := &ProcSource{Root: fp.root, Targets: []ProcTarget{{Resource: CredHub, PID: 10}, {Resource: Database, PID: 10}}}
	src.Read(context.Background())
	fp.set(10, "java", 142, okStatus)
	rs, w := src.Read(context.Background())
	if len(rs) != 2 || rs[0].Busy != 420*time.Millisecond || rs[1].Busy != 420*time.Millisecond {
		t.Errorf("readings %+v", rs)
	}
	if len(w) != 1 || !strings.Contains(w[0], "pid 10 is sampled for credhub and database") {
		t.Errorf("warnings %q", w)
	}
}

// A 10,000-character process name is cut short in every message.
func TestProcLongNameIsClipped(t *testing.T) {
	fp := newFakeProc(t)
	long := strings.Repeat("n", 10000)
	src := &ProcSource{Root: fp.root, Targets: []ProcTarget{{Resource: CredHub, Name: long}}}
	_, w := src.Read(context.Background())
	if len(w) != 1 || len(w[0]) > 300 {
		t.Errorf("warning of %d bytes: %.300q", len(w[0]), w[0])
	}
	if _, err := ParseProcTarget("credhub=" + long + "/"); err == nil || len(err.Error()) > 300 {
		t.Errorf("error %.300v", err)
	}
}

// A process confined by its cgroup: its CPUs are its affinity within the
// cpuset, its cores capped by cpu.max.
func TestProcCgroupCpusetAndQuota(t *testing.T) {
	fp := newFakeProc(t)
	cg := t.TempDir()
	fp.set(10, "java", 100, "Cpus_allowed_list:\t0-3\n")
	os.WriteFile(filepath.Join(fp.root, "10", "cgroup"), []byte("0::/app\n"), 0o644)
	os.MkdirAll(filepath.Join(cg, "app"), 0o755)
	os.WriteFile(filepath.Join(cg, "app", "cpuset.cpus.effective"), []byte("1-2\n"), 0o644)
	os.WriteFile(filepath.Join(cg, "app", "cpu.max"), []byte("50000 100000\n"), 0o644)
	fp.stat("cpu0 1 0 0 1 0 0 0 0 0 0", "cpu1 1 0 0 1 0 0 0 0 0 0", "cpu2 1 0 0 1 0 0 0 0 0 0", "cpu3 1 0 0 1 0 0 0 0 0 0")
	src := &ProcSource{Root: fp.root, CgroupRoot: cg, Targets: []ProcTarget{{Resource: CredHub, PID: 10}}}
	rs, w := src.Read(context.Background())
	if len(w) > 0 || len(rs) != 1 || rs[0].CPUs != "1-2" || rs[0].Cores != 0.5 || rs[0].Machine != "cpus 1-2" {
		t.Errorf("readings %+v %q", rs, w)
	}
	pids, cpus := src.Resolved()
	if fmt.Sprint(pids) != "map[credhub:[10]]" || cpus[CredHub] != "1-2" {
		t.Errorf("resolved %v %v", pids, cpus)
	}
}

// credhub-sim's machines: shares from its cumulative core-seconds.
func TestSimMachines(t *testing.T) {
	body := func(now, busy, other, steal float64) string {
		return fmt.Sprintf(`{"now_s":%g,"instances":[{"name":"instance 1","cores":1,"busy_s":%g,"machine":"host"}],"database":{"name":"database","cores":1,"busy_s":%g,"machine":"host"},"machines":[{"name":"host","cores":1,"busy_s":%g,"other_busy_s":%g,"steal_s":%g}]}`,
			now, (busy-other)*0.7, (busy-other)*0.3, busy, other, steal)
	}
	answers := []string{body(10, 5, 1, 0.5), body(12, 6.8, 1.4, 0.6)}
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, answers[min(n, 1)])
		n++
	}))
	defer srv.Close()
	src := &SimSource{URL: srv.URL, Client: srv.Client()}
	t0 := time.Unix(0, 0)
	clock := t0
	s := NewSampler([]Source{src}, t0, func() time.Time { return clock }, nil, func(w string) { t.Error(w) })
	s.SampleNow(context.Background())
	clock = clock.Add(2 * time.Second)
	s.SampleNow(context.Background())
	got := s.Between(0, sec(2))
	if len(got) != 2 {
		t.Fatalf("samples %+v", got)
	}
	// Over 2 s of 1 core: busy 1.8 core-s (0.9), other 0.4 (0.2), steal 0.1 (0.05).
	for _, x := range got {
		if x.Machine != "host" || x.CPUs != "0" || x.MachineBusy != 0.9 || x.MachineOther != 0.2 || x.MachineSteal != 0.05 || !math.IsNaN(x.MachineIowait) {
			t.Errorf("%+v", x)
		}
	}
	if v := Judge(got, 0, sec(2)).Verdict; !strings.HasPrefix(v, "machine host, shared by CredHub (49 %) and the database (21 %), is 95 % busy, 20 % of it other processes, 5 % of it stolen") {
		t.Errorf("verdict %q", v)
	}
}

// A sim whose /utilisation hangs: a step end does not wait for it past
// its read timeout, and once a read was slow, not at all.
func TestSimThatHangsDoesNotHoldStepEnds(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	src := &SimSource{URL: srv.URL, Client: srv.Client(), Timeout: 600 * time.Millisecond}
	var warned []string
	s := NewSampler([]Source{src}, time.Now(), time.Now, nil, func(w string) { warned = append(warned, w) })
	began := time.Now()
	s.SampleNow(context.Background())
	first := time.Since(began)
	began = time.Now()
	for i := 0; i < 5; i++ {
		s.SampleNow(context.Background())
	}
	if first > 5*time.Second || time.Since(began) > time.Second {
		t.Errorf("step ends waited %s, then %s for 5 more", first, time.Since(began))
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "did not answer within 600ms") {
		t.Errorf("warnings %q", warned)
	}
}

// Colocated jobs of one instance group are one machine, the VM; the
// verdict says the vitals include every job on it.
func TestBoshColocatedGroupIsOneMachine(t *testing.T) {
	rs, w, err := ParseVitals([]byte(vitalsJSON), map[string][]string{"credhub": {CredHub, Database}}, time.Unix(100, 0))
	if err != nil || len(rs) != 4 {
		t.Fatalf("readings %+v %q %v", rs, w, err)
	}
	if rs[0].Machine != "vm credhub/0a1b" || rs[1].Machine != "vm credhub/0a1b" || rs[0].MachineShare != 0.705 || !math.IsNaN(rs[0].Share) {
		t.Errorf("colocated readings %+v", rs[:2])
	}
	s := NewSampler(nil, time.Unix(90, 0), nil, nil, nil)
	var samples []Sample
	for _, r := range rs {
		x, ok := s.toSample("bosh", r, sec(10))
		if !ok || !math.IsNaN(x.CPU) {
			t.Fatalf("sample %+v", x)
		}
		samples = append(samples, asWritten(x))
	}
	l := Judge(samples, 0, sec(10))
	if len(l.Machines) != 2 || !strings.Contains(l.Verdict, "VM credhub/2c3d, shared by CredHub and the database, is 60 % busy") && !strings.Contains(l.Verdict, "VM credhub/0a1b, shared by CredHub and the database, is 70 % busy: the VM they share is the limit; give them separate VMs (BOSH vitals are the whole VM's: they include every job on it)") {
		t.Errorf("verdict %q machines %+v", l.Verdict, l.Machines)
	}
	if g, err := ParseGroups([]string{"credhub=credhub", "credhub=database", "credhub=credhub"}); err != nil || fmt.Sprint(g) != "map[credhub:[credhub database]]" {
		t.Errorf("groups %v %v", g, err)
	}
}

// The machine columns survive the file; an old file without them reads.
func TestSamplesFileMachineColumns(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	w, _ := Create(path)
	nan := math.NaN()
	w.Write([]Sample{
		{Source: "proc", Resource: CredHub, Instance: "pid 1", Start: sec(0), End: sec(1), CPU: 0.5, RSSBytes: -1, CPUs: "1", Machine: "cpus 1", MachineBusy: 0.97, MachineSteal: 0.01, MachineIowait: nan, MachineOther: 0.2},
		{Source: "bosh", Resource: Database, Instance: "credhub/0", Start: sec(0), End: sec(1), CPU: nan, RSSBytes: -1, Machine: "vm credhub/0", MachineBusy: 0.8, MachineSteal: nan, MachineIowait: nan, MachineOther: nan},
	})
	w.Close()
	got, warnings, err := Read(path)
	if err != nil || len(warnings) > 0 || len(got) != 2 {
		t.Fatalf("%+v %q %v", got, warnings, err)
	}
	if got[0].Machine != "cpus 1" || got[0].MachineBusy != 0.97 || got[0].MachineOther != 0.2 || !math.IsNaN(got[0].MachineIowait) || got[1].MachineBusy != 0.8 || !math.IsNaN(got[1].CPU) {
		t.Errorf("read back %+v", got)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), Header+"\nproc,credhub,pid 1,0.000,1.000,0.5000,,1,cpus 1,0.9700,0.0100,,0.2000\n") {
		t.Errorf("file:\n%s", b)
	}
	for line, want := range map[string]string{
		"proc,credhub,x,0,1,0.5,,1,cpus 1,2,,,":   "machine_busy",
		"proc,credhub,x,0,1,0.5,,1-0,cpus 1,,,,":  "cpus",
		"proc,credhub,x,0,1,0.5,,1,,0.5,,,":       "without a machine",
		"proc,credhub,x,0,1,,,,cpus 1,,,,":        "neither",
		"proc,credhub,x,0,1,0.5,,1,cpus 1,0.5,,,": "",
	} {
		_, ws, err := read(strings.NewReader(Header+"\n"+line+"\n"), "f")
		if err != nil || (want == "") != (len(ws) == 0) || want != "" && !strings.Contains(ws[0], want) {
			t.Errorf("%s: %q %v, want %q", line, ws, err, want)
		}
	}
}

// A samples file of one 2 GB line (sparse: no disk) is refused after
// reading at most a line's bound, in one line.
func TestSamplesFileOfOneHugeLine(t *testing.T) {
	dir := t.TempDir()
	for name, head := range map[string]string{"header": "", "body": Header + "\n"} {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(head)
		if err := f.Truncate(2 << 30); err != nil {
			t.Skipf("no sparse file here: %v", err)
		}
		f.Close()
		got, ws, err := Read(path)
		msg := fmt.Sprint(err, ws)
		if len(got) != 0 || !strings.Contains(msg, "a line over 64 KiB") || strings.Count(msg, "\n") > 0 || len(msg) > 400 {
			t.Errorf("%s: %d samples, %.400s", name, len(got), msg)
		}
	}
}

// A bosh that never answers is named as such in the settings (and so in
// meta.json and the verdict) while its call is still under way.
func TestBoshThatNeverAnswersIsAProblem(t *testing.T) {
	b := &BoshSource{Command: standIn(t, "sleep 60"), Deployment: "cf", Groups: groups, Timeout: time.Minute}
	s := NewSampler([]Source{b}, time.Now(), time.Now, nil, nil)
	s.began[0].Store(time.Now().Add(-12 * time.Second).UnixNano()) // as a call started 12 s ago
	got := s.Settings().ProblemList()
	if len(got) != 1 || got[0] != "bosh: bosh vms --vitals for deployment cf: the director did not answer (a call under way for 12s)" {
		t.Errorf("problems %q", got)
	}
}

// A resource judged from BOSH vitals alone is said to be its whole VM's.
func TestBoshResourceVerdictSaysVMWide(t *testing.T) {
	rs, _, _ := ParseVitals([]byte(vitalsJSON), map[string][]string{"database": {Database}}, time.Unix(100, 0))
	s := NewSampler(nil, time.Unix(90, 0), nil, nil, nil)
	x, _ := s.toSample("bosh", rs[0], sec(10))
	l := Judge([]Sample{asWritten(x)}, 0, sec(10))
	if l.Verdict != "database at 95 % CPU (BOSH vitals: its whole VM, other jobs on it included): more CredHub instances will not raise capacity" {
		t.Errorf("verdict %q", l.Verdict)
	}
}

// Resources whose CPUs overlap are one machine, the CPUs they may use in
// all: CredHub on CPU 1 and a database allowed 0-1 share CPU 1.
func TestProcOverlappingCPUsAreOneMachine(t *testing.T) {
	fp := newFakeProc(t)
	fp.set(10, "java", 100, "Cpus_allowed_list:\t1\n")
	fp.set(11, "postgres", 100, "Cpus_allowed_list:\t0-1\n")
	fp.set(12, "other", 100, "Cpus_allowed_list:\t2\n")
	fp.stat("cpu0 1 0 0 1 0 0 0 0 0 0", "cpu1 1 0 0 1 0 0 0 0 0 0", "cpu2 1 0 0 1 0 0 0 0 0 0")
	src := &ProcSource{Root: fp.root, Targets: []ProcTarget{{Resource: CredHub, PID: 10}, {Resource: Database, PID: 11}, {Resource: "cache", PID: 12}}}
	rs, w := src.Read(context.Background())
	if len(w) > 0 || len(rs) != 3 || rs[0].Machine != "cpus 0-1" || rs[1].Machine != "cpus 0-1" || rs[2].Machine != "cpus 2" || rs[0].CPUs != "1" {
		t.Errorf("readings %+v %q", rs, w)
	}
}

// On a machine of several cores a resource's share is of its own cores,
// which may be fewer than the machine's, so the verdict says whose share
// it is, and the cores they share "are" the limit.
func TestSharedCoresVerdictWords(t *testing.T) {
	s := func(res string, cpu float64) Sample {
		return Sample{Source: "credhub-sim", Resource: res, Instance: "instance 1", Start: 0, End: sec(1), CPU: cpu,
			RSSBytes: -1, CPUs: "0-1", Machine: "host", MachineBusy: 0.98, MachineSteal: 0, MachineIowait: math.NaN(), MachineOther: 0.02}
	}
	l := Judge([]Sample{s(CredHub, 0.31), s(Database, 0.22)}, 0, sec(1))
	want := "machine host, shared by CredHub (31 % of its cores) and the database (22 % of its cores), is 98 % busy: the cores they share are the limit; give them separate cores or VMs"
	if !strings.HasPrefix(l.Verdict, want) {
		t.Errorf("verdict %q\nwant prefix %q", l.Verdict, want)
	}
}
