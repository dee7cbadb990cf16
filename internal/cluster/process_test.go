package cluster

import (
	"io/fs"
	"os"
	"syscall"
	"testing"
)

// A daemon of ours that exits is reaped by Launch's Wait goroutine, so its
// /proc entry can vanish between kill(0) and the read of /proc/<pid>/stat.
// That used to count as "no procfs, trust kill(0)" and made a stopped
// namenode look alive after `down` (CI failed once on it).
func TestPidVanishingBetweenChecksIsGone(t *testing.T) {
	if !haveProcfs() {
		t.Skip("no procfs")
	}
	self := os.Getpid()
	if !pidRuns(self, "") {
		t.Fatal("this process does not count as running")
	}
	defer func(orig func(string) ([]byte, error)) { readProc = orig }(readProc)
	readProc = func(string) ([]byte, error) {
		return nil, &fs.PathError{Op: "open", Path: "/proc/x", Err: syscall.ENOENT}
	}
	if pidRuns(self, "") {
		t.Error("a pid whose /proc entry is gone counts as running")
	}
}
