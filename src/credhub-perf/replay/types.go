package replay

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/credhub-perf/credhub-perf/results"
)

// shareSlack is how far the shares may be from adding up to 1, and each
// from its requests / the total: the writer rounds shares to four
// decimals, so anything past 0.01 is a damaged or hand-edited file.
const shareSlack = 0.01

// checkTypes checks every type and returns the share of each scenario the
// run sends; it lists the types not sent in w and takes the set body size.
func checkTypes(types []wType, total int64, w *results.Workload) (map[string]float64, error) {
	shares := map[string]float64{}
	seen := map[string]bool{}
	sum, counted := 0.0, int64(0)
	for i, t := range types {
		id, err := checkType(i, t, total)
		if err != nil {
			return nil, err
		}
		if seen[id] {
			return nil, fmt.Errorf("types: %s is listed twice: give each type once", id)
		}
		seen[id] = true
		sum += *t.Share
		counted += *t.Requests
		if *t.Scenario == "" {
			if *t.Share > 0 {
				w.NotSent = append(w.NotSent, results.WorkloadType{Type: id, Share: *t.Share})
			}
			continue
		}
		shares[*t.Scenario] += *t.Share
		if *t.Scenario == "set" && t.BodyBytes != nil && t.BodyBytes.P50 != nil {
			w.SetBytes = setBytes(*t.BodyBytes.P50)
		}
	}
	if math.Abs(sum-1) > shareSlack {
		return nil, fmt.Errorf("the types' shares add up to %.4f, not 1: the file is damaged or edited; write it again with `credhub-perf workload`", sum)
	}
	if counted > total {
		return nil, fmt.Errorf("the types count %d requests, more than requests %d: the file is damaged or edited; write it again with `credhub-perf workload`", counted, total)
	}
	sort.SliceStable(w.NotSent, func(i, j int) bool { return w.NotSent[i].Share > w.NotSent[j].Share })
	return shares, nil
}

// checkType checks one entry of types and returns its id.
func checkType(i int, t wType, total int64) (string, error) {
	if t.Type == nil || !typeID.MatchString(*t.Type) {
		return "", fmt.Errorf("types[%d]: type is missing or not an id like get_by_name", i)
	}
	id := *t.Type
	switch {
	case t.Requests == nil || *t.Requests < 0:
		return "", fmt.Errorf("types[%d] (%s): requests is missing or negative", i, id)
	case t.Share == nil || !(*t.Share >= 0 && *t.Share <= 1):
		return "", fmt.Errorf("types[%d] (%s): share is missing or not from 0 to 1", i, id)
	case t.Scenario == nil:
		return "", fmt.Errorf("types[%d] (%s): scenario is missing: want get, set, interpolate or \"\" (not replayable)", i, id)
	}
	switch *t.Scenario {
	case "get", "set", "interpolate", "":
	default:
		return "", fmt.Errorf("types[%d] (%s): scenario %s is not get, set, interpolate or \"\" (not replayable)", i, id, truncate(fmt.Sprintf("%q", *t.Scenario)))
	}
	if t.Replayable == nil || *t.Replayable != (*t.Scenario != "") {
		return "", fmt.Errorf("types[%d] (%s): replayable is missing or disagrees with scenario %q (true exactly when it names one)", i, id, *t.Scenario)
	}
	if want := float64(*t.Requests) / float64(total); math.Abs(want-*t.Share) > shareSlack {
		return "", fmt.Errorf("types[%d] (%s): share %.4f disagrees with its requests (%d of %d is %.4f): the file is damaged or edited", i, id, *t.Share, *t.Requests, total, want)
	}
	if b := t.BodyBytes; b != nil && b.P50 != nil && !(*b.P50 >= 0 && *b.P50 <= 1<<30) {
		return "", fmt.Errorf("types[%d] (%s): body_bytes.p50 %g is not a size in bytes", i, id, *b.P50)
	}
	return id, nil
}

func setBytes(p50 float64) int {
	return int(math.Round(math.Min(math.Max(p50, minSetBytes), maxSetBytes)))
}

// setWeights scales the scenarios' shares to integer weights adding up to
// totalWeight (rounding may leave them a few off).
func setWeights(w *results.Workload, shares map[string]float64) error {
	replayed := shares["get"] + shares["set"] + shares["interpolate"]
	if !(replayed > 0) {
		var names []string
		for _, t := range w.NotSent {
			names = append(names, t.Type)
		}
		return fmt.Errorf("no request type the run can send (get, set, interpolate) has a share; the log holds only %s: capacity of that mix cannot be measured with credhub-perf", strings.Join(append(names, "(none)")[:max(len(names), 1)], ", "))
	}
	weight := func(s string) int { return int(math.Round(totalWeight * shares[s] / replayed)) }
	w.Weights = results.MetaMix{Get: weight("get"), Set: weight("set"), Interpolate: weight("interpolate")}
	w.ReplayedShare = math.Round(replayed*1e6) / 1e6
	if w.Weights.Get+w.Weights.Set+w.Weights.Interpolate == 0 {
		return errors.New("the replayable types' shares round to 0")
	}
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// truncate keeps a value from the file short in an error line.
func truncate(s string) string {
	s = oneLine(s)
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
