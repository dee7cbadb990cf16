// Package tunemeasure is the fitness of seed 001's genetic algorithm on a
// real cluster: it starts a throw-away local cluster (one datanode as the
// paper's slave node, real daemon processes so that the datanode's
// process CPU time is its own), switches the datanode's settings profile
// through its net_profile file, writes files of the transmission
// profile's size and packet size, and reads each transfer's throughput
// from the datanode's transfer log, as the paper reads Hadoop's log.
//
// What it decides: how one genome is measured (several transfers, the
// median), which search spaces exist (socket, sysctl, and the no-op
// control), and how a winner is confirmed against the default and the
// network-latency baseline — an interleaved A/B (A B B A ...).
//
// What it leaves to others: the GA (internal/tune/ga), the settings and
// their read-back (internal/tune), the daemons and the launcher
// (internal/cluster), and the A/B statistics (internal/bench/ab, shared
// with `smarth bench ab`: Hodges-Lehmann interval, Mann-Whitney U).
package tunemeasure
