package capacity

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// database models the one database every instance shares: DBCores
// servers, each taking a request for cores/capacity, so together they
// serve at most capacity requests/s whatever the number of instances. A
// request reaches it after its CPU service on an instance, having given
// its core back (a thread blocked on JDBC uses no CPU); the instances'
// throughput then plateaus at the database's, as a real cluster's does
// once its shared database saturates. Each server keeps a virtual clock,
// as the cores do, so the plateau holds on a busy machine.
type database struct {
	mu      sync.Mutex
	free    []time.Time // each server's virtual clock
	service time.Duration
	busy    atomic.Int64 // nanoseconds of service completed
}

// SetDatabase gives the model a shared database serving at most
// capacity requests/s on cores servers (0 capacity: none, the database
// is never the limit). Call it before serving.
func (c *Model) SetDatabase(capacity float64, cores int) error {
	switch {
	case capacity == 0:
		return nil
	case math.IsNaN(capacity) || capacity < 0 || capacity > 1e7:
		return fmt.Errorf("-db-capacity %g must be requests/s from 0 (no limit) to 10000000", capacity)
	case cores < 1 || cores > 1024:
		return fmt.Errorf("-db-cores %d must be 1 to 1024", cores)
	}
	c.db = &database{free: make([]time.Time, cores), service: time.Duration(float64(cores) / capacity * float64(time.Second))}
	return nil
}

// serve queues a request that left its instance at from for the earliest
// free server and waits out its service there.
// On a shared machine (m not nil) its service also waits for a core.
func (d *database) serve(ctx context.Context, clk Clock, from time.Time, m *machine) bool {
	d.mu.Lock()
	best := 0
	for i, f := range d.free {
		if f.Before(d.free[best]) {
			best = i
		}
	}
	start := from
	if d.free[best].After(start) {
		start = d.free[best]
	}
	end := start.Add(d.service)
	if m != nil {
		end = m.run(start, d.service, nil)
	}
	d.free[best] = end
	d.mu.Unlock()
	if !clk.SleepUntil(ctx, end) {
		return false
	}
	d.busy.Add(int64(d.service))
	return true
}

// Utilisation is what the model kept busy since it started: each
// instance's cores, the database and the machine they share (if any), in
// core-seconds of completed service, on the model's clock.
type Utilisation struct {
	NowS      float64        `json:"now_s"`
	Instances []ResourceBusy `json:"instances"`
	Database  *ResourceBusy  `json:"database,omitempty"`
	Machines  []MachineBusy  `json:"machines,omitempty"` // only with SetMachine
}

// ResourceBusy is one modelled resource.
type ResourceBusy struct {
	Name  string  `json:"name"`
	Cores float64 `json:"cores"`
	BusyS float64 `json:"busy_s"`
	// Machine names the shared machine whose cores it uses (SetMachine),
	// with the others that name it; empty: cores of its own.
	Machine string `json:"machine,omitempty"`
}

// Utilisation reports the busy time so far; a reader takes differences
// between two reports over the difference of NowS, divided by Cores.
func (c *Model) Utilisation() Utilisation {
	u := Utilisation{NowS: c.clock.Now().Sub(c.started).Seconds(), Instances: []ResourceBusy{}}
	for i, in := range c.instances {
		u.Instances = append(u.Instances, ResourceBusy{Name: fmt.Sprintf("instance %d", i+1), Cores: float64(c.cores), BusyS: time.Duration(in.busy.Load()).Seconds()})
	}
	if c.db != nil {
		u.Database = &ResourceBusy{Name: "database", Cores: float64(len(c.db.free)), BusyS: time.Duration(c.db.busy.Load()).Seconds()}
	}
	if c.machine != nil {
		c.machine.report(&u)
	}
	return u
}
