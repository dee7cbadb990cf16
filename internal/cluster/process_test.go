package cluster

import (
	"io/fs"
	"os"
	"strings"
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

// A process in execve (a namenode restarting itself in place) shows an
// empty command line for a moment: pidRuns asks again and finds it
// running, instead of taking it for gone (a chaos run then started a
// second namenode on the same metadata). One that keeps an empty command
// line is not taken for ours.
func TestPidInExecIsStillRunning(t *testing.T) {
	if !haveProcfs() {
		t.Skip("no procfs")
	}
	self := os.Getpid()
	defer func(orig func(string) ([]byte, error)) { readProc = orig }(readProc)
	empty := 0
	readProc = func(p string) ([]byte, error) {
		if strings.HasSuffix(p, "/cmdline") && empty > 0 {
			empty--
			return nil, nil
		}
		if strings.HasSuffix(p, "/cmdline") {
			return []byte("smarth\x00namenode\x00--config\x00/h/conf/nn1.yaml\x00"), nil
		}
		return os.ReadFile(p)
	}
	empty = 2
	if !pidRuns(self, "/h/conf/nn1.yaml") {
		t.Error("a process whose command line was empty for two reads (in execve) counts as gone")
	}
	empty = execRetries + 1
	if pidRuns(self, "/h/conf/nn1.yaml") {
		t.Error("a process whose command line stays empty counts as ours")
	}
}
