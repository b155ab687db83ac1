package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"

	"github.com/credhub-perf/credhub-perf/results"
	"github.com/credhub-perf/credhub-perf/workload"
)

// Format is the format id of the workload.json this package reads: the
// one package workload writes.
const Format = workload.Format

// MaxFileBytes bounds the file: a workload.json holds counts, not names
// (unless --keep-names lists the top ones), so it is a few kilobytes.
const MaxFileBytes = 16 << 20

// totalWeight is what the mix weights add up to (config's mix.* bound).
const totalWeight = 1000000

// Set bodies smaller or larger than seed.bytes allows are sent at the
// nearest size it allows.
const minSetBytes, maxSetBytes = 64, 60000

// maxZipfS bounds popularity.zipf_s (load's {{zipf N S}} bound).
const maxZipfS = 5.0

var typeID = regexp.MustCompile(`\A[a-z][a-z0-9_]{0,63}\z`)

type file struct {
	Format   *string `json:"format"`
	Requests *int64  `json:"requests"`
	Types    []wType `json:"types"`
	Popular  *struct {
		ZipfS *float64 `json:"zipf_s"`
	} `json:"popularity"`
}

type wType struct {
	Type       *string  `json:"type"`
	Requests   *int64   `json:"requests"`
	Share      *float64 `json:"share"`
	Scenario   *string  `json:"scenario"`
	Replayable *bool    `json:"replayable"`
	BodyBytes  *struct {
		P50 *float64 `json:"p50"`
	} `json:"body_bytes"`
}

// Load reads path and returns the workload a run replays. Every error is
// one line starting "workload PATH:".
func Load(path string) (*results.Workload, error) {
	data, err := readBounded(path)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", path, err)
	}
	w, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", path, err)
	}
	sum := sha256.Sum256(data)
	w.File, w.SHA256 = path, hex.EncodeToString(sum[:])
	return w, nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errors.New("no such file: give the workload.json that `credhub-perf workload LOG...` wrote")
	}
	if err != nil {
		return nil, fmt.Errorf("cannot open: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, errors.New("is a directory: give the workload.json file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read: %w", err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("larger than %d MiB: not a workload.json (it holds counts, a few kilobytes)", MaxFileBytes>>20)
	}
	return data, nil
}

// parse checks the document and derives the run's workload from it.
func parse(data []byte) (*results.Workload, error) {
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not valid JSON (%s): give the workload.json that `credhub-perf workload` wrote", oneLine(err.Error()))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object: give one workload.json document")
	}
	if f.Format == nil || *f.Format != Format {
		got := "none"
		if f.Format != nil {
			got = fmt.Sprintf("%q", *f.Format)
		}
		return nil, fmt.Errorf("format is %s, want %q: give a workload.json of this credhub-perf's `workload` command", truncate(got), Format)
	}
	if f.Requests == nil || *f.Requests <= 0 {
		return nil, errors.New("requests is missing or not above 0: the log gave no request to replay")
	}
	if len(f.Types) == 0 {
		return nil, errors.New("types is missing or empty: the log gave no request type to replay")
	}
	w := &results.Workload{Requests: *f.Requests, NotSent: []results.WorkloadType{}}
	shares, err := checkTypes(f.Types, *f.Requests, w)
	if err != nil {
		return nil, err
	}
	if err := setWeights(w, shares); err != nil {
		return nil, err
	}
	if f.Popular != nil && f.Popular.ZipfS != nil {
		s := *f.Popular.ZipfS
		if !(s >= 0 && s <= maxZipfS) {
			return nil, fmt.Errorf("popularity.zipf_s %g is out of range: want 0 (uniform) to %g", s, maxZipfS)
		}
		w.ZipfS = s
	}
	return w, nil
}
