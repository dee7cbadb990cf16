// Package suite runs the Hadoop benchmark suite of seed 002 (Ahmed,
// Ismail, Hyder, "Performance Optimization of Hadoop Cluster Using Linux
// Services", section V) against a MapReduce runner: TestDFSIO write and
// read, TeraGen, TeraSort, TeraValidate and Pi, in that order, timing each
// phase by wall clock as the paper does with the time command, and
// reporting a table and JSON.
//
// What it decides: the phases and their order, the sizes of each named
// scale, what counts as a phase's elapsed time (the whole client call,
// planning and job included, as `time hadoop jar ...` measures it), which
// phases depend on which (a failed TeraGen skips TeraSort and
// TeraValidate), and the correctness checks that make a fast run count
// only if it is right (TeraValidate finds no misordered row and the same
// row checksum TeraGen wrote). Compare puts two runs side by side — the
// paper's Table III compares a host with rpcbind off and on — with the
// speedup of each phase.
//
// What it leaves to others: the applications (internal/mapreduce/apps),
// where jobs run (any mapreduce.Runner: the resource manager's job client
// or the in-process local runner) and how the host under test is
// configured (a later issue's A/B switch).
package suite
