package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/credhub-perf/credhub-perf/results"
)

// summaryDoc is what `credhub-perf summary --json` writes: the summary as
// summary.json holds it, and what headroom-plot takes from credhub-perf
// rather than deciding itself: why the run has no capacity, and which of
// the files' own steps each step is made of and the merge's warnings (the
// several testers' merge).
type summaryDoc struct {
	Summary          *results.Summary `json:"summary"`
	NoCapacityReason string           `json:"no_capacity_reason"`
	MergeWarnings    []string         `json:"merge_warnings"`
	Steps            []summaryDocStep `json:"steps"`
}

type summaryDocStep struct {
	Step  int                `json:"step"`
	Parts []results.StepPart `json:"parts"`
}

// summaryJSON writes the summaryDoc of one run: a run directory, or the
// CSV files of one run's testers. It writes no file, so a run directory
// may be read-only; forced: the figures are for slo even where the run
// directory has a summary.json with its own.
func summaryJSON(args []string, slo results.SLO, forced bool, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "credhub-perf summary: %s\n", strings.Join(strings.Fields(err.Error()), " "))
		return 2
	}
	var sum *results.Summary
	st, err := os.Stat(args[0])
	switch {
	case err != nil:
		return fail(err)
	case st.IsDir() && len(args) == 1:
		sum, err = results.SummarizeDirAt(args[0], slo, forced)
	case st.IsDir():
		return fail(fmt.Errorf("--json reads one run: one RUN_DIR, or the CSV files of one run"))
	default:
		for _, p := range args {
			if !strings.HasSuffix(p, ".csv") {
				return fail(fmt.Errorf("%s is not a run directory or a CSV file", p))
			}
		}
		sum, err = results.SummarizeFiles(args, slo)
	}
	if err != nil {
		return fail(err)
	}
	doc := summaryDoc{Summary: sum, NoCapacityReason: sum.NoCapacityReason(), MergeWarnings: append([]string{}, sum.MergeWarnings()...), Steps: []summaryDocStep{}}
	for _, s := range sum.Steps {
		parts := s.Parts()
		if parts == nil {
			parts = []results.StepPart{}
		}
		doc.Steps = append(doc.Steps, summaryDocStep{Step: s.Step, Parts: parts})
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fail(err)
	}
	if _, err := stdout.Write(append(b, '\n')); err != nil {
		return fail(fmt.Errorf("writing the JSON document: %w", err))
	}
	return 0
}

// jsonMaxLatency is the largest SLO latency --json takes: the longest
// response time a results file holds, so that any SLO headroom-plot
// accepts has its summary.
func jsonMaxLatency() (time.Duration, string) {
	return results.MaxDurationS * time.Second, fmt.Sprintf("%d s", results.MaxDurationS)
}
