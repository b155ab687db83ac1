package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-sim/internal/capacity"
)

func TestSHA512CryptVector(t *testing.T) {
	// From Drepper's SHA-crypt specification.
	got := sha512Crypt("Hello world!", "$6$saltstring")
	want := "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1"
	if got != want {
		t.Fatalf("sha512Crypt = %s, want %s", got, want)
	}
}

func TestConcurrentSetsSQLite(t *testing.T) { concurrentSets(t, dbURL(t, "sqlite")) }
func TestConcurrentSetsPostgres(t *testing.T) {
	concurrentSets(t, dbURL(t, "postgres"))
}
func TestConcurrentSetsMariaDB(t *testing.T) { concurrentSets(t, dbURL(t, "mariadb")) }

// concurrentSets: many clients setting one name at once must each get 200
// and leave exactly one version each, newest first with distinct ids.
func concurrentSets(t *testing.T, dsn string) {
	h := newHarness(t, dsn, nil)
	const workers, each = 8, 12
	var wg sync.WaitGroup
	ids := make(chan string, workers*each)
	errs := make(chan string, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				body, _ := json.Marshal(map[string]any{"name": "/race/one", "type": "json", "value": map[string]any{"w": w, "i": i}})
				req, _ := http.NewRequest("PUT", h.url+"/api/v1/data", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := h.client.Do(req)
				if err != nil {
					errs <- err.Error()
					continue
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- fmt.Sprintf("status %d: %s", resp.StatusCode, data)
					continue
				}
				var v map[string]any
				json.Unmarshal(data, &v) //nolint:errcheck // id checked below
				ids <- fmt.Sprint(v["id"])
			}
		}(w)
	}
	wg.Wait()
	close(ids)
	close(errs)
	for e := range errs {
		t.Errorf("concurrent set failed: %s", e)
	}
	seen := map[string]bool{}
	for id := range ids {
		seen[id] = true
	}
	r := h.do(h.client, "GET", "/api/v1/data?name=/race/one", nil)
	var all struct{ Data []map[string]any }
	if err := json.Unmarshal(r.body, &all); err != nil {
		t.Fatal(err)
	}
	if len(all.Data) != workers*each || len(seen) != workers*each {
		t.Fatalf("%d versions stored, %d distinct ids answered; want %d", len(all.Data), len(seen), workers*each)
	}
	for _, v := range all.Data {
		if !seen[v["id"].(string)] {
			t.Fatalf("stored version %v was never answered", v["id"])
		}
	}
	var ts []int64
	rows, err := h.store.DB().Query("SELECT version_created_at FROM credential_version ORDER BY version_created_at")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var v int64
		rows.Scan(&v) //nolint:errcheck // checked by ordering below
		ts = append(ts, v)
	}
	for i := 1; i < len(ts); i++ {
		if ts[i] == ts[i-1] {
			t.Fatalf("two versions share version_created_at %d: newest-first order would be ambiguous", ts[i])
		}
	}
}

func TestExternalCleanupPostgres(t *testing.T) {
	externalCleanup(t, dbURL(t, "postgres"), []string{"TRUNCATE credential, encrypted_value CASCADE"})
}

func TestExternalCleanupMariaDB(t *testing.T) {
	externalCleanup(t, dbURL(t, "mariadb"), []string{"DELETE FROM credential", "DELETE FROM encrypted_value"})
}

func TestExternalCleanupSQLite(t *testing.T) {
	externalCleanup(t, dbURL(t, "sqlite"), []string{"DELETE FROM credential", "DELETE FROM encrypted_value"})
}

// externalCleanup runs credhub-perf's database cleanup against a running
// server: every credential table empties, the canary stays, and the server
// keeps working without a restart.
func externalCleanup(t *testing.T, dsn string, cleanup []string) {
	h := newHarness(t, dsn, nil)
	for i := 0; i < 5; i++ {
		h.set(fmt.Sprintf("/seed/json-%d", i), "json", map[string]any{"i": i})
	}
	h.do(h.client, "POST", "/api/v1/data", map[string]any{"name": "/seed/pw", "type": "password"})
	h.do(h.client, "POST", "/api/v1/data", map[string]any{"name": "/seed/user", "type": "user"})
	db := h.store.DB()
	for _, stmt := range cleanup {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	for _, table := range []string{"credential", "credential_version", "encrypted_value", "password_credential", "user_credential"} {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%s has %d rows after cleanup (%v)", table, n, err)
		}
	}
	var canaries int
	if err := db.QueryRow("SELECT COUNT(*) FROM encryption_key_canary").Scan(&canaries); err != nil || canaries != 1 {
		t.Fatalf("canary rows after cleanup: %d (%v)", canaries, err)
	}
	h.expect(h.do(h.client, "GET", "/api/v1/data?name=/seed/json-1", nil), 404, errBody(msgInvalidAccess))
	h.set("/seed/json-1", "json", map[string]any{"again": true})
	r := h.do(h.client, "GET", "/api/v1/data?name=/seed/json-1", nil)
	h.expect(r, 200, "")
	var all struct{ Data []map[string]any }
	json.Unmarshal(r.body, &all) //nolint:errcheck // checked by length
	if len(all.Data) != 1 {
		t.Fatalf("after cleanup and one set, %d versions", len(all.Data))
	}
	h.expect(h.do(h.anon, "GET", "/health", nil), 200, `{"status":"UP"}`)
}

func TestFaultInjection(t *testing.T) {
	h := newHarness(t, dbURL(t, "sqlite-memory"), func(c *Config) {
		c.ErrorRate = 1
		c.ErrorStatus = 503
		c.AddedLatency = 30 * time.Millisecond
		c.Workers = 1
		c.ServiceTime = 5 * time.Second
	})
	start := time.Now()
	r := h.do(h.client, "GET", "/api/v1/data?name=/x", nil)
	if r.status != 503 || r.json(t)["error"] == nil {
		t.Fatalf("injected fault: %d %s", r.status, r.body)
	}
	if d := time.Since(start); d < 30*time.Millisecond || d > 2*time.Second {
		t.Fatalf("fault took %v: want the added latency (30ms) but no service time (5s)", d)
	}
	h.expect(h.do(h.anon, "GET", "/info", nil), 200, "") // faults hit the API only
}

// TestCapacityPlateau runs a closed-loop ramp against -workers 4
// -service-time 5ms (exponential) over real mTLS on a virtual clock:
// throughput must level at about 4/5ms = 800 req/s (within 10 %: 1,200
// exponential draws in 1.5 s; seeded, so the same every run) and latency
// must climb past the knee.
func TestCapacityPlateau(t *testing.T) {
	clk := capacity.NewVirtualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	h := newHarness(t, dbURL(t, "sqlite-memory"), func(c *Config) {
		c.Workers = 4
		c.ServiceTime = 5 * time.Millisecond
		c.ServiceDist = "exponential"
		c.Clock = clk
	})
	h.srv.capacity.SetSeed(1)
	h.set("/cap/one", "json", map[string]any{"k": "v"})
	rates := map[int]float64{}
	lat := map[int]time.Duration{}
	for _, c := range []int{1, 4, 16, 32} {
		rates[c], lat[c] = closedLoop(t, h, clk, c, 1500*time.Millisecond, getOne)
		t.Logf("concurrency %2d: %6.0f req/s, mean latency %v", c, rates[c], lat[c])
	}
	for _, c := range []int{16, 32} {
		if rates[c] < 720 || rates[c] > 880 {
			t.Errorf("plateau at concurrency %d: %.0f req/s, want 800 ± 10%%", c, rates[c])
		}
	}
	if rates[1] > 0.5*rates[16] {
		t.Errorf("one client already reaches %.0f req/s of a %.0f plateau: no knee", rates[1], rates[16])
	}
	if lat[32] < 3*lat[1] {
		t.Errorf("latency at 32 clients %v is not well above 1 client's %v", lat[32], lat[1])
	}
}

// TestCapacityPlateauRealTime: TestCapacityPlateau in real time, where
// the model's virtual clocks must pay back timer overshoot. It measures
// the machine too (closed-loop clients starved of CPU cannot offer the
// load), so scripts/test-all runs it alone, on a quiet machine, and not
// under -race.
func TestCapacityPlateauRealTime(t *testing.T) {
	quietMachine(t)
	if raceEnabled {
		t.Skip("throughput in real time: under -race it measures the race detector (TestCapacityPlateau checks the plateau on a virtual clock)")
	}
	h := newHarness(t, dbURL(t, "sqlite-memory"), func(c *Config) {
		c.Workers = 4
		c.ServiceTime = 5 * time.Millisecond
		c.ServiceDist = "exponential"
	})
	h.set("/cap/one", "json", map[string]any{"k": "v"})
	var lastErr string
	for attempt := 1; attempt <= 3; attempt++ {
		steps := []int{1, 4, 16, 32}
		rates := map[int]float64{}
		lat := map[int]time.Duration{}
		for _, c := range steps {
			rates[c], lat[c] = closedLoop(t, h, nil, c, 1500*time.Millisecond, getOne)
			t.Logf("attempt %d: concurrency %2d: %6.0f req/s, mean latency %v", attempt, c, rates[c], lat[c])
		}
		// The machine is shared, so the busier top step may lose a little
		// to CPU starvation; the better one shows the server's ceiling,
		// and neither may exceed it.
		plateau := max(rates[16], rates[32])
		switch {
		case plateau < 720 || plateau > 880:
			lastErr = fmt.Sprintf("plateau %.0f req/s, want 800 ± 10%%", plateau)
		case rates[1] > 0.5*plateau:
			lastErr = fmt.Sprintf("one client already reaches %.0f req/s of a %.0f plateau: no knee", rates[1], plateau)
		case lat[32] < 3*lat[1]:
			lastErr = fmt.Sprintf("latency at 32 clients %v is not well above 1 client's %v", lat[32], lat[1])
		default:
			return
		}
		t.Logf("attempt %d: %s", attempt, lastErr)
	}
	t.Fatal(lastErr)
}

// getOne reads the credential the capacity tests set up.
func getOne(h *harness) *http.Request {
	req, _ := http.NewRequest("GET", h.url+"/api/v1/data?name=/cap/one&current=true", nil)
	return req
}

// setOne writes a new version of that credential.
func setOne(h *harness) *http.Request {
	req, _ := http.NewRequest("PUT", h.url+"/api/v1/data",
		strings.NewReader(`{"name":"/cap/one","type":"json","value":{"k":"v"}}`))
	req.Header.Set("Content-Type", "application/json")
	return req
}

// closedLoop runs c clients back to back for d, each sending newReq's
// requests, and returns throughput and mean latency: in real time, or on
// clk, the server's virtual clock, when not nil.
func closedLoop(t *testing.T, h *harness, clk *capacity.VirtualClock, c int, d time.Duration, newReq func(*harness) *http.Request) (float64, time.Duration) {
	r := closedLoops(t, h, clk, d, load{c, newReq})[0]
	return r.rate, r.latency
}

// load is one class of closed-loop clients.
type load struct {
	clients int
	newReq  func(*harness) *http.Request
}

type loadResult struct {
	rate    float64
	latency time.Duration
}

// closedLoops runs all loads at once for d and returns each one's
// throughput and mean latency: in real time, or on clk when not nil.
// On clk time stands still while any client sends or reads, so a request
// finished by d counts whatever the machine's speed.
func closedLoops(t *testing.T, h *harness, clk *capacity.VirtualClock, d time.Duration, loads ...load) []loadResult {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	now, running := time.Now, func() bool { return ctx.Err() == nil }
	if clk != nil {
		end := clk.Now().Add(d)
		now, running = clk.Now, func() bool { return clk.Now().Before(end) }
		for _, l := range loads {
			for range l.clients {
				clk.Join() // all before the first request
			}
		}
	}
	type counts struct{ n, failures, total atomic.Int64 }
	cs := make([]counts, len(loads))
	var wg sync.WaitGroup
	start := now()
	for li, l := range loads {
		cnt := &cs[li]
		for i := 0; i < l.clients; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if clk != nil {
					defer clk.Leave()
				}
				for running() {
					t0 := now()
					resp, err := h.client.Do(l.newReq(h))
					if err != nil {
						cnt.failures.Add(1)
						continue
					}
					io.Copy(io.Discard, resp.Body) //nolint:errcheck // drain for keep-alive
					resp.Body.Close()
					if resp.StatusCode != 200 {
						cnt.failures.Add(1)
						continue
					}
					if clk != nil && clk.Now().After(start.Add(d)) {
						break // finished after the end
					}
					cnt.n.Add(1)
					cnt.total.Add(int64(now().Sub(t0)))
				}
			}()
		}
	}
	wg.Wait()
	elapsed := now().Sub(start)
	if clk != nil {
		elapsed = d
	}
	res := make([]loadResult, len(loads))
	for li, l := range loads {
		cnt := &cs[li]
		if cnt.failures.Load() > 0 {
			t.Fatalf("%d requests failed at concurrency %d", cnt.failures.Load(), l.clients)
		}
		if cnt.n.Load() == 0 {
			t.Fatalf("no request completed at concurrency %d", l.clients)
		}
		res[li] = loadResult{float64(cnt.n.Load()) / elapsed.Seconds(), time.Duration(cnt.total.Load() / cnt.n.Load())}
	}
	return res
}

func TestHealthReflectsDatabase(t *testing.T) {
	h := newHarness(t, dbURL(t, "sqlite"), nil)
	h.expect(h.do(h.anon, "GET", "/health", nil), 200, `{"status":"UP"}`)
	h.store.Close()
	h.expect(h.do(h.anon, "GET", "/health", nil), 503, `{"status":"DOWN"}`)
	if !bytes.Contains(h.logs.Bytes(), []byte("database unreachable")) {
		t.Fatalf("no log line for the failed health check: %s", h.logs.String())
	}
}

func TestVanishedCanarySQLite(t *testing.T) {
	vanishedCanary(t, dbURL(t, "sqlite"), "DELETE FROM encryption_key_canary")
}

func TestVanishedCanaryPostgres(t *testing.T) {
	vanishedCanary(t, dbURL(t, "postgres"), "TRUNCATE encryption_key_canary CASCADE")
}

// vanishedCanary: wiping the canary under a running server (the mistake
// §3 of the CredHub notes warns about) makes every write fail its foreign
// key, which CredHub reports as 413, not 500.
func vanishedCanary(t *testing.T, dsn, wipe string) {
	h := newHarness(t, dsn, nil)
	if _, err := h.store.DB().Exec(wipe); err != nil {
		t.Fatalf("%s: %v", wipe, err)
	}
	r := h.do(h.client, "PUT", "/api/v1/data", map[string]any{"name": "/after/wipe", "type": "value", "value": "v"})
	h.expect(r, 413, errBody(msgExceedsMaximumSize))
	if !bytes.Contains(h.logs.Bytes(), []byte("answered 413")) {
		t.Fatalf("no error line logged: %q", h.logs.String())
	}
}
