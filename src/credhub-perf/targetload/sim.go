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
}

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
}

// SimResource is one modelled resource: its cores and the core-seconds
// it was busy since the sim started.
type SimResource struct {
	Name  string  `json:"name"`
	Cores float64 `json:"cores"`
	BusyS float64 `json:"busy_s"`
}

func (s *SimSource) Read(ctx context.Context) ([]Reading, []string) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
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
		return nil, []string{fmt.Sprintf("credhub-sim utilisation: GET %s: %v", url, err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
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
		out = append(out, Reading{Resource: res, Instance: r.Name, At: at, Busy: seconds(r.BusyS), Cores: r.Cores, Share: math.NaN(), RSSBytes: -1})
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
