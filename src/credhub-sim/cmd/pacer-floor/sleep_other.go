//go:build !linux

package main

import "time"

// sleep elsewhere uses Go's timer, up to a millisecond late: a floor taken
// there is a loose one.
func sleep(d time.Duration) { time.Sleep(d) }
