//go:build !linux

package idleconn

import "net"

// Probe looks at an idle connection's socket on Linux (probe_linux.go).
// Elsewhere there is no look: Alive takes every idle connection as open,
// and a request that finds one closed is sent once more if net/http would
// replay it.
type Probe struct{ draining bool }

// NewProbe: no look here (nil).
func NewProbe(net.Conn) *Probe { return nil }

func (p *Probe) peek() peekState { return peekUnknown }

// ReadNow: nothing to read without a look.
func (p *Probe) ReadNow([]byte) (int, error) { return 0, errWouldBlock }
