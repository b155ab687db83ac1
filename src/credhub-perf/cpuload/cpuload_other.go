//go:build !linux

package cpuload

import "time"

// Elsewhere the figures are unknown and recorded as null, never as 0.
func processCPU() (time.Duration, bool)    { return 0, false }
func allowedCPUs() (map[int]bool, bool)    { return nil, false }
func hostTicks(map[int]bool) (Ticks, bool) { return Ticks{}, false }
func runWait() (time.Duration, bool)       { return 0, false }
