package main

import (
	"strings"
	"testing"
	"time"
)

const µs = time.Microsecond

func TestSummariseKnownAnswers(t *testing.T) {
	// 200 wake-ups: 0..199 µs late, then two of them made 600 and 900 µs.
	late := make([]time.Duration, 200)
	for i := range late {
		late[i] = time.Duration(i) * µs
	}
	late[10], late[20] = 600*µs, 900*µs
	f := summarise(late, 2100, 200*µs, 5*time.Second)
	if f.Wakeups != 200 || f.Over500 != 2 || f.LateMax != 900 {
		t.Fatalf("wakeups %d over500 %d max %v, want 200, 2, 900", f.Wakeups, f.Over500, f.LateMax)
	}
	// Sorted: 0..199 without 10 and 20, then 600, 900; rank 100 of 200
	// is 102 µs, rank 198 is 600 µs.
	if f.LateP50 != 102 || f.LateP99 != 600 {
		t.Fatalf("p50 %v p99 %v, want 102 and 600", f.LateP50, f.LateP99)
	}
	if f.Rate != 2100 || f.EarlyUS != 200 || f.Duration != 5 {
		t.Fatalf("echoed settings wrong: %+v", f)
	}
	if late[10] != 600*µs {
		t.Fatal("summarise sorted its caller's slice")
	}
}

func TestSummariseNoWakeups(t *testing.T) {
	f := summarise(nil, 80, 0, time.Millisecond)
	if f.Wakeups != 0 || f.LateP99 != 0 || f.Over500 != 0 {
		t.Fatalf("empty run: %+v", f)
	}
}

func TestValidateHostileFlags(t *testing.T) {
	for _, c := range []struct {
		rate        float64
		dur, early  time.Duration
		wantInError string
	}{
		{0, time.Second, 0, "-rate"},
		{-5, time.Second, 0, "-rate"},
		{2e6, time.Second, 0, "-rate"},
		{80, 0, 0, "-duration"},
		{80, time.Hour, 0, "-duration"},
		{80, time.Second, -1, "-early"},
		{80, time.Second, 2 * time.Second, "-early"},
		{1e6, 9 * time.Minute, 0, "wake-ups"},
	} {
		err := validate(c.rate, c.dur, c.early)
		if err == nil || !strings.Contains(err.Error(), c.wantInError) {
			t.Errorf("validate(%g, %v, %v) = %v, want an error naming %s", c.rate, c.dur, c.early, err, c.wantInError)
		}
	}
	if err := validate(2100, 5*time.Second, 200*µs); err != nil {
		t.Fatalf("valid flags refused: %v", err)
	}
}

func TestValidateNaNRate(t *testing.T) {
	var zero float64
	if err := validate(zero/zero, time.Second, 0); err == nil {
		t.Fatal("NaN rate accepted")
	}
}

// TestPaceWakesEveryScheduleNeverEarly runs 50 wake-ups at 1,000/s: every
// schedule is woken once, none before its time (lateness is never
// negative). How late is the machine's, so it is not asserted.
func TestPaceWakesEveryScheduleNeverEarly(t *testing.T) {
	late := pace(1000, 50*time.Millisecond, 200*µs)
	if len(late) != 50 {
		t.Fatalf("%d wake-ups, want 50", len(late))
	}
	for i, d := range late {
		if d < 0 {
			t.Fatalf("wake-up %d was %v early", i, -d)
		}
	}
}
