// Package testbed builds and runs an emulated cluster on one Linux machine:
// one network namespace per host, veth pairs into one bridge per rack, a
// core router between the racks, tc shaping per host and destination class,
// optional latency (netem, or a user-space delay proxy where the kernel has
// no netem), optional disk caps (blkio cgroups), and the smarth daemons
// started inside their hosts with the topology's racks in their configs.
// It is the library behind `smarth testbed up|down|exec|shape|check|status`.
//
// What it decides: the order of bring-up and teardown, what is recorded on
// disk (a state file under /run/smarth-testbed/<name>/ written before
// anything is created, so `down` cleans up after a crash of `up` itself),
// which processes it may signal (only those inside its own namespaces, by
// pid), and how a measurement is run and judged (10% tolerance).
//
// What it leaves to others: the file format and expected rates
// (internal/testbed/topo), the commands (internal/testbed/netplan), the
// daemon configs (internal/testbed/daemonplan), disk caps
// (internal/testbed/cgroup), sockets inside namespaces
// (internal/testbed/netns), the throughput test (internal/testbed/tput),
// and the daemons themselves, which it only reaches through the smarth
// binary and their ready files.
//
// The scenarios it reproduces come from the SMARTH paper (seed 000, section
// V: two racks with throttled links, nodes throttled to 50 Mbit/s, a
// heterogeneous EC2 cluster) and the caching thesis (seed 003, section 5.1:
// disk-bound reads).
package testbed
