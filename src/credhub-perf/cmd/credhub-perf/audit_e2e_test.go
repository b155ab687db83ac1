package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/internal/testpki"
	"github.com/credhub-perf/credhub-perf/workload"
)

// auditPattern is one worker's cycle of requests: g get by name (all
// versions, several lines each once sets have added versions), c get
// current, f find, i interpolate (one to three refs), s set, n generate.
// A worker never sends two interpolates in a row: CredHub's log cannot
// tell apart two of one actor's interpolates begun in one millisecond
// and logged back to back (see package workload).
const auditPattern = "gigsgncfgigsgnfgisgc"

// auditTypes maps the pattern's letters to workload's type ids.
var auditTypes = map[byte]string{'g': "get_by_name", 'c': "get_by_name", 'f': "find_by_path", 'i': "interpolate", 's': "set", 'n': "generate"}

type sent struct {
	typ        string
	start, end time.Time
}

// TestAuditLogRoundTrip sends a known mix from four app identities to
// two credhub-sim instances with -audit-log (two of the identities to
// each), reads both logs with `credhub-perf workload` and checks the
// requests per type (within 1 %) and the peak second (within one request
// of what the client saw).
func TestAuditLogRoundTrip(t *testing.T) {
	binaries(t)
	dir := t.TempDir()
	var logs []string
	var sims []*sim
	for i := 0; i < 2; i++ {
		logs = append(logs, filepath.Join(dir, fmt.Sprintf("credhub-%d.log", i)))
		sims = append(sims, startSim(t, "", "-audit-log", logs[i]))
	}
	ca := testpki.LoadCA(t, filepath.Join(certDir, "ca.crt"), filepath.Join(certDir, "ca.key"))
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	const workers, perWorker = 4, 100
	var mu sync.Mutex
	var all []sent
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		leaf := ca.Issue(t, testpki.Spec{CommonName: "audit", OU: []string{fmt.Sprintf("app:00000000-0000-4000-8000-%012d", w+1)}})
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: roots, Certificates: []tls.Certificate{{Certificate: [][]byte{leaf.DER()}, PrivateKey: leaf.Key}},
		}}}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			got, err := auditWorker(client, sims[w%2].URL, w, perWorker)
			mu.Lock()
			all = append(all, got...)
			mu.Unlock()
			errs <- err
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range sims {
		s.stop()
	}
	checkAuditWorkload(t, dir, logs, all)
}

func checkAuditWorkload(t *testing.T, dir string, logs []string, all []sent) {
	out := filepath.Join(dir, "out")
	cmd, o, e := startPerf(t, append([]string{"workload", "--out", out}, logs...)...)
	r := waitPerf(t, cmd, o, e, time.Minute)
	if r.code != 0 {
		t.Fatalf("workload: exit %d\n%s", r.code, r.stderr)
	}
	w, err := workload.ReadJSON(filepath.Join(out, "workload.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for _, s := range all {
		want[s.typ]++
	}
	got := map[string]int64{}
	for _, tc := range w.Types {
		got[tc.Type] = tc.Requests
	}
	t.Logf("sent %v; the log: %d requests in %d lines, %v", want, w.Requests, w.Lines, got)
	for typ, n := range want {
		if math.Abs(float64(got[typ]-n)) > 0.01*float64(n) {
			t.Errorf("%s: %d requests in the log, %d sent", typ, got[typ], n)
		}
	}
	if w.Requests != int64(len(all)) || w.Lines <= w.Requests || len(w.Skipped) != 0 || len(w.Sources) != 2 {
		t.Errorf("requests %d of %d, lines %d, skipped %v", w.Requests, len(all), w.Lines, w.Skipped)
	}
	lo, hi := peakBounds(all)
	t.Logf("peak second %d requests; the client saw %d to %d", w.Rates.PeakSecond.Requests, lo, hi)
	if p := w.Rates.PeakSecond.Requests; p < lo-1 || p > hi+1 {
		t.Errorf("peak second %d; the client saw between %d and %d", p, lo, hi)
	}
}

// peakBounds is the busiest second as the client saw it: a request's rt
// lies between its send and its answer, so a second holds at least the
// requests sent and answered within it and at most those overlapping it.
func peakBounds(all []sent) (lo, hi int64) {
	within, touching := map[int64]int64{}, map[int64]int64{}
	for _, s := range all {
		a, b := s.start.Unix(), s.end.Unix()
		if a == b {
			within[a]++
		}
		for sec := a; sec <= b; sec++ {
			touching[sec]++
		}
	}
	for _, n := range within {
		lo = max(lo, n)
	}
	for _, n := range touching {
		hi = max(hi, n)
	}
	return lo, hi
}

// auditWorker seeds its credentials, then sends n requests of the
// pattern one after another.
func auditWorker(c *http.Client, base string, w, n int) ([]sent, error) {
	var out []sent
	do := func(typ, method, path string, body any) error {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, method, base+path, rd)
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		out = append(out, sent{typ, start, time.Now()})
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s %s: %s", method, path, resp.Status)
		}
		return nil
	}
	name := func(kind string, k int) string { return fmt.Sprintf("/audit/w%d/%s%d", w, kind, k) }
	for k := 0; k < 3; k++ {
		if err := do("set", "PUT", "/api/v1/data", map[string]any{"name": name("c", k), "type": "value", "value": "v"}); err != nil {
			return out, err
		}
		if err := do("set", "PUT", "/api/v1/data", map[string]any{"name": name("j", k), "type": "json", "value": map[string]int{"k": k}}); err != nil {
			return out, err
		}
	}
	// The first 60 requests at 20/s, the rest at once: a busiest second
	// that is not simply the whole run. The check does not depend on the
	// pacing's accuracy: it bounds the peak by the times the client saw.
	begin := time.Now()
	for i := 0; i < n; i++ {
		if i < 60 {
			time.Sleep(time.Until(begin.Add(time.Duration(i) * 50 * time.Millisecond)))
		}
		var err error
		k := i % 3
		switch auditPattern[i%len(auditPattern)] {
		case 'g':
			err = do("get_by_name", "GET", "/api/v1/data?name="+name("c", k), nil)
		case 'c':
			err = do("get_by_name", "GET", "/api/v1/data?name="+name("c", k)+"&current=true", nil)
		case 'f':
			err = do("find_by_path", "GET", fmt.Sprintf("/api/v1/data?path=/audit/w%d", w), nil)
		case 'i':
			var binds []map[string]any
			for r := 0; r <= k; r++ {
				binds = append(binds, map[string]any{"credentials": map[string]string{"credhub-ref": "((" + name("j", r) + "))"}})
			}
			err = do("interpolate", "POST", "/api/v1/interpolate", map[string]any{"svc": binds})
		case 's':
			err = do("set", "PUT", "/api/v1/data", map[string]any{"name": name("c", k), "type": "value", "value": fmt.Sprint(i)})
		case 'n':
			err = do("generate", "POST", "/api/v1/data", map[string]any{"name": name("p", i), "type": "password", "mode": "overwrite"})
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

func TestAuditPatternHasNoAdjacentInterpolates(t *testing.T) {
	p := auditPattern + auditPattern[:1]
	for i := 1; i < len(p); i++ {
		if p[i] == 'i' && p[i-1] == 'i' {
			t.Fatalf("interpolates adjacent at %d", i)
		}
	}
	for i := 0; i < len(auditPattern); i++ {
		if _, ok := auditTypes[auditPattern[i]]; !ok {
			t.Fatalf("letter %q", auditPattern[i])
		}
	}
}
