package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Upper bounds of the numeric and duration inputs. None of them limits a
// real study; each stops a typo (an extra zero, hours for seconds, the
// year 9999) from starting a run that would hang for days or exhaust the
// tester's memory. docs/configuration.md lists them (LimitsTable), the
// BOSH job checks them at deploy time through the rule table, and hey
// uses the same figures for its flags.
const (
	// MaxConcurrency is the most workers per tester: each is a goroutine
	// with a connection and buffers (~3 KB and up); beyond it add testers.
	MaxConcurrency = 100000
	// MaxRequests bounds a request-counted step (steps.requests, hey -n).
	MaxRequests = 100000000
	// MaxRate bounds an open-loop rate per tester, in requests/s: ten
	// times what one tester has been seen to send.
	MaxRate = 1000000
	// MaxStepTime bounds a step, a warm-up and the waits between steps.
	MaxStepTime = 24 * time.Hour
	// MaxRequestTime bounds a request's timeout and the latency bounds.
	MaxRequestTime = time.Hour
	// MaxStartAhead is how far ahead tester.start_at may lie.
	MaxStartAhead = 7 * 24 * time.Hour
	// MaxRunTime bounds a whole timed ramp (every step's warm-up and
	// duration together).
	MaxRunTime = 7 * 24 * time.Hour
	// MaxSteps bounds the steps of a ramp (and so abort.consecutive_steps).
	MaxSteps = 10000
	// MaxTesters bounds tester.count.
	MaxTesters = 1000
	// MaxInstances bounds the recorded number of CredHub instances.
	MaxInstances = 10000
)

// atMost is an upper bound; the message names the limit and the fix.
func atMost(n float64, msg string) Rule { return Rule{Check: "range", Max: num(n), Msg: msg} }

// durationAtMost bounds a duration key (rules compare nanoseconds).
func durationAtMost(d time.Duration, fix string) Rule {
	return atMost(float64(d), "must be at most "+shortDuration(d)+" ("+fix+"), got {v}")
}

// shortDuration writes 24h0m0s as 24h, 168h0m0s as 168h (7 days).
func shortDuration(d time.Duration) string {
	s := d.String()
	s = strings.TrimSuffix(s, "0s")
	s = strings.TrimSuffix(s, "0m")
	if s == "" {
		return "0s"
	}
	return s
}

// LimitsTable renders docs/configuration.md's table of upper bounds from
// the keys' rules, so the document cannot drift from the checks.
func LimitsTable() string {
	var b strings.Builder
	b.WriteString("| key | at most |\n|---|---|\n")
	for _, k := range Keys {
		for _, r := range k.Rules {
			if r.Check != "range" && r.Check != "auto_or_duration" || r.Max == nil || len(r.When) > 0 {
				continue
			}
			lim := strconv.FormatFloat(*r.Max, 'f', -1, 64)
			switch k.Type {
			case "duration", "string":
				lim = shortDuration(time.Duration(*r.Max))
			default:
				if *r.Max >= 10000 && *r.Max == float64(int64(*r.Max)) {
					lim = groupDigits(int64(*r.Max))
				}
			}
			if k.Type == "list of number" {
				lim += " (each)"
			}
			fmt.Fprintf(&b, "| `%s` | %s |\n", k.Name, lim)
			break
		}
	}
	for _, p := range BOSHOnly {
		for _, r := range p.Rules {
			if r.Check == "range" && r.Max != nil && len(r.When) == 0 {
				fmt.Fprintf(&b, "| `%s` (job property) | %s seconds |\n", p.Name, strconv.FormatFloat(*r.Max, 'f', -1, 64))
				break
			}
		}
	}
	fmt.Fprintf(&b, "| `tester.start_at` | %s after the run starts |\n", shortDuration(MaxStartAhead))
	fmt.Fprintf(&b, "| a timed ramp (steps × (`steps.warmup` + `steps.duration`)) | %s |\n", shortDuration(MaxRunTime))
	fmt.Fprintf(&b, "| steps of a ramp | %s |\n", groupDigits(MaxSteps))
	return b.String()
}

// groupDigits writes 100000 as 100,000.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
