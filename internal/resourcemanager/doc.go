// Package resourcemanager is smarth's job tracker: it accepts jobs from
// job clients, tracks every map and reduce task of every running job, and
// hands tasks to node managers in the replies to their heartbeats. Where
// a task runs is decided by a sched.Policy (fifo, delay or cachelocal)
// called once per heartbeat; what a task does is the node manager's and the task engine's
// business (internal/nodemanager, internal/mapreduce).
//
// It owns the job's life cycle: reduces become ready once a fraction
// (reduce_slowstart) of the maps is done and learn of the rest through
// GetMapOutputs, a long poll answered when another map finishes; a failed
// attempt is retried on another node up to max_attempts; a node that
// stops heartbeating has its running attempts rescheduled and its finished
// map outputs of unfinished jobs re-run; a reduce's fetch failure re-runs
// the map, and a reduce that fails to fetch max_fetch_failures times fails
// the job. A node's rack is what its node manager reports, which the node
// manager takes from the namenode's datanode report. A job that succeeds has its output committed (the
// winning attempts' files promoted, _SUCCESS written); a job that fails or
// is killed has its output directory removed once none of its attempts is
// still running, and only then reports its final state.
//
// For seed 003's cache-local scheduling it polls the namenode's
// JobCacheStatus every heartbeat interval (cache.go): each active job's
// cached input fraction R_j and where each of its blocks is in memory
// reach the policy through the job view, and every map launched on a
// node caching its block counts in CACHE_LOCAL_MAPS, whatever the policy.
//
// Like Hadoop 1's JobTracker rather than YARN, one daemon is both resource
// manager and application master: seed 003's cache-local scheduler needs
// only the per-heartbeat decision, which sched isolates.
package resourcemanager
