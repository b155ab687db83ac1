package targetload

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeProc writes a /proc tree of processes: pid -> (comm, stat ticks,
// status text).
type fakeProc struct {
	t    *testing.T
	root string
}

func newFakeProc(t *testing.T) *fakeProc {
	f := &fakeProc{t: t, root: t.TempDir()}
	f.stat("cpu0 100 0 50 1000 5 0 0 0 0 0", "cpu1 100 0 50 1000 5 0 0 0 0 0")
	return f
}

// stat writes /proc/stat's per-CPU lines (user nice system idle iowait
// irq softirq steal guest guest_nice).
func (f *fakeProc) stat(cpus ...string) {
	text := "cpu  0 0 0 0 0 0 0 0 0 0\n" + strings.Join(cpus, "\n") + "\nintr 1 2 3\nctxt 5\n"
	if err := os.WriteFile(filepath.Join(f.root, "stat"), []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeProc) set(pid int, comm string, ticks uint64, status string) {
	dir := filepath.Join(f.root, fmt.Sprint(pid))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	stat := fmt.Sprintf("%d (%s) S 1 1 1 0 -1 4194304 100 0 0 0 %d 0 0 0 20 0 1 0 100 1000 10", pid, comm, ticks)
	for name, text := range map[string]string{"comm": comm + "\n", "stat": stat, "status": status} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
}

const okStatus = "Name:\tjava\nVmRSS:\t  2048 kB\nCpus_allowed_list:\t0-1\n"

func TestProcSourceSumsANameAndCountsFromSecondSight(t *testing.T) {
	fp := newFakeProc(t)
	fp.set(10, "postgres", 100, okStatus)
	fp.set(11, "postgres", 50, okStatus)
	fp.set(12, "java", 7, okStatus)
	src := &ProcSource{Root: fp.root, Targets: []ProcTarget{{Resource: Database, Name: "postgres"}, {Resource: CredHub, PID: 12}}}
	rs, w := src.Read(context.Background())
	if len(w) > 0 || len(rs) != 2 || rs[0].Busy != 0 || rs[0].Cores != 2 || rs[0].RSSBytes != 2*2048*1024 {
		t.Fatalf("first read %+v %q", rs, w)
	}
	fp.set(10, "postgres", 130, okStatus) // +30 ticks
	fp.set(13, "postgres", 500, okStatus) // new: counts from its next sight
	os.RemoveAll(filepath.Join(fp.root, "11"))
	fp.set(12, "java", 17, okStatus)
	rs, w = src.Read(context.Background())
	if len(w) > 0 || rs[0].Busy != 300*time.Millisecond || rs[1].Busy != 100*time.Millisecond {
		t.Fatalf("second read %+v %q", rs, w)
	}
}

func TestProcSourceHostile(t *testing.T) {
	fp := newFakeProc(t)
	fp.set(20, "garbled", 0, okStatus)
	os.WriteFile(filepath.Join(fp.root, "20", "stat"), []byte("20 (x) S 1 2"), 0o644)
	fp.set(21, "nocpus", 5, "VmRSS:\t1 kB\n")
	fp.set(22, "badlist", 5, "Cpus_allowed_list:\t3-1\n")
	fp.set(23, "huge", 5, okStatus)
	os.WriteFile(filepath.Join(fp.root, "23", "stat"), []byte("23 (a) b) S 1 1 1 0 -1 4 1 0 0 0 99999999999999999999999 1 0 0 20 0 1 0 100 1000 10"), 0o644)
	fp.set(24, "unreadable", 5, okStatus)
	os.Chmod(filepath.Join(fp.root, "24", "stat"), 0)
	src := &ProcSource{Root: fp.root, Targets: []ProcTarget{
		{Resource: CredHub, PID: 99999}, {Resource: CredHub, PID: 20}, {Resource: CredHub, PID: 21},
		{Resource: CredHub, PID: 22}, {Resource: CredHub, PID: 23}, {Resource: CredHub, PID: 24},
		{Resource: Database, Name: "nosuchname"},
	}}
	rs, w := src.Read(context.Background())
	if len(rs) != 0 && !(len(rs) == 1 && os.Geteuid() == 0) { // root reads a mode-0 file
		t.Errorf("readings from broken processes: %+v", rs)
	}
	want := []string{"pid 99999: no such process", "pid 20: stat has 3 fields", "pid 21: status has no Cpus_allowed_list", "pid 22: status Cpus_allowed_list", "pid 23: stat utime", "no process named \"nosuchname\""}
	all := strings.Join(w, "\n")
	for _, s := range want {
		if !strings.Contains(all, s) {
			t.Errorf("no warning %q in:\n%s", s, all)
		}
	}
	for _, l := range w {
		if strings.Contains(l, "\n") {
			t.Errorf("warning of several lines: %q", l)
		}
	}
}

func TestParseProcTarget(t *testing.T) {
	for in, want := range map[string]ProcTarget{
		"credhub=1234":          {Resource: CredHub, PID: 1234},
		" database = postgres ": {Resource: Database, Name: "postgres"},
	} {
		got, err := ParseProcTarget(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "credhub", "=1", "credhub=", "CredHub=1", "credhub=-3", "credhub=0", "db=/usr/bin/x"} {
		if _, err := ParseProcTarget(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
