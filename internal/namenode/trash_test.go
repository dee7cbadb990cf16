package namenode

import (
	"testing"
	"time"

	"smarth/internal/rpc/dfspb"
	"smarth/internal/trash"
)

// TestTrashEmptier: a round deletes expired checkpoints of every user's
// trash, keeps recent ones and stray entries, makes Current a checkpoint;
// the result is journaled (survives a restart).
func TestTrashEmptier(t *testing.T) {
	cfg := testConfig(t)
	cfg.TrashInterval = time.Hour
	nn := startNN(t, cfg)
	c := dial(t, nn.Addr(), "hdfs")
	now := time.Now()
	old := trash.CheckpointName(now.Add(-2*time.Hour), 0)
	recent := trash.CheckpointName(now.Add(-30*time.Minute), 0)
	for _, d := range []string{"/user/alice/.Trash/Current/data", "/user/alice/.Trash/" + old + "/x",
		"/user/alice/.Trash/" + recent, "/user/alice/.Trash/junk", "/user/bob/.Trash/Current/y"} {
		if _, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: d, CreateParent: true}); err != nil {
			t.Fatal(err)
		}
	}
	nn.emptyTrashTick()
	isThere := func(c *rpcClient, p string) bool {
		_, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: p})
		return err == nil
	}
	check := func(when string, c *rpcClient) {
		t.Helper()
		for p, want := range map[string]bool{
			"/user/alice/.Trash/Current": false, "/user/alice/.Trash/" + old: false,
			"/user/alice/.Trash/" + recent: true, "/user/alice/.Trash/junk": true,
			"/user/bob/.Trash/Current": false,
		} {
			if isThere(c, p) != want {
				t.Fatalf("%s: %s there=%v, want %v", when, p, !want, want)
			}
		}
		a, _ := c.cp.GetListing(c.ctx(), &dfspb.GetListingRequest{Path: "/user/alice/.Trash"})
		b, _ := c.cp.GetListing(c.ctx(), &dfspb.GetListingRequest{Path: "/user/bob/.Trash"})
		if len(a.GetEntries()) != 3 || len(b.GetEntries()) != 1 || !isThere(c, b.GetEntries()[0].GetPath()+"/y") {
			t.Fatalf("%s: alice's trash %v, bob's %v", when, a.GetEntries(), b.GetEntries())
		}
	}
	check("after a round", c)
	nn.Close()
	nn = startNN(t, cfg)
	check("after a restart", dial(t, nn.Addr(), "hdfs"))
}
