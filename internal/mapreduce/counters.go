package mapreduce

import (
	"maps"
	"sort"
	"sync"
)

// Counter groups and names the runtime maintains, named as Hadoop's so the
// figures read the same.
const (
	GroupTask   = "Map-Reduce Framework"
	GroupInput  = "File Input Format Counters"
	GroupOutput = "File Output Format Counters"
	GroupJob    = "Job Counters"

	MapInputRecords      = "MAP_INPUT_RECORDS"
	MapOutputRecords     = "MAP_OUTPUT_RECORDS"
	MapOutputBytes       = "MAP_OUTPUT_BYTES"
	CombineInputRecords  = "COMBINE_INPUT_RECORDS"
	CombineOutputRecords = "COMBINE_OUTPUT_RECORDS"
	SpilledRecords       = "SPILLED_RECORDS"
	ReduceInputGroups    = "REDUCE_INPUT_GROUPS"
	ReduceInputRecords   = "REDUCE_INPUT_RECORDS"
	ReduceOutputRecords  = "REDUCE_OUTPUT_RECORDS"
	ReduceShuffleBytes   = "REDUCE_SHUFFLE_BYTES"
	MapOutputRecordsOut  = "MAP_ONLY_OUTPUT_RECORDS" // records written by map-only jobs
	BytesRead            = "BYTES_READ"
	BytesWritten         = "BYTES_WRITTEN"

	// CacheLocalMaps counts maps launched on a node whose datanode held
	// the split's block in memory (seed 003). Such a map is node-local
	// too and is counted in DataLocalMaps as well, so DATA_LOCAL_MAPS
	// keeps Hadoop's meaning and compares across cache policies.
	CacheLocalMaps   = "CACHE_LOCAL_MAPS"
	DataLocalMaps    = "DATA_LOCAL_MAPS"
	RackLocalMaps    = "RACK_LOCAL_MAPS"
	OtherLocalMaps   = "OTHER_LOCAL_MAPS"
	LaunchedMaps     = "TOTAL_LAUNCHED_MAPS"
	LaunchedReduces  = "TOTAL_LAUNCHED_REDUCES"
	FailedMaps       = "NUM_FAILED_MAPS"
	FailedReduces    = "NUM_FAILED_REDUCES"
	KilledMaps       = "NUM_KILLED_MAPS"
	ElapsedMillis    = "ELAPSED_MS"
	MapsRerunForLoss = "MAPS_RERUN_LOST_OUTPUT"
)

// Counters is a concurrency-safe set of group/name counters.
type Counters struct {
	mu sync.Mutex // guards m
	m  map[string]map[string]int64
}

// Add adds n to group/name.
func (c *Counters) Add(group, name string, n int64) {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]map[string]int64{}
	}
	g := c.m[group]
	if g == nil {
		g = map[string]int64{}
		c.m[group] = g
	}
	g[name] += n
	c.mu.Unlock()
}

// Merge adds every counter of o.
func (c *Counters) Merge(o map[string]map[string]int64) {
	for g, names := range o {
		for n, v := range names {
			c.Add(g, n, v)
		}
	}
}

// Snapshot returns a deep copy.
func (c *Counters) Snapshot() map[string]map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]map[string]int64, len(c.m))
	for g, names := range c.m {
		out[g] = maps.Clone(names)
	}
	return out
}

// CounterGroups returns the group names of m in a stable print order: the
// framework groups first (File System Counters leading, as Hadoop prints
// them), then the apps' own, alphabetically.
func CounterGroups(m map[string]map[string]int64) []string {
	rank := map[string]int{GroupFS: 0, GroupJob: 1, GroupTask: 2, GroupInput: 3, GroupOutput: 4}
	var gs []string
	for g := range m {
		gs = append(gs, g)
	}
	sort.Slice(gs, func(i, j int) bool {
		ri, oki := rank[gs[i]]
		rj, okj := rank[gs[j]]
		if oki != okj {
			return oki
		}
		if oki && ri != rj {
			return ri < rj
		}
		return gs[i] < gs[j]
	})
	return gs
}
