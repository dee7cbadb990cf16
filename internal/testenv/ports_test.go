package testenv

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"

	"smarth/internal/ports"
)

// The ports are distinct, free and, where the kernel's range is known,
// below it.
func TestRestartablePorts(t *testing.T) {
	addrs := RestartablePorts(t, 8)
	low := ports.EphemeralLow()
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] {
			t.Fatalf("%s given twice: %v", a, addrs)
		}
		seen[a] = true
		_, p, err := net.SplitHostPort(a)
		if err != nil {
			t.Fatal(err)
		}
		if port, _ := strconv.Atoi(p); low > 11000 && port >= low {
			t.Errorf("%s is in the ephemeral range (from %d)", a, low)
		}
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Errorf("%s is not free: %v", a, err)
			continue
		}
		ln.Close()
	}
}

// A dead address refuses connections, and the port cannot be taken by a
// listener while the test runs.
func TestDeadAddr(t *testing.T) {
	a := DeadAddr(t)
	if c, err := net.Dial("tcp", a); err == nil {
		c.Close()
		t.Fatalf("%s accepted a connection", a)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v; want connection refused", a, err)
	}
	if ln, err := net.Listen("tcp", a); err == nil {
		ln.Close()
		t.Fatalf("a listener took %s", a)
	}
}
