// Package apps holds smarth's built-in MapReduce programs: the classic
// Hadoop examples and benchmarks (WordCount, Grep, Sort, TeraGen, TeraSort,
// TeraValidate, Pi, RandomTextWriter, TestDFSIO), the workloads of seed 003
// (Aggregation and Join over generated uservisits/rankings tables, KMeans,
// PageRank) and Streaming, which runs any executable over stdin/stdout.
//
// An app decides *what* is computed: how input is cut and read, what map
// and reduce do, how keys are ordered and partitioned, how output is
// written. Where and when tasks run, the shuffle and the output commit are
// the runtime's (internal/mapreduce and the daemons). Apps made of several
// jobs (Grep, Join, KMeans, PageRank, TestDFSIO, the table generator)
// implement mapreduce.Driver and run their stages through the Runner they
// are given, so they work the same on the in-process local runner and on a
// cluster.
//
// Hot paths parse bytes directly and reuse buffers: a map function does no
// per-record allocation and no fmt. Record formats follow Hadoop's where
// one exists (TeraGen's 100-byte rows, TeraValidate's sum of row CRC32s,
// the Halton sequence of QuasiMonteCarlo, TestDFSIO's rate definitions) so
// that figures compare with Hadoop's; the data generators are our own.
package apps
