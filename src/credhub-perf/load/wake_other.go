//go:build !linux

package load

import (
	"context"
	"time"
)

// newTimerfdWaker: timerfd is Linux only; elsewhere Go timers pace sends.
func newTimerfdWaker(context.Context, time.Duration) waker { return nil }
