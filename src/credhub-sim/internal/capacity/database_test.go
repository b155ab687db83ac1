package capacity

import (
	"math"
	"testing"
	"time"
)

// A shared database of 300 requests/s behind instances of one core and
// 10 ms each (100/s an instance): on the virtual clock, 1 and 2 instances
// serve 100 and 200/s with their cores all busy and the database a third
// and two thirds busy; 4 and 8 instances plateau at the database's 300/s,
// the database all busy and the instances less and less. This is the
// model behind a scaling study whose verdict flips from CredHub to the
// database between 2 and 4 instances.
func TestDatabasePlateausAcrossInstanceCounts(t *testing.T) {
	for _, tc := range []struct {
		k        int
		rate     float64
		inst, db float64
	}{
		{1, 100, 1, 1.0 / 3},
		{2, 200, 1, 2.0 / 3},
		{4, 300, 0.75, 1},
		{8, 300, 0.375, 1},
	} {
		c, err := New(tc.k, 1, 10*time.Millisecond, 0, "fixed")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		clk := NewVirtualClock(start)
		c.SetClock(clk)
		if err := c.SetDatabase(300, 1); err != nil {
			t.Fatal(err)
		}
		rate, u0, u1 := measure(t, c, clk, start, 2*tc.k+4)
		dt := u1.NowS - u0.NowS
		var inst float64
		for i := range u1.Instances {
			inst += (u1.Instances[i].BusyS - u0.Instances[i].BusyS) / dt / float64(tc.k)
		}
		db := (u1.Database.BusyS - u0.Database.BusyS) / dt
		if math.Abs(rate-tc.rate)/tc.rate > 0.02 || math.Abs(inst-tc.inst) > 0.03 || math.Abs(db-tc.db) > 0.03 {
			t.Errorf("%d instances: %.1f/s, instances %.3f busy, database %.3f; want %.0f/s, %.3f, %.3f", tc.k, rate, inst, db, tc.rate, tc.inst, tc.db)
		}
		if len(u1.Instances) != tc.k || u1.Database.Cores != 1 || u1.Instances[0].Cores != 1 || u1.Instances[0].Name != "instance 1" {
			t.Errorf("report %+v", u1)
		}
	}
}

func TestDatabaseFlagsRefused(t *testing.T) {
	c, _ := New(1, 1, time.Millisecond, 0, "fixed")
	for _, bad := range []struct {
		capacity float64
		cores    int
	}{{-1, 1}, {math.NaN(), 1}, {1e9, 1}, {100, 0}, {100, 5000}} {
		if err := c.SetDatabase(bad.capacity, bad.cores); err == nil {
			t.Errorf("SetDatabase(%v, %d) accepted", bad.capacity, bad.cores)
		}
	}
	if err := c.SetDatabase(0, 0); err != nil || c.db != nil {
		t.Errorf("no capacity must mean no database: %v", err)
	}
	if u := c.Utilisation(); u.Database != nil || len(u.Instances) != 1 {
		t.Errorf("%+v", u)
	}
}
