package apps

import (
	"os/exec"
	"syscall"
	"time"
)

// A streaming command runs in a process group of its own, and the whole
// group is killed when its task ends, fails or is killed: a command's
// children (a pipeline, `sleep 600 &`, a forked daemon) would otherwise
// outlive the task under PID 1, keep its stdout open, and hold the task
// (and its job) until they exit. A child that leaves the group on
// purpose (setsid) escapes this; cgroups would catch it too (later).

// groupWaitDelay bounds how long Wait waits for the command's pipes
// after it is killed.
const groupWaitDelay = 2 * time.Second

// ownProcessGroup makes cmd the leader of a new process group, killed
// whole when cmd's context ends (the caller may extend cmd.Cancel).
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = groupWaitDelay
}

// killGroup sends SIGKILL to cmd's process group (its pgid is its pid).
// A group already gone is not an error.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err == syscall.ESRCH {
		return nil
	}
	return err
}
