package load

import (
	"context"
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
	f   *os.File
	rc  syscall.RawConn
	buf [8]byte
	its itimerspec
}

type itimerspec struct {
	interval, value syscall.Timespec
}

const clockMonotonic = 1 // CLOCK_MONOTONIC, the clock of Go's monotonic readings

// newTimerfdWaker returns nil when the kernel refuses a timerfd (old kernel,
// seccomp); the caller then falls back to Go timers.
func newTimerfdWaker() waker {
	fd, _, e := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if e != 0 {
		return nil
	}
	// A non-blocking fd given to os.NewFile is registered with the poller.
	f := os.NewFile(fd, "timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	return &timerfdWaker{f: f, rc: rc}
}

func (w *timerfdWaker) until(ctx context.Context, t time.Time) bool {
	d := time.Until(t) - spinBefore
	if d > 0 {
		if !w.sleep(ctx, d) {
			return false
		}
	}
	return spinUntil(ctx, t)
}

func (w *timerfdWaker) sleep(ctx context.Context, d time.Duration) bool {
	w.its.value = syscall.NsecToTimespec(int64(d))
	var serr syscall.Errno
	if err := w.rc.Control(func(fd uintptr) {
		_, _, serr = syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&w.its)), 0, 0, 0)
	}); err != nil || serr != 0 {
		return sleepUntil(ctx, new(*time.Timer), time.Now().Add(d))
	}
	if ctx.Done() != nil {
		// A cancelled step must not wait out a long gap between requests.
		stop := context.AfterFunc(ctx, func() { _ = w.f.SetReadDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	_, err := w.f.Read(w.buf[:])
	if err != nil {
		if ctx.Err() != nil {
			return false
		}
		// Not a timer expiry (should not happen): do not busy-loop on it.
		return sleepUntil(ctx, new(*time.Timer), time.Now().Add(d))
	}
	return ctx.Err() == nil
}

func (w *timerfdWaker) close() { _ = w.f.Close() }
