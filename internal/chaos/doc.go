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
// hit as often as the datanodes as a group), and what counts as lost. A
// file a worker owns is touched by no one else, so "does not exist" on its
// get, rename or delete is a loss, reported at once with the file's
// history (every operation on it, its outcome and time). At the end, every
// old name of an acknowledged rename must be absent, an acknowledged
// delete must have stayed deleted, and each acknowledged file must be
// whole under its name. An operation that failed is not a promise, but
// only a failure that may have been applied leaves doubt: a refused
// connection (the request never left) or safe mode changes nothing. A
// rename in doubt leaves the file under exactly one of its two names; a
// delete in doubt leaves it whole, or absent, and absent is then reported
// as unverifiable (the namenode keeps no record that would tell a delete
// from a loss), never as kept. A get that returns bytes other than the
// acknowledged ones counts as lost at once: serving wrong data is worse
// than serving none.
//
// It leaves to others: starting the cluster (internal/cluster), the
// clients (internal/client, internal/mapreduce/jobclient) and the
// daemons' recovery, which is what it tests.
package chaos
