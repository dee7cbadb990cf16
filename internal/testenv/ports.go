package testenv

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"testing"
)

// RestartablePorts returns n free 127.0.0.1 addresses with ports below
// the kernel's ephemeral range, for servers a test stops and starts again
// on the same port. A port from the ephemeral range (what 127.0.0.1:0
// gives) that a stopped server has released can be taken in the meantime
// as the source port of any outgoing connection on the machine, and the
// restart then fails with "address already in use": a CI run's replog
// test held a member's raft port closed for 1.5 s while the other
// packages' tests made thousands of connections, and lost it. The kernel
// never picks a source port below the range. Where the range cannot be
// read or leaves no room below it, the ports come from 127.0.0.1:0.
func RestartablePorts(t testing.TB, n int) []string {
	t.Helper()
	lo, hi := 10000, ephemeralLow()
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	var addrs []string
	for tries := 0; len(addrs) < n; tries++ {
		addr := "127.0.0.1:0"
		if hi-lo > 1000 && tries < 100*n {
			addr = fmt.Sprintf("127.0.0.1:%d", lo+rand.IntN(hi-lo))
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			if addr == "127.0.0.1:0" {
				t.Fatal(err)
			}
			continue // taken: another
		}
		lns = append(lns, ln)
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs
}

// ephemeralLow is the first port of the kernel's ephemeral range (0 if
// unknown).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	var lo, hi int
	if _, err := fmt.Sscan(string(b), &lo, &hi); err != nil {
		return 0
	}
	return lo
}
