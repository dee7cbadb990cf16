package nodemanager_test

import (
	"context"
	"testing"
	"time"

	"smarth/internal/mapreduce"
	"smarth/internal/nodemanager"
	"smarth/internal/testcluster"
	"smarth/internal/testcluster/mrtest"
)

// TestMapsReportCacheAccessOnDFS runs a job on the real DFS and checks
// that every map reported its block's read (seed 003): the split's block
// id, the node manager's host, and the datanode that served the read
// (replication 1: the one holding the block).
func TestMapsReportCacheAccessOnDFS(t *testing.T) {
	var recorders []*mrtest.CacheRecorder
	dfs, mr := dfsCluster(t, func(o *mrtest.Options) {
		o.NM = func(i int, cfg *nodemanager.Config) {
			r := &mrtest.CacheRecorder{FS: mrtest.NodeDFS(t, o.DFS, cfg.Hostname)}
			recorders = append(recorders, r)
			cfg.FS = r
		}
	})
	writeText(t, mr.FS(), "/in/text", 6000)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := mr.Client().Run(ctx, "wordcount", map[string]string{"input": "/in", "output": "/out", "reduces": "1",
		mapreduce.ParamCacheAffinity: "0.5"})
	if err != nil {
		t.Fatal(err)
	}

	c := dfs.Client(t, testcluster.WithClientHost("test"))
	locs, err := c.BlockLocations(ctx, "/in/text", 0, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	holder := map[uint64]string{} // block -> the host of its only replica
	for _, b := range locs {
		holder[b.BlockID] = b.Hosts[0]
	}
	datanodeID := map[string]string{} // host -> datanode ID
	for i, h := range []string{"dn1", "dn2", "dn3"} {
		datanodeID[h] = dfs.DataNode(i).ID()
	}

	seen := map[uint64]bool{}
	for i, r := range recorders {
		host := []string{"dn1", "dn2", "dn3"}[i]
		for _, a := range r.Accesses() {
			h, ok := holder[a.BlockID]
			switch {
			case !ok:
				t.Errorf("%s reported block %d, not one of the input's", host, a.BlockID)
			case a.Host != host || a.App != "wordcount" || a.JobID != res.JobID || a.Affinity != 0.5:
				t.Errorf("%s reported %+v: want host %s, app wordcount, job %s, affinity 0.5", host, a, host, res.JobID)
			case a.Datanode != datanodeID[h]:
				t.Errorf("block %d read on %s: reported datanode %q, want %s's %q", a.BlockID, host, a.Datanode, h, datanodeID[h])
			}
			seen[a.BlockID] = true
		}
	}
	if maps := res.Counters[mapreduce.GroupJob][mapreduce.LaunchedMaps]; len(seen) != len(holder) || int64(len(holder)) != maps {
		t.Errorf("accesses for %d blocks of %d, with %d maps launched", len(seen), len(holder), maps)
	}
}
