package namenode

import (
	"testing"

	"smarth/internal/rpc/dfspb"
)

// fsckAgrees checks that fsck's summary counts the blocks its own listing
// shows with no live replica (what the CLI prints as missing) and
// returns the listing's count.
func fsckAgrees(t *testing.T, c *rpcClient, path string) (listedMissing int, r *dfspb.FsckResponse) {
	t.Helper()
	r, err := c.cp.Fsck(c.ctx(), &dfspb.FsckRequest{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.GetFiles() {
		for _, b := range f.GetBlocks() {
			if len(b.GetLiveReplicas()) == 0 && len(b.GetCorruptReplicas()) == 0 {
				listedMissing++
			}
		}
	}
	if int64(listedMissing) != r.GetMissing() || r.GetHealthy() != (listedMissing == 0) {
		t.Errorf("fsck %s lists %d block(s) with no live replica but its summary says missing=%d healthy=%v",
			path, listedMissing, r.GetMissing(), r.GetHealthy())
	}
	return listedMissing, r
}

// TestFsckCountsTheMissingBlockOfAnOpenFile: the block an open file is
// writing is live on its pipeline while the pipeline's nodes live (the
// control: listed live, healthy), and once every one of them is dead it is
// listed with no replica and counted missing in the summary.
func TestFsckCountsTheMissingBlockOfAnOpenFile(t *testing.T) {
	_, fc, c, _, ab := openFile(t, 3)
	missing, r := fsckAgrees(t, c, "/f")
	if missing != 0 || len(r.GetFiles()) != 1 || len(r.GetFiles()[0].GetBlocks()[0].GetLiveReplicas()) != len(ab.GetBlock().GetLocations()) {
		t.Fatalf("open file with its pipeline alive: %d listed missing, %+v; want its %d pipeline nodes live",
			missing, r, len(ab.GetBlock().GetLocations()))
	}
	for _, id := range ids(ab.GetBlock()) {
		fc.node(id).kill()
	}
	waitFor(t, "the pipeline's datanodes declared dead", func() bool {
		rep, _ := c.cp.GetDatanodeReport(c.ctx(), &dfspb.GetDatanodeReportRequest{State: dfspb.DatanodeState_DEAD})
		return len(rep.GetDatanodes()) == len(ab.GetBlock().GetLocations())
	})
	missing, r = fsckAgrees(t, c, "/f")
	if missing != 1 || r.GetMissing() != 1 || r.GetHealthy() {
		t.Fatalf("open file whose whole pipeline died: %d listed missing, summary %+v; want 1 missing, not healthy", missing, r)
	}
}
