// Package delayproxy is a TCP proxy that adds latency and jitter, for
// kernels without the netem qdisc. The testbed runs one per host, inside
// the host's namespace, listening on the host's address in front of each
// daemon port (the daemon itself listens on loopback). It reproduces what
// netem on every host's egress would do to a TCP connection: bytes from a
// remote peer to the daemon are delayed by the peer's latency, bytes from
// the daemon back to the peer by this host's latency, so the round trip
// between two hosts is the sum of their latencies.
//
// It is a delay line, not a stop-and-wait relay: every chunk read is
// stamped with its due time and written when that time comes, while later
// chunks keep arriving, so throughput is not cut by the delay (up to the
// buffered bytes, 8 MiB per direction, which is more than the
// bandwidth-delay product of the testbed's links). Chunks never overtake
// each other: jitter delays a chunk by latency ± jitter, but never to
// before the chunk ahead of it.
//
// What it cannot do: loss (TCP retransmits below the proxy, so it never
// sees it), and delay for traffic that does not go through a proxied port.
// The daemons see connections from 127.0.0.1, so a namenode behind a proxy
// cannot tell clients apart by address (they still name themselves in the
// RPC metadata).
package delayproxy
