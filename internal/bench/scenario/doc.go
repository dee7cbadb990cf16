// Package scenario runs SMARTH's write experiments (seed 000, section V) end
// to end with one call per scenario: it brings a testbed topology (or a
// plain loopback cluster) up, uploads one file per run from the client host
// in classic and multi-pipeline mode, under HDFS's rack-aware placement and
// SMARTH's speed-aware placement, reads the datanodes' block-receive logs to
// explain each run, and takes everything down again, also when a step fails
// or the caller is interrupted.
//
// What it decides: the protocol of a comparison.
//   - The namenode's placement is one setting per cluster, so every
//     placement is its own phase: the cluster is (re)started with it and
//     purged after it. HDFS is classic writes under rackaware placement,
//     SMARTH multi-pipeline writes under speedaware placement; the other two
//     cells (multi-pipeline alone, classic with speed records) separate what
//     the protocol and the placement each contribute.
//   - Phases alternate (A B, then B A, ...) and the write modes alternate
//     likewise across runs and phases (bench.RunOrder), so that the drift
//     of a shared machine hits every cell alike; with DropCaches every
//     upload starts from an empty page cache (bench.Settle).
//   - Each mode writes through its own client. Speed records belong to the
//     client's host, so within a phase the modes' uploads share them, as
//     successive `smarth fs put` runs on one host do; a warm-up upload per
//     client is optional (none by default: a user's put gets none). The
//     random-topology mode (RunRandom) runs SMARTH's cell in a phase of
//     its own, so no classic upload feeds its records.
//   - The bounds: the client's link (below), and for random topologies the
//     min-cut ideal (IdealOf) and the protocol's schedule (ScheduleSpeedup).
//   - The bound is the client's link (SMARTH section III.D): the total rate
//     the topology lets the client host send to all datanodes at once.
//   - Per run, the block log gives the first-hop rate, how many blocks began
//     on a datanode the client cannot reach at its link rate, how many
//     pipelines were open, how much of the run the client link carried data
//     and how long the last pipelines took to drain after the last byte left.
//
// What it leaves to others: the timing of one upload (internal/bench, the
// same code as `smarth bench put`), building and shaping the hosts
// (internal/testbed), the loopback cluster (internal/cluster), and the file
// system itself.
package scenario
