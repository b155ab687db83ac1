package results

import "testing"

// A run short of its plan says how far it got, why, and what became of
// its credentials; a completed run and a capacity search say nothing.
func TestStoppedNote(t *testing.T) {
	killed := func() *Meta {
		return &Meta{PlannedSteps: 8, Status: "interrupted", Error: "killed", CleanupStatus: "not-run",
			CredentialPath: "/credhub-perf/r1/set", RunID: "r1", Command: "run"}
	}
	ok := &CleanupRecord{Cleanups: []CleanupEntry{{Removed: 500, Status: "ok"}, {Removed: 0, Status: "ok"}}}
	failed := &CleanupRecord{Cleanups: []CleanupEntry{{At: "2026-12-01T10:00:00Z", Status: "failed"}}}
	capacity := killed()
	capacity.Command = "capacity"
	selfCleaned := killed()
	selfCleaned.CleanupStatus = "ok"
	for _, c := range []struct {
		name   string
		m      *Meta
		run    int
		reason string
		rec    *CleanupRecord
		want   string
	}{
		{"cleaned later", killed(), 3, "", ok, "stopped after 3 of 8 planned steps (interrupted: killed; cleaned up later by `credhub-perf cleanup`: 500 credentials removed)"},
		{"not cleaned", killed(), 3, "", nil, "stopped after 3 of 8 planned steps (interrupted: killed; cleanup not-run: credentials may be left under /credhub-perf/r1/set; remove them with `credhub-perf cleanup --run-id r1`)"},
		{"cleanup failed", killed(), 3, "", failed, "stopped after 3 of 8 planned steps (interrupted: killed; `credhub-perf cleanup` failed at 2026-12-01T10:00:00Z: credentials may be left under /credhub-perf/r1/set)"},
		{"abort, cleaned by the run", selfCleaned, 2, "abort: error rate", nil, "stopped after 2 of 8 planned steps (abort: error rate)"},
		{"complete", killed(), 8, "", ok, ""},
		{"capacity", capacity, 3, "", ok, ""},
		{"no plan recorded", &Meta{}, 3, "", nil, ""},
		{"no meta", nil, 3, "", nil, ""},
	} {
		if got := StoppedNote(c.m, c.run, c.reason, c.rec); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}
