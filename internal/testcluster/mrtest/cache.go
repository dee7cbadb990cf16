package mrtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/mapreduce"
	"smarth/internal/testcluster"
)

// Helpers for seed 003's cache tests: what map tasks report, and where
// maps ran.

// CacheRecorder is an FS that records the cache accesses map tasks
// report through it and passes them on to the FS it wraps when that one
// has a cache (the DFS): a test sees what was sent, and the namenode
// still gets it.
type CacheRecorder struct {
	mapreduce.FS

	mu       sync.Mutex // guards accesses
	accesses []mapreduce.CacheAccess
}

var _ mapreduce.CacheReporter = (*CacheRecorder)(nil)

// ReportCacheAccess records a and forwards it.
func (r *CacheRecorder) ReportCacheAccess(ctx context.Context, a mapreduce.CacheAccess) error {
	r.mu.Lock()
	r.accesses = append(r.accesses, a)
	r.mu.Unlock()
	if cr, ok := r.FS.(mapreduce.CacheReporter); ok {
		return cr.ReportCacheAccess(ctx, a)
	}
	return nil
}

// Accesses returns the accesses recorded so far.
func (r *CacheRecorder) Accesses() []mapreduce.CacheAccess {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]mapreduce.CacheAccess(nil), r.accesses...)
}

// NodeDFS is a DFS client for a node manager on host, as the node
// manager makes its own (ClientHost = host), closed when the test ends.
// Set it as the node manager's FS (Options.NM) to wrap it, e.g. in a
// CacheRecorder.
func NodeDFS(t testing.TB, dfs testcluster.DFS, host string) mapreduce.FS {
	t.Helper()
	c := dfs.Client(t, testcluster.WithClientHost(host), testcluster.WithConfig(func(c *client.Config) {
		c.ClientName, c.RPCTimeout = "mrtest-nm-"+host, 20*time.Second
	}))
	return mapreduce.DFS(c)
}

// MapLocality is a finished job's maps by locality level, from its
// counters: Node excludes the cache-local maps that DATA_LOCAL_MAPS
// includes.
type MapLocality struct{ Cache, Node, Rack, Off int64 }

// Locality reads res's locality counters.
func Locality(res *mapreduce.Result) MapLocality {
	c := res.Counters[mapreduce.GroupJob]
	return MapLocality{Cache: c[mapreduce.CacheLocalMaps], Node: c[mapreduce.DataLocalMaps] - c[mapreduce.CacheLocalMaps],
		Rack: c[mapreduce.RackLocalMaps], Off: c[mapreduce.OtherLocalMaps]}
}
