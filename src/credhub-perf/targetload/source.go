package targetload

import (
	"context"
	"time"
)

// Reading is one resource instance's state at one moment, as a source
// reports it. Either Busy is a cumulative CPU time (the sampler takes the
// difference between two readings, over the difference of At, and divides
// by Cores) or Share is a CPU share the source computed over Window
// before At (BOSH vitals).
type Reading struct {
	Resource string
	Instance string
	At       time.Time // on the source's own clock
	Busy     time.Duration
	Cores    float64
	Share    float64       // NaN: use Busy
	Window   time.Duration // with Share
	RSSBytes int64         // -1: unknown
	// CPUs the instance may use ("" unknown) and the machine they make
	// (Sample.Machine; "" unknown).
	CPUs, Machine string
	// Counters: the machine's cumulative figures, diffed like Busy; nil
	// when unknown or with Share.
	Counters *MachineCounters
	// MachineShare: with Share, the machine's busy share over Window
	// (BOSH vitals: the VM); NaN or 0 with Machine "" when unknown.
	MachineShare float64
}

// MachineCounters are a machine's CPU seconds since some fixed moment,
// over all its CPUs: Total (every state), Busy (user, nice, system, irq,
// softirq), Steal, Iowait, and Sampled (the sampled resources' processes
// on it). A negative Steal, Iowait or Sampled is unknown. Seconds in
// floating point: tick counts of many CPUs over years overflow a
// Duration.
type MachineCounters struct {
	Total, Busy, Steal, Iowait, Sampled float64
}

// Source reads its resources. Read returns what it could read and, for
// what it could not, one warning each (the sampler prints each distinct
// warning once).
type Source interface {
	Name() string
	Read(ctx context.Context) ([]Reading, []string)
	// Interval is the least time between two reads worth making.
	Interval() time.Duration
}
