package capacity

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// measure runs clients closed loops of reads against c on clk until 3 s
// of model time and returns the rate served from 1 s to 3 s with the
// utilisation reports at both ends.
func measure(t *testing.T, c *Model, clk *VirtualClock, start time.Time, clients int) (float64, Utilisation, Utilisation) {
	t.Helper()
	from, end := start.Add(time.Second), start.Add(3*time.Second)
	var mu sync.Mutex
	var served int
	var u0 Utilisation
	var once sync.Once
	var wg sync.WaitGroup
	for range clients {
		clk.Join()
	}
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer clk.Leave()
			for {
				now := clk.Now()
				if !now.Before(end) {
					return
				}
				if !now.Before(from) {
					once.Do(func() { u0 = c.Utilisation() })
				}
				if !c.Serve(context.Background(), false, func() {}) {
					t.Error("request not served")
					return
				}
				if t1 := clk.Now(); !t1.Before(from) && !t1.After(end) {
					mu.Lock()
					served++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return float64(served) / 2, u0, c.Utilisation()
}

// Two instances of one core (4 ms a read) and a database of one server
// (2 ms a request) on machines of shared cores, with a neighbour or steal
// taking part of them: on the virtual clock the throughput plateaus at
// the machine's cores left to them over the CPU of a request (6 ms), the
// machine's busy share is what the resources and the neighbour take, and
// the resources' shares, in the machine's cores, add up to the machine's
// busy share less the neighbour's.
func TestSharedMachinePlateau(t *testing.T) {
	for _, tc := range []struct {
		name             string
		cores            int
		neighbour, steal float64
		rate             float64 // requests/s
		busy, other      float64 // the machine's shares
	}{
		// 1 / 6 ms: neither the instances (2 / 4 ms = 500/s) nor the
		// database (500/s) alone would stop there.
		{"one shared core", 1, 0, 0, 1000.0 / 6, 1, 0},
		{"two shared cores", 2, 0, 0, 2000.0 / 6, 1, 0},
		{"a neighbour takes half", 1, 0.5, 0, 500.0 / 6, 1, 0.5},
		{"the hypervisor steals a quarter", 1, 0, 0.25, 750.0 / 6, 0.75, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rate, u0, u1 := measureMachine(t, tc.cores, tc.neighbour, tc.steal)
			dt := u1.NowS - u0.NowS
			if len(u1.Machines) != 1 || u1.Database == nil || u1.Database.Machine != "host" || u1.Instances[1].Machine != "host" {
				t.Fatalf("report %+v", u1)
			}
			m0, m1 := u0.Machines[0], u1.Machines[0]
			cores := float64(tc.cores)
			busy := (m1.BusyS - m0.BusyS) / dt / cores
			other := (m1.OtherBusyS - m0.OtherBusyS) / dt / cores
			steal := (m1.StealS - m0.StealS) / dt / cores
			res := (u1.Database.BusyS - u0.Database.BusyS) / dt / cores
			for i := range u1.Instances {
				res += (u1.Instances[i].BusyS - u0.Instances[i].BusyS) / dt / cores
			}
			if math.Abs(rate-tc.rate)/tc.rate > 0.02 || math.Abs(busy-tc.busy) > 0.03 || math.Abs(other-tc.other) > 0.001 || math.Abs(steal-tc.steal) > 0.001 {
				t.Errorf("%.1f/s, machine %.3f busy (other %.3f, steal %.3f); want %.1f/s, %.2f (other %.2f, steal %.2f)", rate, busy, other, steal, tc.rate, tc.busy, tc.other, tc.steal)
			}
			if math.Abs(res+other-busy) > 0.01 {
				t.Errorf("resources %.3f + other %.3f != machine %.3f", res, other, busy)
			}
			// 6 ms of CPU at the plateau: two thirds of it the instances'.
			if db := (u1.Database.BusyS - u0.Database.BusyS) / dt; math.Abs(db-tc.rate*0.002) > 0.01 {
				t.Errorf("database %.3f busy, want %.3f", db, tc.rate*0.002)
			}
			if m1.Cores != cores || u1.Instances[0].Cores != 1 || u1.Database.Cores != 1 {
				t.Errorf("cores: %+v", u1)
			}
		})
	}
}

// Without a shared machine the same set-up is bounded by the instances
// and the database alone (500/s each) and reports no machine.
func TestSeparateCoresPlateau(t *testing.T) {
	rate, _, u1 := measureMachine(t, 0, 0, 0)
	if math.Abs(rate-500)/500 > 0.02 || u1.Machines != nil || u1.Database.Machine != "" || u1.Instances[0].Machine != "" {
		t.Errorf("%.1f/s, %+v; want 500/s and no machine", rate, u1)
	}
}

// A machine of fewer cores than an instance has bounds what the instance
// can be reported to use.
func TestSharedMachineCapsCores(t *testing.T) {
	c, _ := New(1, 4, time.Millisecond, 0, "fixed")
	if err := c.SetDatabase(100, 8); err != nil {
		t.Fatal(err)
	}
	if err := c.SetMachine(2, 0, 0); err != nil {
		t.Fatal(err)
	}
	if u := c.Utilisation(); u.Instances[0].Cores != 2 || u.Database.Cores != 2 || u.Machines[0].Cores != 2 {
		t.Errorf("%+v", u)
	}
}

func TestSharedMachineFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		workers, cores   int
		neighbour, steal float64
		want             string
	}{
		{1, -1, 0, 0, "-shared-cores -1 must be 1 to 1024"},
		{1, 5000, 0, 0, "-shared-cores 5000"},
		{0, 1, 0, 0, "needs -workers K"},
		{1, 0, 0.5, 0, "add -shared-cores N"},
		{1, 0, 0, 0.1, "add -shared-cores N"},
		{1, 1, 1, 0, "-neighbour 1 must be a share"},
		{1, 1, -0.1, 0, "-neighbour -0.1"},
		{1, 1, math.NaN(), 0, "-neighbour NaN"},
		{1, 1, 0, math.Inf(1), "-steal +Inf"},
		{1, 1, 0.5, 0.5, "under 5 %"},
	} {
		c, _ := New(tc.workers, 1, time.Millisecond, 0, "fixed")
		err := c.SetMachine(tc.cores, tc.neighbour, tc.steal)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("SetMachine(%d, %g, %g) with %d workers: %v, want %q", tc.cores, tc.neighbour, tc.steal, tc.workers, err, tc.want)
		}
		if c.machine != nil {
			t.Errorf("refused but set")
		}
	}
}

// measureMachine measures 8 clients against 2 instances of one 4 ms core
// and a 500 requests/s database, on a machine of cores (0: none) that a
// neighbour and the hypervisor take those shares of.
func measureMachine(t *testing.T, cores int, neighbour, steal float64) (float64, Utilisation, Utilisation) {
	t.Helper()
	c, err := New(2, 1, 4*time.Millisecond, 0, "fixed")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := NewVirtualClock(start)
	c.SetClock(clk)
	if err := c.SetDatabase(500, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.SetMachine(cores, neighbour, steal); err != nil {
		t.Fatal(err)
	}
	return measure(t, c, clk, start, 8)
}
