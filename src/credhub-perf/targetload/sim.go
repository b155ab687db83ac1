package targetload

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"
)

// SimPath is credhub-sim's utilisation endpoint.
const SimPath = "/utilisation"

// SimSource reads credhub-sim's modelled utilisation: per emulated
// instance and for its database, the busy time its capacity model gave
// them, cumulative, on the model's clock.
type SimSource struct {
	URL    string // the sim's base URL (target.url)
	Client *http.Client
	// Authorize adds credentials to the request (a UAA token), when the
	// client certificate alone is not how the run authenticates.
	Authorize func(*http.Request) error
	Every     time.Duration
	// Timeout bounds one read (0: SimTimeout): a sim that hangs must not
	// hold up the step ends that read it.
	Timeout time.Duration
}

// SimTimeout is a read's default bound: the sim answers from memory in
// milliseconds, so a read this slow will not give a timely figure.
const SimTimeout = 2 * time.Second

func (s *SimSource) Name() string { return "credhub-sim" }

func (s *SimSource) Interval() time.Duration {
	if s.Every > 0 {
		return s.Every
	}
	return time.Second
}

// SimReport is the endpoint's answer.
type SimReport struct {
	NowS      float64       `json:"now_s"`
	Instances []SimResource `json:"instances"`
	Database  *SimResource  `json:"database,omitempty"`
	// Machines: present when the sim models resources on shared cores.
	Machines []SimMachine `json:"machines,omitempty"`
}

// SimResource is one modelled resource: its cores and the core-seconds
// it was busy since the sim started; Machine names the SimMachine whose
// cores it runs on, when the sim models shared cores.
type SimResource struct {
	Name    string  `json:"name"`
	Cores   float64 `json:"cores"`
	BusyS   float64 `json:"busy_s"`
	Machine string  `json:"machine,omitempty"`
}

// SimMachine is a modelled machine: core-seconds its cores were busy
// (resources and neighbour), of which the neighbour's, and stolen;
// cumulative on the model's clock.
type SimMachine struct {
	Name       string   `json:"name"`
	Cores      float64  `json:"cores"`
	BusyS      float64  `json:"busy_s"`
	OtherBusyS *float64 `json:"other_busy_s,omitempty"`
	StealS     *float64 `json:"steal_s,omitempty"`
}

func (s *SimSource) Read(ctx context.Context) ([]Reading, []string) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = SimTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := strings.TrimRight(s.URL, "/") + SimPath
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, []string{fmt.Sprintf("credhub-sim utilisation: %v", err)}
	}
	if s.Authorize != nil {
		if err := s.Authorize(req); err != nil {
			return nil, []string{fmt.Sprintf("credhub-sim utilisation: %v", err)}
		}
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		if cctx.Err() != nil {
			return nil, []string{fmt.Sprintf("credhub-sim utilisation: GET %s did not answer within %s; its samples are missing", url, timeout)}
		}
		return nil, []string{fmt.Sprintf("credhub-sim utilisation: GET %s: %v", url, err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil && cctx.Err() != nil {
		return nil, []string{fmt.Sprintf("credhub-sim utilisation: GET %s did not finish its answer within %s; its samples are missing", url, timeout)}
	}
	if err != nil {
		return nil, []string{fmt.Sprintf("credhub-sim utilisation: reading the answer: %v", err)}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, []string{fmt.Sprintf("credhub-sim utilisation: GET %s answered %d (a credhub-sim without %s, or not credhub-sim at all)", url, resp.StatusCode, SimPath)}
	}
	return ParseSimReport(body)
}

// ParseSimReport reads the endpoint's JSON.
func ParseSimReport(body []byte) ([]Reading, []string) {
	var rep SimReport
	if err := json.Unmarshal(body, &rep); err != nil {
		return nil, []string{fmt.Sprintf("credhub-sim utilisation: the answer is not its JSON: %v", err)}
	}
	if !finite(rep.NowS) || rep.NowS < 0 {
		return nil, []string{fmt.Sprintf("credhub-sim utilisation: now_s %v is not a time", rep.NowS)}
	}
	at := time.Unix(0, 0).Add(seconds(math.Min(rep.NowS, 1e9)))
	var out []Reading
	var warnings []string
	add := func(res string, r SimResource) {
		if !finite(r.BusyS) || r.BusyS < 0 || r.BusyS > 1e12 || !finite(r.Cores) || r.Cores <= 0 || r.Cores > 1e4 {
			warnings = append(warnings, fmt.Sprintf("credhub-sim utilisation: %s reports cores %v, busy_s %v: not usable", r.Name, r.Cores, r.BusyS))
			return
		}
		rd := Reading{Resource: res, Instance: clip(r.Name, 64), At: at, Busy: seconds(r.BusyS), Cores: r.Cores, Share: math.NaN(), RSSBytes: -1}
		if r.Machine != "" {
			m, w := simMachine(rep, r.Machine)
			if w != "" {
				warnings = append(warnings, w)
			} else {
				rd.Machine, rd.CPUs, rd.Counters = clip(r.Machine, 64), cores(m.Cores).String(), m.counters(rep.NowS)
			}
		}
		out = append(out, rd)
	}
	for _, in := range rep.Instances {
		add(CredHub, in)
	}
	if rep.Database != nil {
		add(Database, *rep.Database)
	}
	if len(rep.Instances) == 0 {
		warnings = append(warnings, "credhub-sim utilisation: the sim models no instances (start it with -workers K)")
	}
	return out, warnings
}

// simMachine finds a resource's machine in the report.
func simMachine(rep SimReport, name string) (SimMachine, string) {
	for _, m := range rep.Machines {
		if m.Name != name {
			continue
		}
		ok := finite(m.BusyS) && m.BusyS >= 0 && m.BusyS <= 1e12 && finite(m.Cores) && m.Cores >= 1 && m.Cores <= 1e4
		for _, f := range []*float64{m.OtherBusyS, m.StealS} {
			ok = ok && (f == nil || (finite(*f) && *f >= 0 && *f <= m.BusyS+1e12))
		}
		if !ok {
			return m, fmt.Sprintf("credhub-sim utilisation: machine %s reports cores %v, busy_s %v: not usable", clip(name, 64), m.Cores, m.BusyS)
		}
		return m, ""
	}
	return SimMachine{}, fmt.Sprintf("credhub-sim utilisation: machine %q is not among its machines", clip(name, 64))
}

// counters are the machine's figures as a process source's: its cores'
// time is cores x now_s; what the neighbour did not use, the resources
// did; no iowait in the model.
func (m SimMachine) counters(now float64) *MachineCounters {
	c := &MachineCounters{Total: m.Cores * now, Busy: m.BusyS, Steal: -1, Iowait: -1, Sampled: -1}
	if m.StealS != nil {
		c.Steal = *m.StealS
	}
	if m.OtherBusyS != nil {
		c.Sampled = math.Max(m.BusyS-*m.OtherBusyS, 0)
	}
	return c
}

// cores is CPUs 0 to n-1.
func cores(n float64) CPUSet {
	var s CPUSet
	for i := 0; i < int(n) && i < maxCPU; i++ {
		s = append(s, i)
	}
	return s
}
