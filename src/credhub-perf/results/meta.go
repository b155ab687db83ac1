package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// MetaStep is one step of meta.json's `steps`.
type MetaStep struct {
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"rate"`
	Requests    int64   `json:"requests"`
	DurationS   float64 `json:"duration_s"`
}

// Seed is meta.json's `seed`.
type Seed struct {
	Credentials int `json:"credentials"`
	Bytes       int `json:"bytes"`
}

// MetaSLO is meta.json's `slo`.
type MetaSLO struct {
	Percentile float64 `json:"percentile"`
	LatencyS   float64 `json:"latency_s"`
}

// Abort is the abort policy in force (an addition to the contract).
type Abort struct {
	MaxErrorRate     float64 `json:"max_error_rate"`
	MaxLatencyS      float64 `json:"max_latency_s"`
	Percentile       float64 `json:"percentile"`
	ConsecutiveSteps int     `json:"consecutive_steps"`
}

// Meta is meta.json: what was run. Fields are added, never renamed; the
// first block is the contract of docs/design.md.
type Meta struct {
	ToolVersion string     `json:"tool_version"`
	Scenario    string     `json:"scenario"`
	TargetURL   string     `json:"target_url"`
	Label       string     `json:"label"`
	Instances   *int       `json:"instances"`
	Tester      int        `json:"tester"`
	Testers     int        `json:"testers"`
	Mode        string     `json:"mode"`
	Steps       []MetaStep `json:"steps"`
	Keepalive   bool       `json:"keepalive"`
	TLS         string     `json:"tls"`
	Seed        Seed       `json:"seed"`
	Cleanup     string     `json:"cleanup"`
	SLO         MetaSLO    `json:"slo"`
	StartedAt   string     `json:"started_at"`
	EndedAt     string     `json:"ended_at"`
	Host        string     `json:"host"`

	// Additions.
	RunID           string  `json:"run_id"`
	Command         string  `json:"command"` // run | capacity
	Auth            string  `json:"auth"`    // mtls | uaa
	StartAt         string  `json:"start_at,omitempty"`
	WarmupS         float64 `json:"warmup_s"`
	PlannedSteps    int     `json:"planned_steps"`
	Abort           Abort   `json:"abort"`
	StoppedReason   string  `json:"stopped_reason"`
	Status          string  `json:"status"` // running | ok | failed | interrupted
	Error           string  `json:"error,omitempty"`
	CleanupStatus   string  `json:"cleanup_status"` // skipped | ok | failed | not-run
	CleanupError    string  `json:"cleanup_error,omitempty"`
	CleanupDeleted  int64   `json:"cleanup_deleted"`
	CredentialPath  string  `json:"credential_path"`
	ResultsFile     string  `json:"results_file"`
	SeededByTester0 bool    `json:"seeded_by_tester_0"`
}

// WriteMeta writes meta.json into dir.
func WriteMeta(dir string, m *Meta) error {
	return WriteMetaFile(filepath.Join(dir, "meta.json"), m)
}

// WriteMetaFile writes m as JSON to path.
func WriteMetaFile(path string, m *Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

// ReadMeta reads dir/meta.json.
func ReadMeta(dir string) (*Meta, error) {
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "meta.json"), err)
	}
	return &m, nil
}
