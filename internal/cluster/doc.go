// Package cluster starts, finds, inspects and stops a local smarth cluster
// made of real processes on loopback: one namenode, N datanodes and, when the
// binary has the MapReduce daemons, a resource manager and one node manager
// per datanode host. It is the library behind `smarth cluster
// up|down|status|start|stop|restart` and `smarth demo`, and the
// multi-process test cluster launches its children with it too.
//
// An operator's cluster outlives its daemons: Start, Stop and Restart
// handle one daemon by the name status shows (as `hdfs --daemon
// start|stop` does), from the config file it last ran with and with its
// data kept, and Up on a partly running cluster starts only the missing
// daemons. A namenode or resource manager that first bound port 0 is
// pinned to the address it had, since the daemons still running know it
// by that address.
//
// What it decides: the layout of a cluster home (configs, logs, data, ready
// files and the state file cluster.json), which ports to ask for (the
// namenode's well-known 8020/9870 when free, port 0 for everything else),
// the hostnames dn1..dnN and their racks, and when a cluster counts as up
// (every daemon wrote its ready file and every datanode is registered with
// the namenode). Readiness is never scraped from logs: each daemon writes a
// JSON ready file once it listens, and the namenode's datanode report says
// who registered.
//
// What it leaves to others: the daemons themselves (internal/namenode,
// internal/datanode, internal/resourcemanager, internal/nodemanager), which
// it only reaches through the smarth binary, their config files and the
// control-plane RPCs. It does not import them, so that it builds while they
// change and so that a cluster can be run from any smarth binary.
//
// Processes are stopped by the pid recorded in the state file (SIGTERM, then
// SIGKILL after a grace period), after checking that the pid still runs a
// daemon of this home, so a reused pid is never signalled. The state file is
// written before each daemon is waited for, so `down` works even after `up`
// itself crashed half way.
package cluster
