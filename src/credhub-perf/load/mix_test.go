package load_test

import (
	"context"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
)

// A mix sends each request type's own method, path and body, names it in
// Result.Request, and draws the types in proportion to their weights.
func TestMixSendsEachTypesTemplate(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := loadtest.NewMTLSServer(t, loadtest.NewPKI(t, loadtest.ECDSA), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 64)
		n, _ := r.Body.Read(buf)
		mu.Lock()
		seen[r.Method+" "+r.URL.Path+" "+string(buf[:n])]++
		mu.Unlock()
	}), false, false)
	for _, std := range []bool{false, true} {
		clear(seen)
		ts := []load.Template{
			{Name: "get", Method: "GET", URL: srv.URL + "/get"},
			{Name: "set", Method: "PUT", URL: srv.URL + "/set", Body: `{"v":"{{seq}}"}`},
			{Name: "interpolate", Method: "POST", URL: srv.URL + "/interpolate", Body: "x"},
		}
		e, err := load.NewMix(load.ClientOptions{KeepAlive: true, FastHTTP: !std, TLS: load.TLSOptions{Insecure: true}}, ts, []int{80, 20, 0}, 42)
		if err != nil {
			t.Fatal(err)
		}
		var c collect
		const n = 2000
		if err := e.Run(context.Background(), load.Step{Concurrency: 4, Requests: n}, &c); err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, r := range c.res {
			if r.Err != "" || r.Status != 200 {
				t.Fatalf("request failed: %+v", r)
			}
			got[r.Request]++
		}
		mu.Lock()
		var sets int
		for k, v := range seen {
			if strings.HasPrefix(k, "PUT /set {\"v\":\"") {
				sets += v
			} else if k != "GET /get " {
				t.Fatalf("std=%v: unexpected request %q", std, k)
			}
		}
		gets := seen["GET /get "]
		mu.Unlock()
		// The names match what the server saw, exactly; the share is
		// within 4 standard errors of 80 % (deterministic for the seed).
		if got["get"] != gets || got["set"] != sets || got["interpolate"] != 0 || gets+sets != n {
			t.Fatalf("std=%v: results %v, server saw %d gets %d sets", std, got, gets, sets)
		}
		if p := float64(gets) / n; math.Abs(p-0.8) > 4*math.Sqrt(0.8*0.2/n) {
			t.Fatalf("std=%v: get share %.3f, want 0.8", std, p)
		}
	}
}

func TestMixDrawsAreSeededAndWeighted(t *testing.T) {
	ts := []load.Template{{Name: "get", URL: "http://127.0.0.1:1/a"}, {Name: "set", Method: "PUT", URL: "http://127.0.0.1:1/b"}, {Name: "interpolate", Method: "POST", URL: "http://127.0.0.1:1/c"}}
	e, err := load.NewMix(load.ClientOptions{}, ts, []int{1, 2, 97}, 7)
	if err != nil {
		t.Fatal(err)
	}
	const n = 200000
	d := load.Draws(e, 0, n)
	count := map[string]int{}
	for _, s := range d {
		count[s]++
	}
	for name, w := range map[string]float64{"get": 0.01, "set": 0.02, "interpolate": 0.97} {
		if p := float64(count[name]) / n; math.Abs(p-w) > 4*math.Sqrt(w*(1-w)/n) {
			t.Errorf("%s: share %.4f, want %.2f", name, p, w)
		}
	}
	e2, _ := load.NewMix(load.ClientOptions{}, ts, []int{1, 2, 97}, 7)
	if again := load.Draws(e2, 0, 1000); strings.Join(again, ",") != strings.Join(d[:1000], ",") {
		t.Error("the same seed drew a different sequence")
	}
	if other := load.Draws(e, 1, 1000); strings.Join(other, ",") == strings.Join(d[:1000], ",") {
		t.Error("two workers drew the same sequence")
	}
}

func TestNewMixErrors(t *testing.T) {
	a := load.Template{Name: "get", URL: "http://127.0.0.1:1/a"}
	b := load.Template{Name: "set", Method: "PUT", URL: "http://127.0.0.1:2/b"}
	for _, c := range []struct {
		ts   []load.Template
		w    []int
		want string
	}{
		{[]load.Template{a, a}, []int{0, 0}, "every weight is 0"},
		{[]load.Template{a}, []int{-1}, "weight -1 of \"get\" is out of range"},
		{[]load.Template{a}, []int{1, 2}, "1 templates and 2 weights"},
		{nil, nil, "0 templates"},
		{[]load.Template{a, b}, []int{1, 1}, "one mix has one target"},
		{[]load.Template{a, {Name: "set", URL: "ftp://x/"}}, []int{1, 1}, "request type \"set\""},
	} {
		_, err := load.NewMix(load.ClientOptions{}, c.ts, c.w, 1)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v %v: got %v, want one line containing %q", c.ts, c.w, err, c.want)
		}
	}
}
