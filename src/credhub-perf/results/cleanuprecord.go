package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CleanupRecordFile is the file in a run directory in which `credhub-perf
// cleanup` records what it removed for that run after the run itself
// could not (killed, its VM lost, its cleanup failed): meta.json alone
// said only that the run had stopped, and a later summary could not tell
// a run whose credentials were removed from one whose were not.
const CleanupRecordFile = "cleanup.json"

// CleanupRecord is cleanup.json: one entry per `credhub-perf cleanup` of
// the run that named (or found) this directory, oldest first.
type CleanupRecord struct {
	Cleanups []CleanupEntry `json:"cleanups"`
}

// CleanupEntry is one `credhub-perf cleanup`.
type CleanupEntry struct {
	At      string `json:"at"` // RFC3339 UTC
	RunID   string `json:"run_id"`
	Command string `json:"command"` // "credhub-perf cleanup"
	// Path is where it deleted (the scenario's credential path), and
	// Removed how many credentials it deleted there; RemovedTotal also
	// counts what it found elsewhere under the run's path.
	Path         string `json:"credential_path"`
	Removed      int64  `json:"removed"`
	RemovedTotal int64  `json:"removed_total"`
	Status       string `json:"status"` // ok | failed
	Error        string `json:"error,omitempty"`
}

// ReadCleanupRecord reads dir's cleanup.json; nil, nil when there is none.
func ReadCleanupRecord(dir string) (*CleanupRecord, error) {
	b, err := os.ReadFile(filepath.Join(dir, CleanupRecordFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r CleanupRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, CleanupRecordFile), err)
	}
	return &r, nil
}

// AppendCleanupRecord adds e to dir's cleanup.json (a repeated cleanup
// adds an entry; an unreadable file is replaced, since what it held is
// lost anyway).
func AppendCleanupRecord(dir string, e CleanupEntry) error {
	r, _ := ReadCleanupRecord(dir)
	if r == nil {
		r = &CleanupRecord{}
	}
	r.Cleanups = append(r.Cleanups, e)
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, CleanupRecordFile), append(b, '\n'), 0o644)
}

// StoppedNote is summary.json's `stopped`: a run that did not complete its
// planned steps says how far it got, why, and whether its credentials were
// removed later, e.g. "stopped after 3 of 8 planned steps (interrupted;
// cleaned up later by `credhub-perf cleanup`: 512 credentials removed)".
// "" for a run that completed its plan, a capacity search (its probe
// budget is a bound, not a plan) and a run from before planned_steps.
// run is how many steps have figures; m is tester 0's meta.json (or the
// only one), rec the directory's cleanup.json (nil: none).
func StoppedNote(m *Meta, run int, reason string, rec *CleanupRecord) string {
	if m == nil || m.Command == "capacity" || m.PlannedSteps <= 0 || run >= m.PlannedSteps {
		return ""
	}
	if reason == "" {
		reason = m.endReason()
	}
	if reason == "" {
		// Fewer steps than planned, and neither the run nor its meta says
		// why: meta.json was last written before the end.
		reason = "no reason recorded"
	}
	var last *CleanupEntry
	var removed int64 // over every cleanup: a repeated one finds nothing more
	if rec != nil && len(rec.Cleanups) > 0 {
		last = &rec.Cleanups[len(rec.Cleanups)-1]
		for _, e := range rec.Cleanups {
			removed += e.Removed
		}
	}
	parts := []string{reason}
	switch {
	case last != nil && last.Status == "ok":
		parts = append(parts, fmt.Sprintf("cleaned up later by `credhub-perf cleanup`: %d credentials removed", removed))
	case last != nil:
		parts = append(parts, "`credhub-perf cleanup` failed at "+last.At+": credentials may be left under "+m.CredentialPath)
	case m.CleanupStatus == "ok" || m.CleanupStatus == "skipped":
		// The run cleaned up itself, or was told not to.
	default:
		parts = append(parts, fmt.Sprintf("cleanup %s: credentials may be left under %s; remove them with `credhub-perf cleanup --run-id %s`", orNotRun(m.CleanupStatus), m.CredentialPath, m.RunID))
	}
	return fmt.Sprintf("stopped after %d of %d planned steps (%s)", run, m.PlannedSteps, strings.Join(parts, "; "))
}

func orNotRun(s string) string {
	if s == "" {
		return "not run"
	}
	return s
}
