// Package bench measures the distributed file system from a client's point
// of view: write and read throughput of one large file (`smarth bench put`,
// `smarth bench get`) and namespace operations per second (`smarth bench
// nn`, after Hadoop's NNThroughputBenchmark).
//
// What it decides: how a measurement is taken and reported. Data comes from
// memory, never from a local disk, so the figure is the file system's; the
// clock covers the transfer only (client start-up and data generation are
// outside it); several write modes run interleaved on the same cluster, in
// reverse every other run (A B, B A, ...), so that drift of a shared machine
// hits every mode alike and no mode always follows the same other one; each
// upload starts from a settled page cache (Settle: synced, and emptied with
// DropCaches), since what one upload leaves in the cache slows the next;
// results are summarised per mode (mean, min, max, MiB/s, improvement over
// classic) and compared with the cost-model bound of SMARTH section III.D
// (seed 000): a multi-pipeline write cannot beat the client's own link
// rate, so when the link rate is given each mode's share of it is printed.
// Results go to a table, a JSON file and a plot.
//
// What it leaves to others: the file system itself (internal/client and the
// daemons), starting a cluster (internal/cluster, internal/testcluster) and
// shaping links (internal/testbed). The MapReduce benchmark suite is in
// internal/bench/suite.
package bench
