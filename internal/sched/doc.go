// Package sched decides which task runs where. It is pure: the resource
// manager calls a Policy once per node heartbeat with a read-only view of
// the node's free slots and of every running job's pending tasks and their
// locality, and launches what the policy returns. No I/O, no clocks, no
// goroutines, so every policy is tested with scripted heartbeat sequences
// (testdata/*.txt).
//
// Policies, chosen by name from Policies:
//   - fifo: jobs in submission order; within the first job that has a
//     pending task, a node-local task if there is one, else rack-local,
//     else any (Hadoop 1's JobQueueTaskScheduler).
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
// The view already carries what seed 003's adaptive cache-local scheduler
// (Alg. 1) needs — each job's cached input fraction R_j, each task's
// cached hosts, running-task counts for the visiting order — so it can be
// added as another Policy without reshaping the interface; MaxAllocations
// per heartbeat per job is a loop bound inside such a policy.
//
// Reduce tasks have no input locality; both policies give free reduce
// slots to ready reduces in job order. When reduces become ready (after
// all maps) and retries are the resource manager's business.
package sched
