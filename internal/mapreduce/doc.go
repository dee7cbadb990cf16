// Package mapreduce is smarth's MapReduce model and task engine: the API
// applications implement (api.go), how a task reads its split, partitions,
// sorts, spills and combines map output, and how a reduce task merges its
// fetched segments and commits its output.
//
// How a job flows (the same engine in the local runner and on a cluster):
//
//  1. Plan (plan.go, in the submitting process): the app builds the Job
//     from its params; the output must not exist and inputs must; the
//     app's Prepare runs; the InputFormat cuts splits (TextInput: one per
//     block, with the block's hosts and racks).
//  2. The resource manager (internal/resourcemanager) hands map tasks to
//     node managers in heartbeat replies, choosing with a sched.Policy.
//  3. A map task (task.go, sortbuf.go) reads its split, runs the mapper and
//     collects output into one arena (recycled between the tasks of a
//     process, arena.go): record bytes appended to a []byte, 24-byte index
//     entries (partition, 8-byte key prefix, offsets) sorted by radix sort
//     (radix.go) when the default byte order applies. A full arena is
//     sorted and spilled, through the combiner; at the end the spills are
//     merged with a heap (merge.go) into one file with one segment per
//     reduce (segment.go: uvarint-framed records, no compression so
//     sendfile can serve it). A map that never spilled keeps its output in
//     memory instead, while the node's budget allows (MemoryBudget).
//  4. Reduces start once a fraction of the maps is done (slow start, the
//     resource manager's reduce_slowstart) and learn of the other maps'
//     outputs as they finish (MapLocator): each fetches its segment of
//     every map output (shuffle/ over HTTP; a node's own outputs from
//     disk, or from memory without a copy), keeping segments in memory up
//     to a budget and the rest on disk, then merges them with the heap,
//     groups keys and runs the reducer, writing to
//     <staging>/_temporary/<attempt>/part-r-NNNNN, where <staging> is the
//     job's hidden sibling of <output> (StagingDir).
//  5. Commit (commit.go): the winning attempts' files move into the
//     staging directory, _temporary goes, _SUCCESS is written, and one
//     rename publishes it as <output>: the output appears whole or not at
//     all. A failed or killed job has its staging directory removed, never
//     anything else.
//
// Where tasks run and when is left to the resource manager's scheduler
// (internal/sched); how map output moves between nodes is in shuffle/.
// The model follows Hadoop MapReduce; seed 003 builds its cache-local
// scheduling on exactly this heartbeat-driven shape.
package mapreduce
