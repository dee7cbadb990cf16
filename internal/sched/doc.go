// Package sched decides which task runs where. It is pure: the resource
// manager calls a Policy once per node heartbeat with a read-only view of
// the node's free slots and of every running job's pending tasks and their
// locality, and launches what the policy returns. No I/O, no clocks, no
// goroutines, so every policy is tested with scripted heartbeat sequences
// (testdata/*.txt).
//
// Policies, chosen by name from Policies:
//
//   - fifo: jobs in submission order; within the first job that has a
//     pending task, a node-local task if there is one, else rack-local,
//     else any (Hadoop 1's JobQueueTaskScheduler).
//
//   - delay: delay scheduling (Zaharia et al., EuroSys 2010, Alg. 1 with
//     the rack level of section 5): a job with no node-local task for the
//     heartbeating node is skipped; after NodeSkips skips it may launch a
//     rack-local task and after RackSkips skips any task. Launching a
//     node-local task resets its count. Maps whose split has no replicas
//     (generated input) have nothing to wait for and launch at once,
//     after the tasks local enough to the node. Jobs are visited in increasing
//     order of running tasks (fair sharing), ties by submission. This is
//     seed 003's "DL" baseline.
//
//   - cachelocal: seed 003's adaptive cache-local delay scheduling (Alg. 1,
//     type CacheDelay): a cache-local map (its block in the node's datanode
//     memory) launches at once; a node-local one after C_j = R_j x C skips,
//     where R_j is the job's cached input fraction; rack-local and any
//     node after NodeSkips and RackSkips as in delay. A heartbeat runs
//     MaxAllocations rounds in which each job, fewest running tasks first,
//     may launch one map; further rounds fill slots still free without
//     counting skips, so the per-job cap never idles a slot a job would
//     take (see CacheDelay for exactly what can idle).
//
// fifo and delay are the no-cache and DL baselines: they rate tasks by
// data locality only (DataLocality) and report a cached node-local task
// as node-local. Whether a launch was cache-local is counted by the
// resource manager for every policy alike. R_j and each task's cached
// hosts come from the namenode through the resource manager; this package
// only reads them from the view.
//
// Reduce tasks have no input locality; every policy gives free reduce
// slots to ready reduces in job order. When reduces become ready (after
// all maps) and retries are the resource manager's business.
package sched
