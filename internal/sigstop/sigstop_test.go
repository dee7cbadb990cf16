package sigstop

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// busyChild, run as the test binary's child, keeps eight threads
// writing their clock into a shared page until stopped.
func init() {
	if p := os.Getenv("SIGSTOP_BUSY_CHILD"); p != "" {
		clock := sharedClock(p)
		for range 8 {
			go func() {
				for {
					atomic.StoreInt64(clock, time.Now().UnixNano())
				}
			}()
		}
		select {}
	}
}

func sharedClock(path string) *int64 {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	if err := f.Truncate(4096); err != nil {
		panic(err)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		panic(err)
	}
	return (*int64)(unsafe.Pointer(&b[0]))
}

// TestAwaitIsWhenTheProcessStops: a process of busy threads
// writes its clock into a shared page; after SIGSTOP, Await
// returns a time after the last clock any of its threads wrote, in
// every one of 20 trials (kill(2) returning is not that moment: the
// threads may run on until the one that takes the signal gets a CPU).
// The trials also log how often the process ran on after kill returned.
func TestAwaitIsWhenTheProcessStops(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no /proc/self/task: %v", err)
		}
		t.Skipf("no /proc/self/task: %v", err)
	}
	ranOn := 0
	for trial := range 20 {
		path := filepath.Join(t.TempDir(), "clock")
		clock := sharedClock(path)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "SIGSTOP_BUSY_CHILD="+path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for atomic.LoadInt64(clock) == 0 {
			time.Sleep(time.Millisecond) // the child starting
		}
		if err := syscall.Kill(cmd.Process.Pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		killed := time.Now().UnixNano()
		stopped, err := Await(cmd.Process.Pid, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		last := atomic.LoadInt64(clock)
		cmd.Process.Kill()
		cmd.Wait()
		if last > stopped.UnixNano() {
			t.Fatalf("trial %d: the process wrote its clock %v after Await said it was stopped", trial, time.Duration(last-stopped.UnixNano()))
		}
		if last > killed {
			ranOn++
		}
	}
	t.Logf("in %d of 20 trials the process ran on after kill(SIGSTOP) returned", ranOn)
}
