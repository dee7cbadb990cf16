// Package tune is the network-tuning half of seed 001 (Nurika et al.,
// "Implementation of Network Cards Optimizations in Hadoop Cluster Data
// Transmissions"): named settings profiles, how a profile is applied to a
// data socket and read back, host-wide sysctls with a crash-safe revert
// file, the datanode's per-block transfer log, and the report over it.
// The genetic algorithm itself is the pure package internal/tune/ga; the
// fitness measurement on a real cluster is internal/bench/tunemeasure, a
// harness above the daemons that this library must not depend on.
//
// What it decides:
//
//   - the settings that exist (settings.go): per socket SO_RCVBUF,
//     SO_SNDBUF (0 = kernel autotuning, which any fixed size disables),
//     SO_BUSY_POLL, TCP_CONGESTION, TCP_NOTSENT_LOWAT; per client the data
//     protocol's packet size and in-flight window (the writer chooses
//     them, so the GA applies them at its client); host-wide the paper's
//     sysctls net.core.busy_read, busy_poll, rmem_default and
//     net.ipv4.tcp_rmem/tcp_wmem. A profile naming an unknown setting or
//     a value out of range is refused with the accepted range.
//
//   - whether a setting is really in force (socket_linux.go): every socket
//     setting is read back with getsockopt. Busy polling on a socket
//     without a NAPI id (loopback, veth) does nothing and is reported "not
//     in force", as is a buffer the kernel clamped or an option refused
//     for lack of CAP_NET_ADMIN. Nothing is counted as applied on faith.
//
//   - how sysctls change (sysctl.go): only on request, after every target
//     file is checked writable and a revert file with the old values is
//     written and synced; any failure restores what was changed. Restore
//     runs on exit and, after a crash, at the next start.
//
//   - the transfer log (translog.go): one JSON line per block received,
//     with bytes, start/end, packets, packet size, process CPU time, the
//     profile and the settings read back at the end of the transfer. CPU
//     time is the whole process's getrusage(RUSAGE_SELF) delta over the
//     transfer: RUSAGE_THREAD would follow one OS thread, but goroutines
//     migrate between threads, so the process delta is the honest figure —
//     exact when the transfer was the process's only work, which the
//     record's xceivers count lets a reader check.
//
// What it leaves to others: when to apply (the datanode, on each data
// connection), what to measure (internal/bench/tunemeasure), the
// statistics of an A/B comparison (internal/bench/ab).
package tune
