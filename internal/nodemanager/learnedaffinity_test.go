package nodemanager_test

import (
	"context"
	"io"
	"testing"
	"time"

	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/nodemanager"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/testcluster"
	"smarth/internal/testcluster/mrtest"
)

// TestLearnedAffinityFromJobReads runs wordcount twice on the real DFS
// with the lru cache: the first run reads its input from disk (datanodes
// drop read pages, so nothing is in memory) and its accesses cache every
// block; the second reads from the datanodes' memory. Each map reports
// its read time with its access, and `cache stats` then shows the app's
// learned affinity backed by both kinds of read, hot samples only from the
// second run (the namenode, not the task, decides which reads were hot).
func TestLearnedAffinityFromJobReads(t *testing.T) {
	if testing.Short() {
		t.Skip("two MapReduce jobs on a 3-datanode cluster; skipped under -short")
	}
	dfs := testcluster.Start(t, testcluster.Options{DataNodes: 3, Racks: []string{"/r1", "/r1", "/r2"},
		BlockSize: 1 << 20, Replication: 1,
		NameNode: map[string]any{"cache_policy": "lru"},
		DataNode: map[string]any{"cache_capacity": 64 << 20, "drop_cache_behind_reads": true}})
	reg := mapreduce.NewRegistry(apps.AllWith(apps.Options{Out: io.Discard})...)
	mr := mrtest.Start(t, mrtest.Options{DFS: dfs, Registry: reg, NM: func(i int, cfg *nodemanager.Config) {
		cfg.FS = mrtest.NodeDFS(t, dfs, cfg.Hostname)
	}})
	writeText(t, mr.FS(), "/in/text", 400_000) // about 8 blocks of 1 MiB
	c := dfs.Client(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	locs, err := c.BlockLocations(ctx, "/in/text", 0, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	stats := func() *dfspb.GetCacheStatsResponse {
		st, err := c.CacheStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	estimate := func() *dfspb.AffinityEstimate {
		for _, e := range stats().GetAffinityEstimates() {
			if e.GetApp() == "wordcount" {
				return e
			}
		}
		return nil
	}

	run := func(out string) {
		if _, err := mr.Client().Run(ctx, "wordcount", map[string]string{"input": "/in", "output": out, "reduces": "1"}); err != nil {
			t.Fatal(err)
		}
	}
	run("/out1")
	if e := estimate(); e == nil || e.GetColdSamples() != int32(len(locs)) || e.GetHotSamples() != 0 {
		t.Fatalf("after the first (cold) run: %v, want %d cold reads of wordcount and no hot one", e, len(locs))
	}
	mr.WaitFor(t, "every input block reported cached by its datanode", func() bool {
		ls, err := c.BlockLocations(ctx, "/in/text", 0, 1<<40)
		if err != nil {
			return false
		}
		for _, b := range ls {
			if len(b.Cached) == 0 {
				return false
			}
		}
		return true
	})
	run("/out2")
	e := estimate()
	if e == nil || e.GetHotSamples() != int32(len(locs)) || e.GetColdSamples() != int32(len(locs)) || !e.GetUsed() {
		t.Fatalf("after the cached run: %v, want %d hot and %d cold reads, used", e, len(locs), len(locs))
	}
	// Every map sent its task's time too, and it includes the read.
	if e.GetColdTaskSamples() != int32(len(locs)) || e.GetColdTaskMibPerSec() <= 0 || e.GetColdTaskMibPerSec() > e.GetColdMibPerSec() {
		t.Errorf("cold task times: %d samples at %.1f MiB/s (reads %.1f MiB/s); want %d, no faster than the reads",
			e.GetColdTaskSamples(), e.GetColdTaskMibPerSec(), e.GetColdMibPerSec(), len(locs))
	}
	if st := stats(); st.GetAffinitySource() != "learned" {
		t.Errorf("affinity source %q, want learned (the default)", st.GetAffinitySource())
	}
	t.Logf("wordcount: learned affinity %.3f (hot %.0f MiB/s, cold %.0f MiB/s over %d+%d reads, cold tasks %.0f MiB/s)", e.GetAffinity(),
		e.GetHotMibPerSec(), e.GetColdMibPerSec(), e.GetHotSamples(), e.GetColdSamples(), e.GetColdTaskMibPerSec())
}
