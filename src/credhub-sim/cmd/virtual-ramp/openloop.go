package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/credhub-perf/credhub-sim/internal/capacity"
)

// openWorkers is an open-loop step's concurrency column: credhub-perf
// writes its worker cap there; here every request is its own client, so
// the cap is never reached.
const openWorkers = 1000

// parseRates reads -rates: each step's offered rate, its concurrency
// column openWorkers.
func parseRates(o *options, list string) error {
	if strings.TrimSpace(list) == "" {
		return nil
	}
	for _, f := range strings.Split(list, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(r >= 1 && r <= 100000) {
			return fmt.Errorf("-rates %q: use rates from 1 to 100000 requests/s, comma-separated", list)
		}
		o.rates = append(o.rates, r)
		o.concurrency = append(o.concurrency, openWorkers)
	}
	return nil
}

// rateOf is step k's rate column: 0 in closed loop.
func (o options) rateOf(k int) string {
	if len(o.rates) == 0 {
		return "0"
	}
	return strconv.FormatFloat(o.rates[k], 'f', -1, 64)
}

// mode is meta.json's mode.
func (o options) mode() string {
	if len(o.rates) > 0 {
		return "open"
	}
	return "closed"
}

// openStep offers rate requests/s at fixed intervals until end, each
// request a client of its own on the clock, so arrivals never wait for
// answers: a pause or a burst of long service times queues them, as it
// queues independent clients. The pacer is a client too: the clock moves
// only when it sleeps to the next arrival and every request in flight
// waits on the model. Latency counts from the arrival's schedule.
func openStep(m *capacity.Model, clk *capacity.VirtualClock, rate float64, start, end time.Time) []row {
	var mu sync.Mutex
	var rows []row
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) / rate)
	clk.Join()
	t0 := clk.Now()
	for k := 0; ; k++ {
		at := t0.Add(time.Duration(k) * interval)
		if !at.Before(end) {
			break
		}
		clk.SleepUntil(context.Background(), at)
		clk.Join()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer clk.Leave()
			m.Serve(context.Background(), false, func() {})
			done := clk.Now()
			mu.Lock()
			rows = append(rows, row{at.Sub(start), done.Sub(at)})
			mu.Unlock()
		}()
	}
	clk.Leave()
	wg.Wait()
	byCompletion(rows)
	return rows
}
