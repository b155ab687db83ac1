//go:build !linux

package load

// newTimerfdWaker: timerfd is Linux only; elsewhere Go timers pace sends.
func newTimerfdWaker() waker { return nil }
