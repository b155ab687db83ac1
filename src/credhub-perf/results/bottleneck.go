package results

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/credhub-perf/credhub-perf/targetload"
)

// The target side of a run: package targetload samples and judges; these
// hooks carry its figures into summary.json and summary.txt.

// stepSpan is when a step's requests ran, offsets on the CSV origin
// (first start to last end, over every tester).
type stepSpan struct{ start, end time.Duration }

// SetSpan records when the step ran, so target samples can be attributed
// to it.
func (st *SummaryStep) SetSpan(start, end time.Duration) { st.span = stepSpan{start, end} }

// AttachTargetLoad attributes samples to the steps by time.
func (s *Summary) AttachTargetLoad(samples []targetload.Sample) {
	for i := range s.Steps {
		st := &s.Steps[i]
		if st.span.end > st.span.start {
			st.Target = targetload.Judge(samples, st.span.start, st.span.end)
		}
	}
}

// attachTargetFile reads a run directory's samples file, if any. Its
// presence says sampling was configured; a file without a sample within
// a step leaves that step without figures, never with zeros.
func (s *Summary) attachTargetFile(dir string) {
	path := filepath.Join(dir, targetload.FileName)
	samples, warnings, err := targetload.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		s.Warnings = append(s.Warnings, fmt.Sprintf("target samples not used: %v", oneLineErr(err)))
		return
	}
	s.Warnings = append(s.Warnings, warnings...)
	if len(s.TargetSources) == 0 {
		seen := map[string]bool{}
		for _, x := range samples {
			if !seen[x.Source] {
				seen[x.Source] = true
				s.TargetSources = append(s.TargetSources, x.Source)
			}
		}
		if len(s.TargetSources) == 0 {
			s.TargetSources = []string{"none answered"}
		}
	}
	s.AttachTargetLoad(samples)
}

// judgeBottleneck sets the run's verdict from the steps that count as
// capacity (and met the SLO); once, for the run, when nothing was sampled.
func (s *Summary) judgeBottleneck() {
	var in []targetload.StepInput
	any := false
	for _, st := range s.Steps {
		any = any || st.Target != nil
		in = append(in, targetload.StepInput{Step: st.Step, Load: st.Target, Counts: st.Requests > 0 && st.MeetsSLO && s.CountsStep(st), TesterBound: st.TesterBound,
			TesterReason: st.TesterBoundReason, TesterSteal: st.HostSteal})
	}
	if !any && len(s.TargetSources) == 0 {
		// Said once, in summary.txt; summary.json has no bottleneck.
		s.Bottleneck = nil
		return
	}
	s.Bottleneck = targetload.JudgeRun(in)
	if s.Bottleneck.Resource == "" && !any && len(s.TargetProblems) > 0 {
		// Without a sample the verdict alone cannot say why; the sources'
		// own words can (a director that did not answer).
		s.Bottleneck.Verdict += "; " + strings.Join(s.TargetProblems[:min(2, len(s.TargetProblems))], "; ")
	}
}

// TargetLine is a step's target figures in one line, for the live output
// and summary.txt: "CredHub instances 92 % CPU, database 40 % CPU".
func TargetLine(t *targetload.StepLoad) string {
	if t == nil {
		return "no target sample within the step"
	}
	var parts []string
	for _, r := range t.Resources {
		p := r.Label + " "
		if r.CPU != nil {
			p += fmt.Sprintf("%.0f %% CPU", 100**r.CPU)
		} else {
			p += "CPU unknown"
		}
		if r.RSSBytes != nil {
			p += fmt.Sprintf(", %.0f MiB", float64(*r.RSSBytes)/(1<<20))
		}
		parts = append(parts, p)
	}
	for _, m := range t.Machines {
		parts = append(parts, targetload.MachineText(m))
	}
	return strings.Join(parts, "; ")
}

// writeTarget writes the target's figures per step and the verdict.
func (s *Summary) writeTarget(w io.Writer) {
	if s.Bottleneck == nil {
		fmt.Fprintf(w, "bottleneck: %s\n", targetload.NotConfigured().Verdict)
		return
	}
	for _, st := range s.Steps {
		if st.Target != nil {
			fmt.Fprintf(w, "target at step %d (%.1f req/s): %s\n", st.Step, st.Throughput, TargetLine(st.Target))
		}
	}
	at := ""
	if s.Bottleneck.CPU != nil && s.Bottleneck.Step > 0 && !math.IsNaN(*s.Bottleneck.CPU) {
		at = fmt.Sprintf(" (step %d)", s.Bottleneck.Step)
	}
	src := ""
	if len(s.TargetSources) > 0 {
		src = " [sampled: " + strings.Join(s.TargetSources, ", ") + "]"
	}
	fmt.Fprintf(w, "bottleneck: %s%s%s\n", s.Bottleneck.Verdict, at, src)
}
