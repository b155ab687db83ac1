package targetload

import (
	"math"
	"strings"
	"testing"
	"time"
)

func sec(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

func TestJudgeWeighsSamplesByOverlap(t *testing.T) {
	samples := []Sample{
		// Half inside the step at 0.2, wholly inside at 0.8 twice.
		{Source: "proc", Resource: CredHub, Instance: "a", Start: sec(0), End: sec(2), CPU: 0.2, RSSBytes: 100},
		{Source: "proc", Resource: CredHub, Instance: "a", Start: sec(2), End: sec(4), CPU: 0.8, RSSBytes: 300},
		{Source: "proc", Resource: CredHub, Instance: "b", Start: sec(1), End: sec(5), CPU: 0.4, RSSBytes: -1},
		{Source: "proc", Resource: Database, Instance: "db", Start: sec(1), End: sec(5), CPU: math.NaN(), RSSBytes: 50},
		// Outside: not counted.
		{Source: "proc", Resource: Database, Instance: "db", Start: sec(6), End: sec(8), CPU: 1},
	}
	got := Judge(samples, sec(1), sec(5))
	if got == nil || len(got.Resources) != 2 {
		t.Fatalf("Judge = %+v", got)
	}
	ch := got.Resources[0]
	// a: (1 s x 0.2 + 2 s x 0.8) / 3 s = 0.6; b: 0.4; mean 0.5, max 0.6.
	if ch.Resource != CredHub || ch.Instances != 2 || math.Abs(*ch.CPU-0.5) > 1e-4 || math.Abs(*ch.CPUMax-0.6) > 1e-4 {
		t.Errorf("credhub = %+v cpu %v max %v", ch, *ch.CPU, *ch.CPUMax)
	}
	if ch.RSSBytes == nil || *ch.RSSBytes != 233 {
		t.Errorf("credhub rss = %v, want a's weighted mean 233 (b unknown)", ch.RSSBytes)
	}
	db := got.Resources[1]
	if db.CPU != nil || db.RSSBytes == nil || *db.RSSBytes != 50 {
		t.Errorf("database without a CPU figure = %+v; want cpu null, never 0", db)
	}
	if got.Busiest != CredHub || got.Verdict != "CredHub instances at 50 % CPU (the busiest)" {
		t.Errorf("verdict %q busiest %q", got.Verdict, got.Busiest)
	}
	if Judge(samples, sec(10), sec(12)) != nil {
		t.Error("a step without samples must have no figures")
	}
}

func load(ch, db float64) *StepLoad {
	return &StepLoad{Resources: []ResourceLoad{
		{Resource: CredHub, Label: Label(CredHub), CPU: &ch},
		{Resource: Database, Label: Label(Database), CPU: &db},
	}}
}

func TestJudgeRunNamesTheBusiestOverCountedSteps(t *testing.T) {
	cases := []struct {
		name  string
		steps []StepInput
		res   string
		text  string
	}{
		{"credhub", []StepInput{{Step: 1, Load: load(0.3, 0.1), Counts: true, TesterBound: false}, {Step: 2, Load: load(0.92, 0.4), Counts: true, TesterBound: false}, {Step: 3, Load: load(0.99, 0.99), Counts: false, TesterBound: false}},
			CredHub, "CredHub instances at 92 % CPU"},
		{"database", []StepInput{{Step: 1, Load: load(0.5, 0.6), Counts: true, TesterBound: false}, {Step: 2, Load: load(0.8, 0.95), Counts: true, TesterBound: false}},
			Database, "database at 95 % CPU: more CredHub instances will not raise capacity"},
		{"elsewhere", []StepInput{{Step: 1, Load: load(0.3, 0.2), Counts: true, TesterBound: false}, {Step: 2, Load: load(0.55, 0.4), Counts: true, TesterBound: false}},
			"elsewhere", "no measured resource above 70 %: the limit is elsewhere (connection pool, locks, network); busiest CredHub instances at 55 % CPU"},
		{"tester", []StepInput{{Step: 1, Load: load(0.3, 0.2), Counts: true, TesterBound: false}, {Step: 2, Load: load(0.35, 0.2), Counts: false, TesterBound: true}},
			"tester", "the tester: step 2 was tester-bound"},
		{"nothing counted", []StepInput{{Step: 1, Load: load(0.9, 0.2), Counts: false, TesterBound: false}}, "", "not judged"},
		{"no samples", []StepInput{{Step: 1, Load: nil, Counts: true, TesterBound: false}}, "", "not measured"},
	}
	for _, c := range cases {
		v := JudgeRun(c.steps)
		if v.Resource != c.res || !strings.HasPrefix(v.Verdict, c.text) || v.BusyThreshold != Busy {
			t.Errorf("%s: %+v, want %s %q", c.name, v, c.res, c.text)
		}
	}
}
