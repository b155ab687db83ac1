package main

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/credhub-perf/credhub-perf/results"
)

const barChar = "■"

func secs(d time.Duration) string { return fmt.Sprintf("%4.4f", d.Seconds()) }

// printReport prints rakyll/hey's summary. ok covers the requests that got
// a response, all every request (for the error distribution); warning, the
// lines of boundWarning, follows the figures it is about.
func printReport(w io.Writer, total time.Duration, ok, all results.Snapshot, open bool, warning []string) {
	b := bufio.NewWriter(w)
	defer b.Flush()
	rps := 0.0
	if total > 0 {
		rps = float64(ok.Requests) / total.Seconds()
	}
	fmt.Fprintf(b, "\nSummary:\n")
	fmt.Fprintf(b, "  Total:\t%s secs\n", secs(total))
	fmt.Fprintf(b, "  Slowest:\t%s secs\n", secs(ok.Max))
	fmt.Fprintf(b, "  Fastest:\t%s secs\n", secs(ok.Min))
	fmt.Fprintf(b, "  Average:\t%s secs\n", secs(ok.Mean))
	fmt.Fprintf(b, "  Requests/sec:\t%4.4f\n", rps)
	if open {
		fmt.Fprintf(b, "  Sched lag:\t%s secs average, %s secs slowest\n", secs(all.SchedLagMean), secs(all.SchedLagMax))
	}
	fmt.Fprintf(b, "  ")
	if ok.BytesIn > 0 {
		fmt.Fprintf(b, "\n  Total data:\t%d bytes\n  Size/request:\t%d bytes", ok.BytesIn, ok.BytesIn/ok.Requests)
	}
	if len(warning) > 0 {
		fmt.Fprintf(b, "\n\n%s", strings.Join(warning, "\n"))
	}
	fmt.Fprintf(b, "\n\nResponse time histogram:\n")
	writeHistogram(b, ok)
	fmt.Fprintf(b, "\n\nLatency distribution:")
	if ok.Requests > 0 {
		for _, p := range []int{10, 25, 50, 75, 90, 95, 99} {
			fmt.Fprintf(b, "\n  %d%% in %s secs", p, secs(ok.Quantile(float64(p)/100)))
		}
	}
	fmt.Fprintf(b, "\n\nDetails (average, fastest, slowest):\n")
	n := ok.Requests
	// Like hey, connection phases average over all requests: a reused
	// connection counts as 0.
	phase := func(name string, p results.Phase) {
		var avg, min time.Duration
		if n > 0 {
			avg = p.Sum / time.Duration(n)
		}
		if p.Count >= n {
			min = p.Min
		}
		fmt.Fprintf(b, "  %s\t%s secs, %s secs, %s secs\n", name, secs(avg), secs(min), secs(p.Max))
	}
	phase("DNS+dialup:", ok.DNSDial)
	phase("DNS-lookup:", ok.DNS)
	phase("req write:", ok.ReqWrite)
	phase("resp wait:", ok.RespDelay)
	phase("resp read:", ok.RespRead)
	fmt.Fprintf(b, "\nStatus code distribution:")
	codes := make([]int, 0, len(ok.StatusCodes))
	for c := range ok.StatusCodes {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	for _, c := range codes {
		fmt.Fprintf(b, "\n  [%d]\t%d responses", c, ok.StatusCodes[c])
	}
	fmt.Fprintf(b, "\n\n")
	if len(all.ErrorCounts) > 0 {
		msgs := make([]string, 0, len(all.ErrorCounts))
		for m := range all.ErrorCounts {
			msgs = append(msgs, m)
		}
		sort.Strings(msgs)
		fmt.Fprintf(b, "Error distribution:")
		for _, m := range msgs {
			fmt.Fprintf(b, "\n  [%d]\t%s", all.ErrorCounts[m], m)
		}
	}
	fmt.Fprintf(b, "\n")
}

// writeHistogram prints hey's 11-bucket histogram from fastest to slowest.
func writeHistogram(b io.Writer, s results.Snapshot) {
	const bc = 10
	if s.Requests == 0 {
		return
	}
	marks := make([]time.Duration, bc+1)
	counts := make([]uint64, bc+1)
	bs := (s.Max - s.Min) / bc
	for i := 0; i < bc; i++ {
		marks[i] = s.Min + bs*time.Duration(i)
	}
	marks[bc] = s.Max
	var prev uint64
	for i := range marks {
		c := s.CountAtMost(marks[i])
		if i == bc {
			c = uint64(s.Requests)
		}
		if c < prev {
			c = prev
		}
		counts[i] = c - prev
		prev = c
	}
	var max uint64
	for _, c := range counts {
		if c > max {
			max = c
		}
	}
	for i := range marks {
		bar := 0
		if max > 0 {
			bar = int((counts[i]*40 + max/2) / max)
		}
		fmt.Fprintf(b, "  %4.3f [%d]\t|%s\n", marks[i].Seconds(), counts[i], strings.Repeat(barChar, bar))
	}
}
