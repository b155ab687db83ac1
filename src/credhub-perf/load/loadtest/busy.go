package loadtest

// The real-time tests (QuietMachine) judge latencies, rates or CPU
// figures whose margins hold on a quiet machine only. Rather than assume
// one, they put the figures the tool records for every step (the tester's
// CPU, the host's busy and stolen shares, the tester's wait for a CPU) to
// the tool's own verdict at its default bounds (cpuload.Judge): a step it
// would flag measured the machine. Such an attempt is run again, and when
// every attempt was disturbed the test says so (NotRunOnBusyMachine)
// instead of failing by chance.

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/cpuload"
)

// SinceVerdict is why credhub-perf, at its default saturation bounds,
// would say this process (tester and server in one) measured the machine
// from the sample from to now (the tester short of CPU, a busy host the
// tester waited on, CPU steal); "" when none. The tests that run the tool
// take the same verdict from the figures it records for each step.
func SinceVerdict(from cpuload.Sample) string {
	return cpuload.Judge(cpuload.Between(from, cpuload.Take(time.Now())), cpuload.DefaultLimits).Reason
}

// BusyAttempts is how many times a real-time test runs before a machine
// busy on every attempt makes it not run.
const BusyAttempts = 2

// OnQuietMachine calls attempt until it returns "" (the tool's verdict
// found its figures undisturbed, and it checked its assertions), at most
// BusyAttempts times; when every attempt was disturbed, t is not run, with
// the last reason.
func OnQuietMachine(t *testing.T, attempt func() (busy string)) {
	t.Helper()
	var why string
	for i := 1; i <= BusyAttempts; i++ {
		if why = attempt(); why == "" {
			return
		}
		t.Logf("attempt %d of %d: the machine was busy (%s)", i, BusyAttempts, why)
	}
	NotRunOnBusyMachine(t, why)
}

// NotRunOnBusyMachine ends a real-time test that could not be judged
// because the machine was busy, by the tool's own verdict (why): skipped,
// not failed, and said where it is seen. The line goes to the test's log
// and to $TEST_NOTES, which scripts/test-all lists under its summary as a
// part of a suite not run, so a busy CI machine shows as such rather than
// as a pass or a chance failure.
func NotRunOnBusyMachine(t testing.TB, why string) {
	t.Helper()
	line := fmt.Sprintf("%s: the machine was too busy to judge it (%s); run it on a quiet machine", t.Name(), why)
	if notes := os.Getenv("TEST_NOTES"); notes != "" {
		f, err := os.OpenFile(notes, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Errorf("TEST_NOTES: %v", err)
		} else {
			_, err = fmt.Fprintln(f, line)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Errorf("TEST_NOTES: %v", err)
			}
		}
	}
	t.Skip("NOT RUN: " + line)
}
