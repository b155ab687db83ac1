package main

import (
	"syscall"
	"time"
)

// sleep blocks the thread in nanosleep: the kernel's high-resolution timer,
// with no runtime poller between it and the wake-up.
func sleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
