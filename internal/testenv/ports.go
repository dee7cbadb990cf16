package testenv

import (
	"net"
	"strconv"
	"syscall"
	"testing"

	"smarth/internal/ports"
)

// RestartablePorts returns n free 127.0.0.1 addresses with ports below
// the kernel's ephemeral range (ports.Listen), for servers a test stops
// and starts again on the same port. A port from the ephemeral range that
// a stopped server has released can be taken in the meantime as the
// source port of any outgoing connection on the machine, and the restart
// then fails with "address already in use": a CI run's replog test held a
// member's raft port closed for 1.5 s while the other packages' tests made
// thousands of connections, and lost it.
func RestartablePorts(t testing.TB, n int) []string {
	t.Helper()
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	var addrs []string
	for len(addrs) < n {
		ln, err := ports.Listen()
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs
}

// DeadAddr returns a 127.0.0.1 address that refuses connections for the
// rest of the test: a TCP socket bound to it that never listens. The
// port stays the test's, so no other listener (in this or any other
// process) and no outgoing connection's source port can take it. A
// listener opened on 127.0.0.1:0 and closed again gives a dead address
// only until the kernel hands the port out again; a client test run
// while CI ran every package at once found such a "dead" namenode
// answering.
func DeadAddr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("dead address: %v", err)
	}
	syscall.CloseOnExec(fd)
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("dead address: bind: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("dead address: %v", err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
}
