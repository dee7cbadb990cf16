package datanode

import "syscall"

// setUmask sets the process umask and returns a func restoring it.
func setUmask(m int) func() {
	old := syscall.Umask(m)
	return func() { syscall.Umask(old) }
}
