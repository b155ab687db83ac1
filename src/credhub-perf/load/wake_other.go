//go:build !linux

package load

import "context"

// newTimerfdWaker: timerfd is Linux only; elsewhere Go timers pace sends.
func newTimerfdWaker(context.Context, bool) waker { return nil }
