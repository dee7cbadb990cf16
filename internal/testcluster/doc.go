// Package testcluster runs a whole smarth file system inside a test: a
// namenode and N datanodes on 127.0.0.1 with port 0, each in its own
// t.TempDir() subdirectory, short heartbeats and timeouts so that failure
// handling (dead datanodes, re-replication) happens within seconds.
//
// Two implementations sit behind one interface, DFS, and the package's
// own tests run one shared suite against both (the approach of etcd's
// integration and e2e clusters):
//
//   - Start gives a *Cluster: every daemon in the test process, built from
//     the daemon libraries (namenode.New, datanode.New). Fast; the test can
//     reach into a daemon (DataNode(i), NameNode()).
//   - StartProcs gives a *Procs: every daemon a child process of a
//     `go build`-ed smarth binary, started with its config file, found
//     through its ready file, stopped by its own pid, killed with SIGKILL
//     for crash tests. Slower; it tests the binary and the real signals.
//
// What it decides: the test topology (hostnames dn1..dnN, racks from
// Options), the short intervals, where data and logs go, and how a test
// waits — WaitFor polls a condition and fails with "timed out waiting for
// <what>", never a bare sleep. What it leaves to others: the daemons and
// the client (internal/namenode, internal/datanode, internal/client) and
// the process launching itself (internal/cluster).
//
// Daemon configs are written as the documented YAML keys (the same keys
// `smarth cluster up` and the testbed write) and decoded into each daemon's
// Config with unknown keys rejected, so drift between the key contract and
// a daemon's Config shows up here first.
package testcluster
