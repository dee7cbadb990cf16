package nodemanager_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/resourcemanager"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/testcluster"
	"smarth/internal/testcluster/mrtest"
)

// cacheCluster is a real in-process DFS (3 datanodes, 32 KiB blocks,
// replication 1, 1 MiB of block cache each, the given namenode cache
// policy) with a MapReduce cluster on it under the given scheduler.
func cacheCluster(t *testing.T, policy, scheduler string) (*testcluster.Cluster, *mrtest.Cluster, *client.FileSystem) {
	t.Helper()
	dfs := testcluster.Start(t, testcluster.Options{DataNodes: 3, Racks: []string{"/r1", "/r1", "/r2"},
		BlockSize: 32 << 10, Replication: 1,
		NameNode: map[string]any{"cache_policy": policy},
		DataNode: map[string]any{"cache_capacity": 1 << 20}})
	reg := mapreduce.NewRegistry(apps.AllWith(apps.Options{Out: io.Discard})...)
	mr := mrtest.Start(t, mrtest.Options{DFS: dfs, Registry: reg, Scheduler: scheduler,
		// Heartbeats come every 30 ms here, so a job counts skips fast:
		// wait long enough before rack-local that a cached block's node
		// frees a slot first, as on a cluster whose tasks run for seconds.
		RM: func(c *resourcemanager.Config) { c.CacheSkips, c.NodeSkips, c.RackSkips = 3, 20, 40 }})
	return dfs, mr, dfs.Client(t, testcluster.WithClientHost("test"))
}

// cachedBlocks counts the blocks of p that some datanode reports holding
// in memory, as GetBlockLocations shows them.
func cachedBlocks(t *testing.T, c *client.FileSystem, p string) (cached, total int) {
	t.Helper()
	locs, err := c.BlockLocations(t.Context(), p, 0, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range locs {
		if len(b.Cached) > 0 {
			cached++
		}
	}
	return cached, len(locs)
}

func runWordCount(t *testing.T, mr *mrtest.Cluster, out string) (*mapreduce.Result, map[string]int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := mr.Client().Run(ctx, "wordcount", map[string]string{"input": "/in", "output": out, "reduces": "1",
		mapreduce.ParamCacheAffinity: "0.6"})
	if err != nil {
		t.Fatal(err)
	}
	return res, readCounts(t, mr.FS(), out)
}

// TestSecondRunReadsFromCache is seed 003 end to end: the first run of a
// job reads from disk and its maps ask for their blocks to be cached; the
// namenode's LRU policy has the datanodes cache them; the second run finds
// its input cached (R_j = 1) and the cache-local scheduler runs its maps
// where their blocks are in memory. The output is the same both times.
// The control, with the "none" policy, shows the test can fail: nothing
// is cached and no map is cache-local.
func TestSecondRunReadsFromCache(t *testing.T) {
	for _, tc := range []struct {
		policy     string
		wantCached bool
	}{{"lru", true}, {"none", false}} {
		t.Run(tc.policy, func(t *testing.T) {
			_, mr, c := cacheCluster(t, tc.policy, "cachelocal")
			words := writeText(t, mr.FS(), "/in/text", 12000) // about 8 blocks
			res1, out1 := runWordCount(t, mr, "/out1")
			if got := mrtest.Locality(res1); got.Cache != 0 {
				t.Errorf("first run: %d cache-local maps before anything was cached", got.Cache)
			}
			if !maps.Equal(out1, words) {
				t.Fatalf("first run: word counts differ from the input's")
			}
			_, total := cachedBlocks(t, c, "/in/text")
			if !tc.wantCached {
				// Give the namenode the time the lru case needs to cache
				// everything, then check that nothing was.
				time.Sleep(2 * time.Second)
				if n, _ := cachedBlocks(t, c, "/in/text"); n != 0 {
					t.Fatalf("policy none: %d of %d blocks cached", n, total)
				}
			} else {
				mr.WaitFor(t, fmt.Sprintf("all %d input blocks reported cached", total), func() bool {
					n, _ := cachedBlocks(t, c, "/in/text")
					return n == total
				})
			}
			res2, out2 := runWordCount(t, mr, "/out2")
			if !maps.Equal(out2, out1) {
				t.Fatalf("second run's output differs from the first's")
			}
			loc := mrtest.Locality(res2)
			st2, _ := mr.Client().Status(t.Context(), res2.JobID)
			t.Logf("second run: maps by locality %+v, R_j %.2f", loc, st2.GetCachedFraction())
			maps := res2.Counters[mapreduce.GroupJob][mapreduce.LaunchedMaps]
			switch {
			case tc.wantCached && loc.Cache < maps/2:
				t.Errorf("second run: %d of %d maps cache-local (%+v), want most", loc.Cache, maps, loc)
			case !tc.wantCached && loc.Cache != 0:
				t.Errorf("policy none: %d cache-local maps", loc.Cache)
			}
			st, err := c.Namenode().GetCacheStats(t.Context(), &dfspb.GetCacheStatsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantCached && st.GetHits() == 0 {
				t.Errorf("second run: the namenode counted no cache hits (%d misses)", st.GetMisses())
			}
		})
	}
}

// TestDatanodeRestartEmptiesItsCache: a restarted datanode comes back with
// nothing in memory, and the namenode stops listing it as caching blocks.
func TestDatanodeRestartEmptiesItsCache(t *testing.T) {
	dfs, mr, c := cacheCluster(t, "lru", "cachelocal")
	writeText(t, mr.FS(), "/in/text", 12000)
	runWordCount(t, mr, "/out1")
	_, total := cachedBlocks(t, c, "/in/text")
	mr.WaitFor(t, "all input blocks cached", func() bool {
		n, _ := cachedBlocks(t, c, "/in/text")
		return n == total
	})
	// The victim is a datanode holding some of the input in memory.
	cachedOn := func(host string) int {
		locs, err := c.BlockLocations(t.Context(), "/in/text", 0, 1<<40)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, b := range locs {
			n += len(slices.DeleteFunc(slices.Clone(b.Cached), func(h string) bool { return h != host }))
		}
		return n
	}
	victim := -1
	for i := range 3 {
		if cachedOn(testcluster.Hostname(i)) > 0 {
			victim = i
			break
		}
	}
	if victim < 0 {
		t.Fatalf("no datanode caches the input")
	}
	host, id := testcluster.Hostname(victim), dfs.DataNode(victim).ID()
	dfs.RestartDataNode(victim)
	mr.WaitFor(t, "the namenode to learn that restarted "+host+" caches nothing", func() bool { return cachedOn(host) == 0 })
	if dfs.DataNode(victim).ID() != id {
		t.Fatalf("%s came back as another datanode", host)
	}
}
