package bench

import (
	"context"
	"fmt"
	"testing"

	"smarth/internal/testcluster"
)

// BenchmarkPutModesSlowCrossRack is SMARTH's two-rack experiment in one
// process: six datanodes in two racks, links between the racks slowed to
// 8 MiB/s, the client's own links unlimited; classic and multi-pipeline
// writes of the same file interleaved on the same cluster. Rack-aware
// placement puts a cross-rack hop in every pipeline, so a classic write
// goes at the cross-rack rate while a multi-pipeline write keeps up to
// live/replication = 2 pipelines busy (seed 000, section III.D).
func BenchmarkPutModesSlowCrossRack(b *testing.B) {
	links := testcluster.NewLinks()
	racks := []string{"/a", "/a", "/a", "/b", "/b", "/b"}
	c := testcluster.Start(b, testcluster.Options{DataNodes: 6, Racks: racks, BlockSize: 4 << 20, Links: links})
	for i := range racks {
		for j := range racks {
			if racks[i] != racks[j] {
				links.Slow(testcluster.Hostname(i), testcluster.Hostname(j), 8<<20)
			}
		}
	}
	fsys := c.Client(b)
	for _, mode := range []string{"classic", "multipipeline"} {
		b.Run(mode, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				res, err := Put(context.Background(), fsys, PutOptions{
					Size: 32 << 20, Replication: 3, Modes: []string{mode}, Dir: fmt.Sprintf("/bench/%s-%d", mode, i),
				})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(res.Summaries[0].MiBps, "MiB/s")
			}
		})
	}
}
