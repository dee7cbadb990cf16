// Package ports chooses loopback ports for servers whose addresses must be
// known before they bind (an HA group's members name each other in their
// configs; a test restarts a server on the port it had).
//
// A port from 127.0.0.1:0 comes from the kernel's ephemeral range, the
// same range every outgoing connection on the machine takes its source
// port from: once the chooser closes its listener, any connect can take
// the port before the server binds it, and the server then fails with
// "address already in use" (seen in CI, where every package's tests make
// thousands of connections at once). The kernel never picks a source port
// below the range, so Listen chooses there.
package ports

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
)

// low is the lowest port Listen picks: above the well-known and most
// registered service ports.
const low = 10000

// Listen opens a listener on a free 127.0.0.1 port below the kernel's
// ephemeral range; the caller closes it just before its server binds the
// port. Where the range cannot be read or leaves less than 1000 ports
// below it, or 100 random tries find none free, the port comes from
// 127.0.0.1:0.
func Listen() (net.Listener, error) {
	if hi := EphemeralLow(); hi-low > 1000 {
		for range 100 {
			ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", low+rand.IntN(hi-low)))
			if err == nil {
				return ln, nil
			}
		}
	}
	return net.Listen("tcp", "127.0.0.1:0")
}

// EphemeralLow is the first port of the kernel's ephemeral range (0 if
// unknown).
func EphemeralLow() int {
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
