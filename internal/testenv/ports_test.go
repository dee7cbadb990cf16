package testenv

import (
	"net"
	"strconv"
	"testing"
)

// The ports are distinct, free and, where the kernel's range is known,
// below it.
func TestRestartablePorts(t *testing.T) {
	addrs := RestartablePorts(t, 8)
	low := ephemeralLow()
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
