package api

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// GET /utilisation reports the model's busy time to an authenticated
// client only, and counts the requests served.
func TestUtilisationEndpoint(t *testing.T) {
	h := newHarness(t, "sqlite::memory:", func(c *Config) {
		c.Workers, c.ServiceTime, c.DBCapacity = 2, time.Millisecond, 1000
	})
	h.set("/u/one", "value", "v")
	for i := 0; i < 5; i++ {
		h.expect(h.do(h.client, http.MethodGet, "/api/v1/data?name=/u/one", nil), http.StatusOK, "")
	}
	r := h.do(h.client, http.MethodGet, "/utilisation", nil)
	h.expect(r, http.StatusOK, "")
	var u struct {
		NowS      float64 `json:"now_s"`
		Instances []struct {
			Name  string  `json:"name"`
			Cores float64 `json:"cores"`
			BusyS float64 `json:"busy_s"`
		} `json:"instances"`
		Database *struct {
			Cores float64 `json:"cores"`
			BusyS float64 `json:"busy_s"`
		} `json:"database"`
	}
	if err := json.Unmarshal(r.body, &u); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	busy := 0.0
	for _, in := range u.Instances {
		busy += in.BusyS
	}
	// 6 requests of 1 ms CPU each, and 1 ms of database each.
	if len(u.Instances) != 2 || u.Instances[0].Cores != 1 || busy < 0.0059 || busy > 0.0061 || u.Database == nil || u.Database.BusyS < 0.0059 || u.Database.BusyS > 0.0061 || u.NowS <= 0 {
		t.Errorf("utilisation %s", r.body)
	}
	if r := h.do(h.anon, http.MethodGet, "/utilisation", nil); r.status != http.StatusForbidden && r.status != http.StatusUnauthorized {
		t.Errorf("without a client certificate: %d %s", r.status, r.body)
	}
	if r := h.do(h.client, http.MethodPost, "/utilisation", nil); r.status != http.StatusNotFound {
		t.Errorf("POST: %d", r.status)
	}
}

// With a shared machine, GET /utilisation names it on every resource and
// reports it with its neighbour's and the hypervisor's core-seconds.
func TestUtilisationEndpointSharedMachine(t *testing.T) {
	h := newHarness(t, "sqlite::memory:", func(c *Config) {
		c.Workers, c.ServiceTime, c.DBCapacity = 2, time.Millisecond, 1000
		c.SharedCores, c.Neighbour, c.Steal = 1, 0.25, 0.5
	})
	h.set("/u/one", "value", "v")
	for i := 0; i < 5; i++ {
		h.expect(h.do(h.client, http.MethodGet, "/api/v1/data?name=/u/one", nil), http.StatusOK, "")
	}
	r := h.do(h.client, http.MethodGet, "/utilisation", nil)
	h.expect(r, http.StatusOK, "")
	type res struct {
		Cores   float64 `json:"cores"`
		BusyS   float64 `json:"busy_s"`
		Machine string  `json:"machine"`
	}
	var u struct {
		NowS      float64 `json:"now_s"`
		Instances []res   `json:"instances"`
		Database  res     `json:"database"`
		Machines  []struct {
			Name       string  `json:"name"`
			Cores      float64 `json:"cores"`
			BusyS      float64 `json:"busy_s"`
			OtherBusyS float64 `json:"other_busy_s"`
			StealS     float64 `json:"steal_s"`
		} `json:"machines"`
	}
	if err := json.Unmarshal(r.body, &u); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	if len(u.Machines) != 1 || len(u.Instances) != 2 {
		t.Fatalf("utilisation %s", r.body)
	}
	m := u.Machines[0]
	// 6 requests of 1 ms CPU on the instances and 1 ms in the database:
	// 12 ms of the machine's, however much longer the neighbour and steal
	// made them wait; the neighbour's share is counted over the whole time.
	cpu := m.BusyS - m.OtherBusyS
	if m.Name != "host" || m.Cores != 1 || u.Instances[0].Machine != "host" || u.Database.Machine != "host" ||
		cpu < 0.0119 || cpu > 0.0121 || m.OtherBusyS <= 0 || m.StealS < 1.99*m.OtherBusyS || m.StealS > 2.01*m.OtherBusyS ||
		m.OtherBusyS > 0.25*u.NowS+1e-9 {
		t.Errorf("utilisation %s", r.body)
	}
}
