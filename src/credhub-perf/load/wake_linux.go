package load

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// timerfdWaker sleeps on a Linux timerfd read through the runtime's poller:
// the kernel's high-resolution timer makes the fd readable on time and the
// poller's epoll wait returns at once, whereas a Go timer makes the poller
// wait in whole milliseconds. No thread is held while sleeping.
type timerfdWaker struct {
	f          *os.File
	fd         uintptr // f's descriptor, kept open by f until close
	stop       func() bool
	buf        [8]byte
	its        itimerspec
	spin       bool       // wake early and spin (requests spinMinGap apart or more)
	byDeadline int        // sleeps the read deadline ended (the core was busy)
	m          wakeMargin // how early
}

type itimerspec struct {
	interval, value syscall.Timespec
}

const clockMonotonic = 1 // CLOCK_MONOTONIC, the clock of Go's monotonic readings

// newTimerfdWaker returns nil when the kernel refuses a timerfd (old kernel,
// seccomp); the caller then falls back to Go timers.
func newTimerfdWaker(ctx context.Context, gap time.Duration) waker {
	fd, _, e := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if e != 0 {
		return nil
	}
	// A non-blocking fd given to os.NewFile is registered with the poller.
	w := &timerfdWaker{f: os.NewFile(fd, "timerfd"), fd: fd, spin: gap >= spinMinGap, m: wakeMargin{gap: gap}}
	// A cancelled step must not wait out a long gap between requests: the
	// read in progress, and every later one, fails at once.
	w.stop = context.AfterFunc(ctx, func() { _ = w.f.SetReadDeadline(time.Unix(1, 0)) })
	return w
}

func (w *timerfdWaker) until(ctx context.Context, t time.Time) bool {
	return w.wait(ctx, t, true)
}

func (w *timerfdWaker) near(ctx context.Context, t time.Time) bool {
	return w.wait(ctx, t, false)
}

// wait sleeps until t, or, when spin is false and the waker spins (requests
// far apart), until it has woken early by its margin: the caller then
// spins to t.
func (w *timerfdWaker) wait(ctx context.Context, t time.Time, spin bool) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	early := w.m.early()
	if d <= early || !w.spin {
		// Requests close together: a busy step. Park instead
		// of spinning: a goroutine that yields in a loop is always
		// runnable, and the runtime looks for network readiness only when
		// nothing is, so on a one-core tester a spinning pacer would leave
		// the workers' responses unread.
		if !w.sleep(ctx, d) {
			return false
		}
		return spinUntil(ctx, t) // a no-op unless the timer fired early
	}
	wake := t.Add(-early)
	if !w.sleep(ctx, d-early) {
		return false
	}
	w.m.note(time.Since(wake))
	if !spin {
		return ctx.Err() == nil
	}
	return spinUntil(ctx, t)
}

func (w *timerfdWaker) sleep(ctx context.Context, d time.Duration) bool {
	w.its.value = syscall.NsecToTimespec(int64(d))
	// timerfd_settime does not block: no need for the runtime's syscall
	// bookkeeping.
	if _, _, e := syscall.RawSyscall6(syscall.SYS_TIMERFD_SETTIME, w.fd, 0, uintptr(unsafe.Pointer(&w.its)), 0, 0, 0); e != 0 {
		return sleepUntil(ctx, new(*time.Timer), time.Now().Add(d))
	}
	// The poller sees the timerfd fire only when nothing is runnable: while
	// the tester's one core is busy (a collection's mark phase, a burst of
	// responses) the pacer would wake late by however long the run queue
	// takes to drain. The read deadline is a runtime timer, which the
	// scheduler checks at every goroutine switch, so a busy tester wakes
	// the pacer at the next switch instead; an idle one, by the timerfd.
	_ = w.f.SetReadDeadline(time.Now().Add(d))
	if ctx.Err() != nil { // the step's cancel may have set its deadline first
		return false
	}
	if _, err := w.f.Read(w.buf[:]); err != nil {
		if ctx.Err() != nil {
			return false
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			w.byDeadline++
			return true
		}
		// Not a timer expiry (should not happen): do not busy-loop on it.
		return sleepUntil(ctx, new(*time.Timer), time.Now().Add(d))
	}
	return ctx.Err() == nil
}

func (w *timerfdWaker) close() {
	w.stop()
	_ = w.f.Close()
}
