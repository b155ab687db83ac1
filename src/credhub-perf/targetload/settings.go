package targetload

import (
	"fmt"
	"sort"
	"time"
)

// Settings is what a run sampled of the target, for meta.json's
// `target_load`: the sources, the resources, the PIDs a process source
// resolved them to and their CPUs (at its last read), and, per source,
// the first few problems it reported (a director that did not answer),
// so a run without samples says why.
type Settings struct {
	Sources   []string            `json:"sources"`
	Resources []string            `json:"resources"`
	PIDs      map[string][]int    `json:"pids,omitempty"`
	CPUs      map[string]string   `json:"cpus,omitempty"`
	Problems  map[string][]string `json:"problems,omitempty"`
}

// maxProblems bounds the problems kept per source.
const maxProblems = 3

// stuckRead: a read under way this long is a problem worth naming, even
// before its own timeout says so.
const stuckRead = 5 * time.Second

// stuckText says a source's read has not answered.
func stuckText(src Source, d time.Duration) string {
	d = d.Truncate(time.Second)
	if b, ok := src.(*BoshSource); ok {
		return fmt.Sprintf("bosh vms --vitals for deployment %s: the director did not answer (a call under way for %s)", b.Deployment, d)
	}
	return fmt.Sprintf("a read under way for %s has not answered", d)
}

// Settings says what was sampled so far.
func (s *Sampler) Settings() *Settings {
	out := &Settings{Sources: s.Sources(), Resources: []string{}}
	res := map[string]bool{}
	for _, src := range s.sources {
		switch x := src.(type) {
		case *ProcSource:
			for _, t := range x.Targets {
				res[t.Resource] = true
			}
			pids, cpus := x.Resolved()
			if len(pids) > 0 {
				out.PIDs, out.CPUs = pids, cpus
			}
		case *BoshSource:
			for _, rs := range x.Groups {
				for _, r := range rs {
					res[r] = true
				}
			}
		case *SimSource:
			res[CredHub], res[Database] = true, true
		}
	}
	for r := range res {
		out.Resources = append(out.Resources, r)
	}
	sort.Slice(out.Resources, func(i, j int) bool { return order(out.Resources[i]) < order(out.Resources[j]) })
	s.mu.Lock()
	defer s.mu.Unlock()
	add := func(src string, ps ...string) {
		if out.Problems == nil {
			out.Problems = map[string][]string{}
		}
		out.Problems[src] = append(out.Problems[src], ps...)
	}
	for src, ps := range s.problems {
		add(src, ps...)
	}
	// Not kept: its text changes with every look.
	for i, src := range s.sources {
		if b := s.began[i].Load(); b != 0 {
			if d := time.Since(time.Unix(0, b)); d > stuckRead {
				add(src.Name(), stuckText(src, d))
			}
		}
	}
	return out
}

// ProblemList is the sources' problems in one list, "source: problem".
func (st *Settings) ProblemList() []string {
	if st == nil {
		return nil
	}
	var out []string
	for src, ps := range st.Problems {
		for _, p := range ps {
			out = append(out, src+": "+p)
		}
	}
	sort.Strings(out)
	return out
}

// noteProblem keeps a source's problem (s.mu held).
func (s *Sampler) noteProblem(src, w string) {
	if s.problems == nil {
		s.problems = map[string][]string{}
	}
	ps := s.problems[src]
	for _, p := range ps {
		if p == w {
			return
		}
	}
	if len(ps) < maxProblems {
		s.problems[src] = append(ps, clip(w, 300))
	}
}
