package ramp

import "syscall"

// diskFree is the space an unprivileged writer may still use in dir's
// filesystem.
func diskFree(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}
