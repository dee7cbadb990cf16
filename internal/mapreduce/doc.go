// Package mapreduce is smarth's MapReduce model and task engine: the API
// applications implement (api.go), how a task reads its split, partitions,
// sorts, spills and combines map output, and how a reduce task merges its
// fetched segments and commits its output.
//
// Where tasks run and when is left to the resource manager's scheduler
// (internal/sched); how map output moves between nodes is in shuffle/.
// The model follows Hadoop MapReduce; seed 003 builds its cache-local
// scheduling on exactly this heartbeat-driven shape.
package mapreduce
