// Package doctor checks a host before a smarth (or Hadoop) cluster goes live,
// the way operators do from the vendors' checklists: transparent huge pages,
// swappiness, open-file and process limits, clock sync, hostname resolution
// forward and reverse, services that should or should not run, network
// sysctls, data directory mounts (noatime), free space and permissions, and
// the ports smarth uses.
//
// What it decides: for each check, a status (ok, warn, fail), the observed
// value, why it matters for a DFS/MapReduce cluster, and the command that
// fixes it. A few fixes are plain writes of kernel tunables under /proc/sys
// and /sys; Fix applies only those, and only after writing a revert file
// with the old values (Revert puts them back).
//
// Everything the checks read goes through Env: files under a root directory
// (default "/", so tests use fake /proc and /sys trees in testdata), and
// functions for what is not a file (name resolution, statfs, the clock's
// sync state, the running user). The package changes nothing unless Fix is
// called.
//
// Seed 002 argues that rpcbind should run on Hadoop hosts. Its Table III
// comes from single runs; `smarth bench ab` measures the claim with
// repeated interleaved runs (docs/benchmarks.md, "Host A/B (seed 002)"), so
// the check reports rpcbind as a warning, not a failure, and points there.
//
// What it leaves to others: running on testbed hosts or for the local
// cluster (cmd/smarth finds the hosts, data directories and ports and
// passes them in), and changing limits, mounts and services, which need
// the operator's judgement and are given as commands only.
package doctor
