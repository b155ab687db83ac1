//go:build unix

package targetload

import (
	"os/exec"
	"syscall"
)

// killGroupOnCancel runs cmd in its own process group, killed whole on
// timeout: a hung bosh (or a script around it) must not outlive the call
// or hold its pipes.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
