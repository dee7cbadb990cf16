// Package chaos runs a fault-injection campaign against a local cluster
// (the one `smarth cluster up` records in its home): for a while it keeps
// a mixed load of puts, gets, renames and MapReduce jobs going while it
// SIGKILLs random namenode, datanode and node-manager processes and starts
// them again with the cluster's own start machinery (cluster.Start, the
// code behind `smarth cluster start`). Every operation the system
// acknowledged is written down with what it promised: a put that closed
// with the SHA-256 of its bytes, a rename that returned with the file's new
// name, a job that SUCCEEDED with what its output must hold (wordcount's
// exact counts; teragen's row count and the sum of its rows' CRC32s that
// the job reported). At the end, with every daemon back, it checks each
// promise against what the cluster serves and reports the ones broken:
// acknowledged operations lost, which must be zero.
//
// What it decides: the load mix and sizes, how faults are spaced (one
// daemon down at a time, a kind chosen uniformly so the single namenode is
// hit as often as the datanodes as a group), and what counts as lost. An
// operation that failed is not a promise: its outcome may be either way
// (a rename whose reply was lost may have happened), and verification
// accepts either outcome of an unacknowledged rename. A get that returns
// bytes other than the acknowledged ones counts as lost at once: serving
// wrong data is worse than serving none.
//
// It leaves to others: starting the cluster (internal/cluster), the
// clients (internal/client, internal/mapreduce/jobclient) and the
// daemons' recovery, which is what it tests.
package chaos
