package namenode

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"smarth/internal/rpc/dfspb"
)

// TestSnapshotKeepsBlocksOnDatanodes: deleting a file a snapshot holds
// sends no invalidations; deleting the snapshot does, and only for the
// blocks nothing else holds; all of it across a restart.
func TestSnapshotKeepsBlocksOnDatanodes(t *testing.T) {
	cfg := testConfig(t)
	nn := startNN(t, cfg)
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 2; i++ {
		fc.add(fmt.Sprintf("dn%d", i), "/r")
	}
	c := dial(t, nn.Addr(), "hdfs")
	old := writeFile(t, c, fc, "/d/f", 2, 1<<20, 300)
	kept := writeFile(t, c, fc, "/d/kept", 2, 50)
	if _, err := c.cp.AllowSnapshot(c.ctx(), &dfspb.AllowSnapshotRequest{SnapshotRoot: "/d"}); err != nil {
		t.Fatal(err)
	}
	r, err := c.cp.CreateSnapshot(c.ctx(), &dfspb.CreateSnapshotRequest{SnapshotRoot: "/d", SnapshotName: "s0"})
	if err != nil || r.GetSnapshotPath() != "/d/.snapshot/s0" {
		t.Fatalf("%v %v", r, err)
	}
	if _, err := c.cp.Delete(c.ctx(), &dfspb.DeleteRequest{Path: "/d/f"}); err != nil {
		t.Fatal(err)
	}
	// Reading the snapshot: the old blocks at their lengths, on the nodes.
	lbs, err := c.cp.GetBlockLocations(c.ctx(), &dfspb.GetBlockLocationsRequest{Path: "/d/.snapshot/s0/f"})
	if err != nil || lbs.GetLocations().GetFileLength() != 1<<20+300 || len(lbs.GetLocations().GetBlocks()) != 2 ||
		len(ids(lbs.GetLocations().GetBlocks()[1])) != 2 {
		t.Fatalf("snapshot file locations: %v %v", lbs, err)
	}
	_, err = c.cp.Delete(c.ctx(), &dfspb.DeleteRequest{Path: "/d/.snapshot/s0/f"})
	wantErr(t, err, codes.PermissionDenied, "Modification on a read-only snapshot is disallowed")
	_, err = c.cp.Delete(c.ctx(), &dfspb.DeleteRequest{Path: "/d", Recursive: true})
	wantErr(t, err, codes.FailedPrecondition, "snapshottable and already has snapshots")
	time.Sleep(3 * cfg.HeartbeatInterval) // invalidations would have gone out by now
	for _, lb := range old {
		for _, id := range ids(lb) {
			if !fc.node(id).has(lb.GetBlock().GetBlockId()) {
				t.Fatalf("block %d of the deleted file left %s while a snapshot holds it", lb.GetBlock().GetBlockId(), id)
			}
		}
	}
	nn.Close()
	nn = startNN(t, cfg)
	c = dial(t, nn.Addr(), "hdfs")
	fc2 := newFakeCluster(t, nn)
	for i := 1; i <= 2; i++ {
		o := fc.node(fmt.Sprintf("id-dn%d", i))
		fc2.addWith(o.info.Hostname, "/r", o.snapshot())
	}
	fc = fc2
	waitFor(t, "safe mode off after block reports", func() bool {
		r, err := c.cp.SetSafeMode(c.ctx(), &dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_GET})
		return err == nil && !r.GetOn()
	})
	st, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: "/d/.snapshot/s0/f"})
	if err != nil || st.GetStatus().GetLength() != 1<<20+300 {
		t.Fatalf("after restart: %v %v", st, err)
	}
	if _, err := c.cp.DeleteSnapshot(c.ctx(), &dfspb.DeleteSnapshotRequest{SnapshotRoot: "/d", SnapshotName: "s0"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deleted file's replicas to be invalidated", func() bool {
		for _, lb := range old {
			for _, id := range ids(lb) {
				if fc.node(id).has(lb.GetBlock().GetBlockId()) {
					return false
				}
			}
		}
		return true
	})
	for _, id := range ids(kept[0]) {
		if !fc.node(id).has(kept[0].GetBlock().GetBlockId()) {
			t.Fatal("a live file's block went with the snapshot")
		}
	}
	_, err = c.cp.DisallowSnapshot(c.ctx(), &dfspb.DisallowSnapshotRequest{SnapshotRoot: "/d"})
	if err != nil {
		t.Fatal(err)
	}
}
