package capacity

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// machine models one host whose cores every instance and the database
// share, as on a VM where CredHub and its PostgreSQL are colocated
// (credhub-release's credhub-postgres.yml, a BOSH director's own CredHub).
// An instance's core and a database server are then threads: a request's
// CPU service runs only once one of the machine's cores is free too, so
// the instances and the database together saturate the machine, and the
// plateau is cores / (instance CPU + database CPU per request) even when
// neither the instances' cores nor the database's servers are all busy.
//
// Two things take CPU from the modelled resources: a neighbour, another
// process on the machine busy with a fixed share of its cores all the
// time (another job on the VM, a batch job capped by its cgroup), and the
// hypervisor's steal. Both stretch every CPU service by 1 / (1 - the
// shares they take), as a process that gets only part of a core runs that
// much slower. The resources' busy time stays their CPU time proper, so
// the resources' and the neighbour's busy shares add up to the machine's.
//
// Each core keeps a virtual clock, as the instances' cores do; a service
// takes the core that frees first, in the order services reach the
// machine (a FIFO run queue).
type machine struct {
	name             string
	neighbour, steal float64 // shares of the machine's cores, each 0..1

	mu   sync.Mutex
	free []time.Time // each core's virtual clock
}

// MachineName is the name /utilisation gives the shared machine.
const MachineName = "host"

// SetMachine puts every instance and the database on one machine of
// cores cores, of which a neighbour takes the share neighbour and the
// hypervisor the share steal (cores 0: none, each resource has its own
// cores). Call it after New, before serving.
func (c *Model) SetMachine(cores int, neighbour, steal float64) error {
	share := func(f float64) bool { return !math.IsNaN(f) && f >= 0 && f < 1 }
	switch {
	case cores == 0 && neighbour == 0 && steal == 0:
		return nil
	case cores == 0:
		return fmt.Errorf("-neighbour %g and -steal %g take CPU from the shared machine; add -shared-cores N", neighbour, steal)
	case cores < 0 || cores > 1024:
		return fmt.Errorf("-shared-cores %d must be 1 to 1024 (0: no shared machine)", cores)
	case c.instances == nil:
		return fmt.Errorf("-shared-cores %d needs -workers K (the instances that share the machine); with -workers 0 nothing is limited", cores)
	case !share(neighbour):
		return fmt.Errorf("-neighbour %g must be a share of the machine from 0 to below 1, e.g. -neighbour 0.5", neighbour)
	case !share(steal):
		return fmt.Errorf("-steal %g must be a share of the machine from 0 to below 1, e.g. -steal 0.1", steal)
	case neighbour+steal > 0.95:
		return fmt.Errorf("-neighbour %g and -steal %g together leave CredHub and its database under 5 %% of the machine; use less", neighbour, steal)
	}
	c.machine = &machine{name: MachineName, neighbour: neighbour, steal: steal, free: make([]time.Time, cores)}
	return nil
}

// run books cpu of CPU service that can start at from on the core that
// frees first and returns when it ends; shift (nil: none) turns a start
// and a length into an end, the target's pauses included.
func (m *machine) run(from time.Time, cpu time.Duration, shift func(time.Time, time.Duration) time.Time) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	best := 0
	for i, f := range m.free {
		if f.Before(m.free[best]) {
			best = i
		}
	}
	start := from
	if m.free[best].After(start) {
		start = m.free[best]
	}
	wall := time.Duration(float64(cpu) / (1 - m.neighbour - m.steal))
	end := start.Add(wall)
	if shift != nil {
		end = shift(start, wall)
	}
	m.free[best] = end
	return end
}

// MachineBusy is the shared machine in Utilisation, in core-seconds since
// the model started: BusyS all busy time (the resources' and the
// neighbour's), OtherBusyS the neighbour's, StealS the hypervisor's.
type MachineBusy struct {
	Name       string  `json:"name"`
	Cores      float64 `json:"cores"`
	BusyS      float64 `json:"busy_s"`
	OtherBusyS float64 `json:"other_busy_s"`
	StealS     float64 `json:"steal_s"`
}

// report adds the machine to u, whose resources it runs: each resource
// names it, and can use at most all its cores.
func (m *machine) report(u *Utilisation) {
	cores := float64(len(m.free))
	mb := MachineBusy{Name: m.name, Cores: cores, OtherBusyS: m.neighbour * cores * u.NowS, StealS: m.steal * cores * u.NowS}
	mark := func(r *ResourceBusy) {
		r.Machine = m.name
		r.Cores = math.Min(r.Cores, cores)
		mb.BusyS += r.BusyS
	}
	for i := range u.Instances {
		mark(&u.Instances[i])
	}
	if u.Database != nil {
		mark(u.Database)
	}
	mb.BusyS += mb.OtherBusyS
	u.Machines = []MachineBusy{mb}
}
