package namenode

import (
	"fmt"
	"testing"

	"smarth/internal/rpc/dfspb"
)

// TestHAGroupStartsFromASingleNamenode is the upgrade path of issue 28:
// a single namenode's meta_dir (an image and the edits after it) is
// where the member that bootstraps a group starts, so the namespace it
// held becomes the group's first snapshot. Every member gets it (the
// others start empty and install the snapshot), the group's new edits
// continue its txids, and the whole group, restarted from its disks,
// still has both.
func TestHAGroupStartsFromASingleNamenode(t *testing.T) {
	single := testConfig(t)
	nn := startNN(t, single)
	c := dial(t, nn.Addr(), "hdfs")
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("single namenode: %s: %v", what, err)
		}
	}
	_, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/old/in-image", CreateParent: true})
	must("mkdirs /old/in-image", err)
	// An image of what is there so far, then edits after it: the load
	// must take both.
	must("checkpoint", nn.checkpoint())
	_, err = c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/old/a/b", CreateParent: true})
	must("mkdirs /old/a/b", err)
	r, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/old/f", ClientName: "w", Replication: 1})
	must("create /old/f", err)
	_, err = c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: "/old/f", ClientName: "w", FileId: r.GetStatus().GetFileId()})
	must("complete /old/f", err)
	_, err = c.cp.SetOwner(c.ctx(), &dfspb.SetOwnerRequest{Path: "/old/a", Owner: "alice"})
	must("setOwner /old/a", err)
	_, err = c.cp.SetPermission(c.ctx(), &dfspb.SetPermissionRequest{Path: "/old/a", Permission: 0o750})
	must("setPermission /old/a", err)
	nn.mu.RLock()
	lastTxID := nn.journal.LastTxID()
	nn.mu.RUnlock()
	nn.Close()

	g := startHAGroup(t, 3, func(cfg *Config) {
		if cfg.HA.ID == "nn0" {
			cfg.MetaDir = single.MetaDir
		}
	})
	check := func(when string, paths ...string) {
		t.Helper()
		for i := range g.nns {
			for _, p := range paths {
				waitFor(t, fmt.Sprintf("%s: member %d to have %s", when, i, p), func() bool { return g.has(i, p) })
			}
			m := g.nns[i]
			m.mu.RLock()
			a, err := m.state.Tree().Lookup("/old/a")
			m.mu.RUnlock()
			if err != nil || a.Owner() != "alice" || a.Perm() != 0o750 {
				t.Fatalf("%s: member %d: /old/a is %v (err %v), want owner alice, mode 0750", when, i, a, err)
			}
		}
	}
	old := []string{"/old/in-image", "/old/a/b", "/old/f"}
	check("the group started", old...)

	l := g.active(nil)
	a := g.cli[l]
	if _, err := a.cp.Mkdirs(a.ctx(), &dfspb.MkdirsRequest{Path: "/new"}); err != nil {
		t.Fatalf("mkdirs /new on the group: %v", err)
	}
	st, err := a.cp.GetHAStatus(a.ctx(), &dfspb.GetHAStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.AppliedTxid <= lastTxID {
		t.Fatalf("the group's applied txid %d after a new mkdir; the single namenode's last was %d: txids must continue", st.AppliedTxid, lastTxID)
	}
	check("after a new mkdir", append(old, "/new")...)

	for i := range g.nns {
		g.nns[i].Close()
	}
	for i := range g.nns {
		g.nns[i] = startNN(t, g.cfgs[i])
	}
	g.active(nil)
	check("every member restarted from its disk", append(old, "/new")...)
}
