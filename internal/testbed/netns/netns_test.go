package netns

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"smarth/internal/testenv"
	"syscall"
	"testing"
	"time"
)

// newNS creates a throwaway namespace with lo up, or skips.
func newNS(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "needs root to create network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		testenv.SkipOrFail(t, "iproute2 (ip) is not installed")
	}
	name := fmt.Sprintf("smarth.unit-netns-%d.a", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		testenv.SkipOrFail(t, "cannot create a network namespace here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	if out, err := exec.Command("ip", "-n", name, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up: %v: %s", err, out)
	}
	return name
}

func TestListenDialInside(t *testing.T) {
	name := newNS(t)
	path := Path(name)
	ln, err := Listen(path, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hi"))
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dialer(path)(ctx, ln.Addr().String())
	if err != nil {
		t.Fatalf("dial inside the namespace: %v", err)
	}
	buf := make([]byte, 2)
	if _, err := c.Read(buf); err != nil || string(buf) != "hi" {
		t.Errorf("read %q, %v", buf, err)
	}
	c.Close()
	// The same address from this process's own namespace is another
	// loopback: nothing listens there (or something else does).
	if c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		c.Write([]byte("x"))
		n, _ := c.Read(buf)
		c.Close()
		if n == 2 && string(buf) == "hi" {
			t.Error("the listener was reachable from outside its namespace")
		}
	}
	// The calling goroutine's thread was not moved.
	if ln2, err := net.Listen("tcp", ln.Addr().String()); err == nil {
		ln2.Close()
	} else {
		t.Logf("port in use in the root namespace too (fine): %v", err)
	}
}

func TestPIDsAndSignal(t *testing.T) {
	name := newNS(t)
	path := Path(name)
	cmd := exec.Command("ip", "netns", "exec", name, "sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(5 * time.Second)
	for !PIDIn(cmd.Process.Pid, path) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child never entered the namespace")
		}
		time.Sleep(10 * time.Millisecond)
	}
	pids, err := PIDs(path)
	if err != nil || !slices.Contains(pids, cmd.Process.Pid) {
		t.Errorf("PIDs = %v, %v; want it to contain %d", pids, err, cmd.Process.Pid)
	}
	if PIDIn(os.Getpid(), path) {
		t.Error("the test process itself claims to be in the namespace")
	}
	if Signal(os.Getpid(), path, syscall.SIGTERM) {
		t.Fatal("Signal signalled a process outside the namespace")
	}
	if !Signal(cmd.Process.Pid, path, syscall.SIGKILL) {
		t.Error("Signal did not signal the child")
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("child did not exit after SIGKILL")
	}
	names, err := List("smarth.unit-netns-")
	if err != nil || !slices.Contains(names, name) {
		t.Errorf("List = %v, %v", names, err)
	}
}
