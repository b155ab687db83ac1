package targetload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// VitalsWindow is how long a BOSH vitals CPU figure averages over:
// bosh-agent collects CPU statistics every 10 s
// (platform.SigarStatsCollectionInterval) and reports the last window.
const VitalsWindow = 10 * time.Second

// BoshSource samples a deployment's instance groups through the director
// by running `bosh -d DEPLOYMENT vms --vitals --json`. Director
// credentials reach the command in Env (BOSH_ENVIRONMENT, BOSH_CLIENT,
// BOSH_CLIENT_SECRET, BOSH_CA_CERT), never on its command line, and are
// never printed.
type BoshSource struct {
	Command    string // the bosh CLI; "" = bosh on PATH
	Deployment string
	// Groups maps an instance group to the resources it runs (credhub,
	// database; both when they are colocated on its VMs); groups not
	// listed are not sampled.
	Groups  map[string][]string
	Env     []string
	Timeout time.Duration // one call; 0 = 60 s
	Every   time.Duration // between calls; at least VitalsWindow
	// Secret is removed from anything bosh prints before it is warned of.
	Secret string
}

func (b *BoshSource) Name() string { return "bosh" }

func (b *BoshSource) Interval() time.Duration { return max(b.Every, VitalsWindow) }

// Read runs the vitals command once.
func (b *BoshSource) Read(ctx context.Context) ([]Reading, []string) {
	timeout := b.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmdName := b.Command
	if cmdName == "" {
		cmdName = "bosh"
	}
	cmd := exec.CommandContext(cctx, cmdName, "-d", b.Deployment, "vms", "--vitals", "--json")
	cmd.Env = append(cmd.Environ(), b.Env...)
	killGroupOnCancel(cmd)
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limited{b: &stdout, n: 8 << 20}, &limited{b: &stderr, n: 64 << 10}
	err := cmd.Run()
	now := time.Now()
	if cctx.Err() == context.DeadlineExceeded {
		return nil, []string{fmt.Sprintf("bosh vms --vitals for deployment %s: the director did not answer within %s; its samples are missing", b.Deployment, timeout)}
	}
	if ctx.Err() != nil {
		return nil, nil
	}
	if err != nil {
		msg := firstLine(stderr.String(), stdout.String())
		if b.Secret != "" {
			msg = strings.ReplaceAll(msg, b.Secret, "REDACTED")
		}
		return nil, []string{fmt.Sprintf("bosh vms --vitals for deployment %s failed (%v): %s; the director refuses or cannot give vitals, so the deployment is not sampled (see docs/bosh.md for the credentials it needs)", b.Deployment, err, msg)}
	}
	rs, warnings, err := ParseVitals(stdout.Bytes(), b.Groups, now)
	if err != nil {
		return nil, []string{fmt.Sprintf("bosh vms --vitals for deployment %s: %v", b.Deployment, err)}
	}
	return rs, warnings
}

// limited keeps the first n bytes written and drops the rest.
type limited struct {
	b *bytes.Buffer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// firstLine is the first non-empty line of the texts, cut short: bosh
// prints its error on stderr, or in its JSON "Lines" on stdout.
func firstLine(texts ...string) string {
	for _, t := range texts {
		for _, l := range strings.Split(t, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				if len(l) > 200 {
					l = l[:200] + "..."
				}
				return l
			}
		}
	}
	return "no output"
}

// vitalsOutput is what `bosh ... --json` prints: tables of rows whose keys
// are the column headers in lower case with spaces and punctuation as _
// (cpu_user, cpu_sys, memory_usage).
type vitalsOutput struct {
	Tables []struct {
		Rows []map[string]any `json:"Rows"`
	} `json:"Tables"`
	Lines []string `json:"Lines"`
}

// ParseVitals reads the vitals JSON: per instance of a listed group, CPU
// user+sys as a share of the VM (the agent's percentages are of all its
// cores) and the memory in use. Each instance is a machine, "vm
// GROUP/ID": the vitals are the whole VM's, every job on it. A group of
// one resource gives that resource the VM's figures; a group of several
// (colocated) gives each the VM's busy share only, as the vitals cannot
// tell their jobs apart.
func ParseVitals(data []byte, groups map[string][]string, at time.Time) ([]Reading, []string, error) {
	var out vitalsOutput
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, nil, fmt.Errorf("output is not bosh's JSON: %v", err)
	}
	if len(out.Tables) == 0 {
		return nil, nil, errors.New("output holds no table of VMs")
	}
	var rs []Reading
	var warnings []string
	seen := map[string]bool{}
	for _, row := range out.Tables[0].Rows {
		inst, _ := row["instance"].(string)
		group, _, _ := strings.Cut(inst, "/")
		res, ok := groups[group]
		if !ok {
			continue
		}
		seen[group] = true
		share, err := vitalsShare(row)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("bosh vitals of %s: %v; instance not sampled", clip(inst, 80), err))
			continue
		}
		machine := "vm " + clip(inst, 80)
		if len(res) > 1 {
			for _, r := range res {
				rs = append(rs, Reading{Resource: r, Instance: clip(inst, 80), At: at, Share: math.NaN(), Window: VitalsWindow, Cores: 1, RSSBytes: -1, Machine: machine, MachineShare: share})
			}
			continue
		}
		r := Reading{Resource: res[0], Instance: clip(inst, 80), At: at, Share: share, Window: VitalsWindow, Cores: 1, RSSBytes: -1, Machine: machine, MachineShare: share}
		if mem, ok := memoryBytes(row["memory_usage"]); ok {
			r.RSSBytes = mem
		}
		rs = append(rs, r)
	}
	for g := range groups {
		if !seen[g] {
			warnings = append(warnings, fmt.Sprintf("bosh vitals: no instance of group %q in the deployment", clip(g, 80)))
		}
	}
	sort.Strings(warnings)
	return rs, warnings, nil
}

// vitalsShare is a row's CPU user+sys as a share of the VM.
func vitalsShare(row map[string]any) (float64, error) {
	user, err1 := percent(row["cpu_user"])
	sys, err2 := percent(row["cpu_sys"])
	if err1 != nil || err2 != nil {
		why := err1
		if why == nil {
			why = err2
		}
		return 0, fmt.Errorf("CPU user %v, sys %v not usable (%v)", row["cpu_user"], row["cpu_sys"], why)
	}
	if share := (user + sys) / 100; share <= maxShare {
		return share, nil
	}
	return 0, fmt.Errorf("CPU user %g %% + sys %g %% is over 100 %%", user, sys)
}

// ParseGroups reads GROUP=RESOURCE items; a group named twice runs each
// resource named (colocated).
func ParseGroups(items []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, g := range items {
		k, v, ok := strings.Cut(g, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" || strings.ContainsAny(g, ", \n/") {
			return nil, fmt.Errorf("%q: want GROUP=RESOURCE, e.g. database=database (a group of colocated jobs twice: credhub=credhub and credhub=database)", clip(g, 64))
		}
		if !slices.Contains(out[k], v) {
			out[k] = append(out[k], v)
		}
	}
	return out, nil
}

// percent reads "12.3%" (or a number).
func percent(v any) (float64, error) {
	var f float64
	switch x := v.(type) {
	case string:
		s := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(x), "%"))
		if s == "" {
			return 0, errors.New("empty")
		}
		var err error
		if f, err = strconv.ParseFloat(s, 64); err != nil {
			return 0, fmt.Errorf("%q is not a percentage", x)
		}
	case float64:
		f = x
	default:
		return 0, fmt.Errorf("%v is not a percentage", v)
	}
	if math.IsNaN(f) || f < 0 || f > 100*maxShare {
		return 0, fmt.Errorf("%g %% is out of range", f)
	}
	return f, nil
}

// memoryBytes reads bosh's "45% (1.2 GB)".
func memoryBytes(v any) (int64, bool) {
	s, _ := v.(string)
	i, j := strings.IndexByte(s, '('), strings.IndexByte(s, ')')
	if i < 0 || j < i {
		return 0, false
	}
	f := strings.Fields(s[i+1 : j])
	if len(f) != 2 {
		return 0, false
	}
	n, err := strconv.ParseFloat(f[0], 64)
	if err != nil || n < 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, false
	}
	mult := map[string]float64{"B": 1, "kB": 1e3, "KB": 1e3, "K": 1e3, "MB": 1e6, "M": 1e6, "GB": 1e9, "G": 1e9, "TB": 1e12, "T": 1e12}[f[1]]
	if mult == 0 || n*mult > 1<<50 {
		return 0, false
	}
	return int64(n * mult), true
}
