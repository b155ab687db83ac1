// Command pacer-floor is the open-loop bench's control: the best a pacer
// can do on this core, with nothing else to do. It wakes at start + i/rate
// for the given duration, as an open-loop generator sends, and records how
// late each wake-up was: it sleeps in the kernel until -early before each
// schedule (a blocking nanosleep on its own thread, not Go's timers) and
// spins to it, so it is late only when the core (or the VM's vCPU) was not
// its for longer than -early. It sends nothing.
//
//	pacer-floor -rate R -duration D [-early 200us]
//
// It prints one JSON line: rate, wake-ups, their lateness p50, p99 and
// maximum in µs, and how many were more than 500 µs late. scripts/
// bench-openloop runs it on the generator's core beside each generator:
// when this floor misses the open-loop sched-lag target at a rate, no
// scheduler can meet it on that core in those minutes (the machine is the
// bound), and the bench says so instead of calling the generator's figure
// a miss. It is stdlib only, as null-server.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"
)

// floor is what one run measured.
type floor struct {
	Rate     float64 `json:"rate"`
	Wakeups  int     `json:"wakeups"`
	EarlyUS  float64 `json:"early_us"`
	LateP50  float64 `json:"late_p50_us"`
	LateP99  float64 `json:"late_p99_us"`
	LateMax  float64 `json:"late_max_us"`
	Over500  int     `json:"over_500us"`
	Duration float64 `json:"duration_s"`
}

// summarise turns the wake-ups' lateness into the printed figures; the
// percentiles are nearest-rank on the sorted values, as the bench's own.
func summarise(late []time.Duration, rate float64, early, dur time.Duration) floor {
	f := floor{Rate: rate, Wakeups: len(late), EarlyUS: us(early), Duration: dur.Seconds()}
	if len(late) == 0 {
		return f
	}
	s := slices.Clone(late)
	slices.Sort(s)
	rank := func(p float64) time.Duration {
		i := int(p / 100 * float64(len(s)))
		return s[min(i, len(s)-1)]
	}
	f.LateP50, f.LateP99, f.LateMax = us(rank(50)), us(rank(99)), us(s[len(s)-1])
	for _, d := range s {
		if d > 500*time.Microsecond {
			f.Over500++
		}
	}
	return f
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// validate names the bad flag and the fix, before anything runs.
func validate(rate float64, dur, early time.Duration) error {
	switch {
	case !(rate > 0) || rate > 1e6:
		return fmt.Errorf("-rate %g: give wake-ups per second, more than 0 and at most 1000000", rate)
	case dur <= 0 || dur > 10*time.Minute:
		return fmt.Errorf("-duration %v: give a duration from 1ms to 10m", dur)
	case early < 0 || early > time.Second:
		return fmt.Errorf("-early %v: give a spin margin from 0 to 1s", early)
	case rate*dur.Seconds() > 1e8:
		return errors.New("-rate x -duration is over 100,000,000 wake-ups: shorten the run")
	}
	return nil
}

// pace wakes at each schedule for dur and returns every wake-up's lateness.
// The sleep blocks this goroutine's thread in the kernel (nanosleep), so
// the wake-up is the kernel timer's and the scheduler's, not Go's poller's.
func pace(rate float64, dur, early time.Duration) []time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := int(rate * dur.Seconds())
	late := make([]time.Duration, 0, n)
	start := time.Now().Add(10 * time.Millisecond)
	for i := range n {
		due := start.Add(time.Duration(float64(i) * float64(time.Second) / rate))
		if d := time.Until(due) - early; d > 0 {
			sleep(d)
		}
		for time.Now().Before(due) {
		}
		late = append(late, time.Since(due))
	}
	return late
}

func main() {
	rate := flag.Float64("rate", 0, "wake-ups per second (the generator's offered rate)")
	dur := flag.Duration("duration", 5*time.Second, "how long to pace")
	early := flag.Duration("early", 200*time.Microsecond, "wake this much before each schedule and spin to it (the open-loop pacer's largest margin)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "pacer-floor: unexpected argument %q: it takes flags only (-rate, -duration, -early)\n", flag.Arg(0))
		os.Exit(2)
	}
	if err := validate(*rate, *dur, *early); err != nil {
		fmt.Fprintln(os.Stderr, "pacer-floor:", err)
		os.Exit(2)
	}
	f := summarise(pace(*rate, *dur, *early), *rate, *early, *dur)
	if err := json.NewEncoder(os.Stdout).Encode(f); err != nil {
		fmt.Fprintln(os.Stderr, "pacer-floor: writing the result:", err)
		os.Exit(1)
	}
}
