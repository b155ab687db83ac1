package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConcurrentRequestsNeverLocked: what credhub-perf's seed and cleanup
// do from two testers at once (parallel sets, gets, finds and deletes of
// the same and of different names) never gets a 500 from the SQLite store,
// as it never does from CredHub on PostgreSQL or MySQL. The only other
// answer allowed is 404 for a name another request deleted. The CI run
// that found this logged "starting transaction: database is locked (517)"
// for DELETE /api/v1/data.
func TestConcurrentRequestsNeverLocked(t *testing.T) {
	for _, kind := range []string{"sqlite", "sqlite-memory"} {
		t.Run(kind, func(t *testing.T) {
			h := newHarness(t, dbURL(t, kind), nil)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			const workers, ops = 16, 48
			var (
				mu   sync.Mutex
				bad  []string
				wg   sync.WaitGroup
				seen = map[int]int{}
			)
			send := func(method, path, body string, ok ...int) {
				var rd io.Reader
				if body != "" {
					rd = strings.NewReader(body)
				}
				req, err := http.NewRequestWithContext(ctx, method, h.url+path, rd)
				if err != nil {
					panic(err) // a test bug: the paths are the test's own
				}
				if body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				resp, err := h.client.Do(req)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					bad = append(bad, fmt.Sprintf("%s %s: %v", method, path, err))
					return
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				seen[resp.StatusCode]++
				for _, s := range ok {
					if resp.StatusCode == s {
						return
					}
				}
				if len(bad) < 20 {
					bad = append(bad, fmt.Sprintf("%s %s: %d %s", method, path, resp.StatusCode, data))
				}
			}
			// Workers 0-3 also send requests they abandon after 0-2 ms (a
			// client timeout, the end of a ramp step): the driver must not
			// leave their SQL holding the connection (see the store's
			// TestCancelledQueriesLeaveNoLock).
			abandon := func(w, i int, method, path, body string) {
				c, cancel := context.WithTimeout(ctx, time.Duration((w*7+i*13)%2000)*time.Microsecond)
				defer cancel()
				var rd io.Reader
				if body != "" {
					rd = strings.NewReader(body)
				}
				req, err := http.NewRequestWithContext(c, method, h.url+path, rd)
				if err != nil {
					panic(err)
				}
				req.Header.Set("Content-Type", "application/json")
				if resp, err := h.client.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body) //nolint:errcheck // the answer does not matter
					resp.Body.Close()
				}
			}
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range ops {
						if ctx.Err() != nil {
							return
						}
						name := fmt.Sprintf("/churn/own-%d/%d", w, i%5)
						if i%3 == 0 {
							name = fmt.Sprintf("/churn/shared/%d", i%4)
						}
						if w < 4 {
							abandon(w, i, "GET", "/api/v1/data?path="+q("/churn/"), "")
							abandon(w, i, "PUT", "/api/v1/data", fmt.Sprintf(`{"name":%q,"type":"json","value":{"k":%d}}`, name, i))
						}
						switch i % 8 {
						case 0, 1:
							send("PUT", "/api/v1/data", fmt.Sprintf(`{"name":%q,"type":"json","value":{"k":%d}}`, name, i), 200)
						case 2:
							send("GET", "/api/v1/data?current=true&name="+q(name), "", 200, 404)
							send("GET", "/api/v1/data?versions=3&name="+q(name), "", 200, 404)
						case 3:
							send("GET", "/api/v1/data?path="+q("/churn/"), "", 200)
							send("POST", "/api/v1/interpolate",
								fmt.Sprintf(`{"s":[{"credentials":{"credhub-ref":%q}}]}`, name), 200, 404)
						case 4:
							// generate and regenerate: a password of its own name,
							// so that a JSON credential of the same name is not a
							// type mismatch.
							send("POST", "/api/v1/data", fmt.Sprintf(`{"name":%q,"type":"password"}`, name+"-pw"), 200)
							send("POST", "/api/v1/regenerate", fmt.Sprintf(`{"name":%q}`, name+"-pw"), 200, 404)
						case 5:
							if w%4 != 0 { // RSA key generation is slow: a few are enough
								send("GET", "/api/v1/certificates", "", 200)
								continue
							}
							send("POST", "/api/v1/data", fmt.Sprintf(`{"name":%q,"type":"certificate","parameters":{"common_name":"c","is_ca":true}}`, name+"-ca"), 200)
							send("GET", "/api/v1/certificates?name="+q(name+"-ca"), "", 200, 404)
						case 6, 7:
							send("DELETE", "/api/v1/data?name="+q(name), "", 204, 404)
							send("DELETE", "/api/v1/data?name="+q(name+"-pw"), "", 204, 404)
							send("DELETE", "/api/v1/data?name="+q(name+"-ca"), "", 204, 404)
						}
					}
				}()
			}
			wg.Wait()
			if ctx.Err() != nil {
				t.Errorf("not finished within the bound: %v", ctx.Err())
			}
			for _, b := range bad {
				t.Error(b)
			}
			t.Logf("answers: %v", seen)
			if strings.Contains(h.logs.String(), "locked") {
				t.Errorf("server log:\n%s", h.logs.String())
			}
		})
	}
}
