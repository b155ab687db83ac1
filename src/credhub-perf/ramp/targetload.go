package ramp

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/credhub-perf/credhub-perf/results"
	"github.com/credhub-perf/credhub-perf/targetload"
	"github.com/credhub-perf/credhub-perf/tlsclient"
)

// targetSources builds the configured target samplers (package
// targetload); none when target_load names nothing.
func (r *runner) targetSources() ([]targetload.Source, error) {
	c := r.c.TargetLoad
	var out []targetload.Source
	if len(c.Processes) > 0 {
		p := &targetload.ProcSource{Every: c.Interval.D()}
		for _, s := range c.Processes {
			t, err := targetload.ParseProcTarget(s)
			if err != nil {
				return nil, fmt.Errorf("target_load.processes: %w", err)
			}
			p.Targets = append(p.Targets, t)
		}
		out = append(out, p)
	}
	if c.CredHubSim {
		tc, err := tlsclient.Build(tlsOptions(r.c))
		if err != nil {
			return nil, fmt.Errorf("target_load.credhub_sim: %w", err)
		}
		src := &targetload.SimSource{URL: r.c.Target.URL, Every: c.Interval.D(),
			Client: &http.Client{Transport: &http.Transport{TLSClientConfig: tc.TLS}, Timeout: targetload.SimTimeout}}
		if r.token != nil {
			src.Authorize = r.token.Authorize
		}
		out = append(out, src)
	}
	if c.BoshDeployment != "" {
		groups, err := targetload.ParseGroups(c.BoshGroups)
		if err != nil {
			return nil, fmt.Errorf("target_load.bosh_groups: %w", err)
		}
		var env []string
		for k, v := range map[string]string{"BOSH_ENVIRONMENT": c.BoshEnvironment, "BOSH_CLIENT": c.BoshClient, "BOSH_CLIENT_SECRET": c.BoshClientSecret, "BOSH_CA_CERT": c.BoshCACert} {
			if v != "" {
				env = append(env, k+"="+v)
			}
		}
		out = append(out, &targetload.BoshSource{Deployment: c.BoshDeployment, Groups: groups, Env: env, Timeout: c.BoshTimeout.D(), Secret: c.BoshClientSecret})
	}
	return out, nil
}

// startTargetLoad samples the target for the scenario's steps, into
// target-samples.csv, on the CSV's origin (s.runStart). Tester 0 samples
// for every tester: the target is the same. The returned stop ends it.
func (s *scenarioState) startTargetLoad(ctx context.Context) func() {
	r := s.r
	if !r.tester0() {
		return func() {}
	}
	sources, err := r.targetSources()
	if err != nil {
		r.log.Printf("warning: target load not sampled: %v", err)
		return func() {}
	}
	if len(sources) == 0 {
		r.log.Printf("target load: not sampled (no target_load source configured): the summary cannot say whether CredHub, its database or something else ended capacity")
		return func() {}
	}
	w, err := targetload.Create(filepath.Join(s.dir, targetload.FileName))
	if err != nil {
		r.log.Printf("warning: target load: %v; samples are kept for the summary only", err)
		w = nil
	}
	s.target = targetload.NewSampler(sources, s.runStart, r.o.Clock.Now, w, func(m string) { r.log.Printf("%s", m) })
	s.sum.TargetSources = s.target.Sources()
	r.log.Printf("target load: sampling %s", strings.Join(s.target.Sources(), ", "))
	s.target.Start(ctx)
	return func() {
		if err := s.target.Stop(); err != nil {
			r.log.Printf("warning: target load: closing %s: %v", targetload.FileName, err)
		}
	}
}

// judgeTarget attributes to the step the samples within its rows' span
// (offsets, from its first request's start to its last response's end),
// as a recomputation from the run directory does, and prints them.
func (s *scenarioState) judgeTarget(ctx context.Context, step *results.SummaryStep, i, total int, from, to time.Duration) {
	if s.target == nil {
		return
	}
	settings := s.target.Settings()
	s.meta.TargetLoad, s.sum.TargetProblems = settings, settings.ProblemList()
	if step.Requests == 0 {
		return
	}
	s.target.SampleNow(ctx)
	step.SetSpan(from, to)
	step.Target = targetload.Judge(s.target.Between(from, to), from, to)
	s.r.log.Printf("step %d/%d target: %s", i+1, total, results.TargetLine(step.Target))
}
