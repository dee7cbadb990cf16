// Package nodemanager runs map and reduce tasks on one host: it
// heartbeats to the resource manager with its free slots and task
// reports, runs the tasks the replies launch as goroutines (apps are
// compiled in; the streaming app spawns the user's executables), reads and
// writes the DFS as a client whose ClientHost is this node's hostname (so
// reads prefer the co-located datanode's replica), keeps finished map
// output (in memory within map_output_memory_bytes, else on local disk)
// and serves it to reducers over HTTP (mapreduce/shuffle). A reduce
// launched before the map phase ends asks the resource manager where new
// map outputs are as maps finish.
//
// It decides nothing about placement (the resource manager's scheduler
// does) nor about what a task computes (the task engine in mapreduce and
// the apps). Its hostname must be the co-located datanode's: that is how
// data locality is matched; its rack is that datanode's in the namenode's
// report (the configured rack only when the namenode knows no datanode of
// this hostname), so the scheduler sees racks as block locations give
// them. Its HTTP port serves /metrics and, with pprof: true, Go profiles
// under /debug/pprof/ to loopback callers.
package nodemanager
