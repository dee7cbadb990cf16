package namenode

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/journal"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
)

func featureSampleOps() []*editOp {
	return []*editOp{
		{Kind: opACL, Path: "/d", ACLOp: namespace.ACLModify, ACL: []namespace.ACLEntry{
			{Scope: namespace.ScopeDefault, Type: namespace.ACLUser, Name: "bob", Perm: 7}, {Type: namespace.ACLMask, Perm: 5}}},
		{Kind: opACL, Path: "/d", ACLOp: namespace.ACLRemoveAll},
		{Kind: opSetStoragePolicy, Path: "/d", Policy: 2},
		{Kind: opAllowSnapshot, Path: "/d"},
		{Kind: opDisallowSnapshot, Path: "/d"},
		{Kind: opCreateSnapshot, Path: "/d", Snapshot: "s0", Now: 1700000000000},
		{Kind: opDeleteSnapshot, Path: "/d", Snapshot: "s0"},
		{Kind: opRenameSnapshot, Path: "/d", Snapshot: "s0", SnapshotNew: "s1"},
	}
}

func TestFeatureOpRoundTrip(t *testing.T) {
	seen := map[opKind]bool{}
	for _, o := range featureSampleOps() {
		seen[o.Kind] = true
		got, err := decodeOp(o.encode())
		if err != nil {
			t.Fatalf("%s: %v", o.Kind, err)
		}
		if !reflect.DeepEqual(got, o) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", o.Kind, got, o)
		}
		if b := o.encode(); len(b) > 2 {
			if _, err := decodeOp(b[:len(b)-1]); err == nil {
				t.Errorf("%s: a truncated record decoded", o.Kind)
			}
		}
	}
	for k := opACL; k < opFeatureLimit; k++ {
		if !seen[k] {
			t.Errorf("no sample of %s", k)
		}
	}
}

func FuzzDecodeFeatureOp(f *testing.F) {
	for _, o := range featureSampleOps() {
		f.Add(o.encode())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := decodeOp(b)
		if err != nil {
			return
		}
		again, err := decodeOp(o.encode())
		if err != nil || !reflect.DeepEqual(again, o) {
			t.Fatalf("decode/encode/decode changed %x: %+v -> %+v (%v)", b, o, again, err)
		}
	})
}

// dumpFeatures renders the live tree plus ACLs, policies, snapshots (their
// trees) and every block of the block map, to compare states.
func dumpFeatures(s *fsState) string {
	var lines []string
	t := s.tree
	line := func(n *namespace.INode) string {
		l := fmt.Sprintf("%s id=%d mode=%o %s:%s mtime=%d acl=%v policy=%d", n.Path(), n.ID, n.Perm(), n.Owner(), n.Group(), n.MTime, t.StoredACL(n), t.StoragePolicyOf(n))
		for _, b := range n.Blocks {
			l += fmt.Sprintf(" [%d gs=%d len=%d %v]", b.ID, b.GS, b.NumBytes, b.State)
		}
		return l
	}
	t.Walk(func(n *namespace.INode) bool {
		lines = append(lines, line(n))
		return true
	})
	t.EachSnapshot(func(dir *namespace.INode, snaps []namespace.SnapshotInfo) {
		lines = append(lines, "snapshottable "+dir.Path())
		for _, sn := range snaps {
			walkSnapshot(sn.Root, func(n *namespace.INode) { lines = append(lines, line(n)) })
		}
	})
	s.blocks.Each(func(b *blockmap.Block) bool {
		lines = append(lines, fmt.Sprintf("block %d gs=%d len=%d file=%d refs=%d", b.ID, b.GS, b.NumBytes, b.FileID, t.SnapshotRefs(b.ID)))
		return true
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestFeaturesSurviveReplayAndImage: ACLs, policies and snapshots (with a
// file deleted after a snapshot, whose blocks only the snapshot holds) come
// back identical from edit log replay and from an image.
func TestFeaturesSurviveReplayAndImage(t *testing.T) {
	alice := namespace.Caller{User: "alice", Trusted: true}
	ops := []*editOp{
		{Kind: opMkdirs, Path: "/d/sub", Perm: 0o755, ParentPerm: 0o755, CreateParent: true, User: "alice", Now: 1},
		{Kind: opACL, Path: "/d", ACLOp: namespace.ACLModify, ACL: []namespace.ACLEntry{{Type: namespace.ACLUser, Name: "bob", Perm: 5},
			{Scope: namespace.ScopeDefault, Type: namespace.ACLGroup, Name: "eng", Perm: 7}}},
		{Kind: opCreate, Path: "/d/sub/f", Perm: 0o644, Replication: 2, BlockSize: 1 << 20, User: "alice", Client: "c", Now: 2},
		{Kind: opAddBlock, FileID: 4, Block: blockRef{ID: 100, GS: 1000}},
		{Kind: opComplete, FileID: 4, Blocks: []blockRef{{100, 1000, 4096}}, Now: 3},
		{Kind: opSetStoragePolicy, Path: "/d/sub", Policy: 12},
		{Kind: opAllowSnapshot, Path: "/d"},
		{Kind: opCreateSnapshot, Path: "/d", Snapshot: "s0", Now: 4},
		{Kind: opDelete, Path: "/d/sub/f", Now: 5},
		{Kind: opCreate, Path: "/d/sub/f", Perm: 0o600, Replication: 1, BlockSize: 1 << 20, User: "alice", Client: "c", Now: 6},
		{Kind: opAddBlock, FileID: 5, Block: blockRef{ID: 101, GS: 1001}},
		{Kind: opComplete, FileID: 5, Blocks: []blockRef{{101, 1001, 10}}, Now: 7},
		{Kind: opCreateSnapshot, Path: "/d", Snapshot: "s1", Now: 8},
		{Kind: opRenameSnapshot, Path: "/d", Snapshot: "s1", SnapshotNew: "later"},
		{Kind: opCreateSnapshot, Path: "/d", Snapshot: "gone", Now: 9},
		{Kind: opDeleteSnapshot, Path: "/d", Snapshot: "gone"},
		{Kind: opACL, Path: "/d/sub/f", ACLOp: namespace.ACLSet, ACL: []namespace.ACLEntry{{Type: namespace.ACLUser, Perm: 6},
			{Type: namespace.ACLGroup, Perm: 0}, {Type: namespace.ACLUser, Name: "carol", Perm: 4}, {Type: namespace.ACLOther, Perm: 0}}},
	}
	fs := journal.NewMemFS()
	j, err := journal.Open(fs, "/m", nil)
	if err != nil {
		t.Fatal(err)
	}
	src := &fsState{tree: namespace.New(namespace.Config{Superuser: "hdfs", Now: 1}), blocks: blockmap.New()}
	if _, _, err := j.Load(&fsState{tree: namespace.New(namespace.Config{}), blocks: blockmap.New()}); err != nil {
		t.Fatal(err)
	}
	if err := j.SaveImage(src.image(0)); err != nil {
		t.Fatal(err)
	}
	var last uint64
	for _, o := range ops {
		o.User = "alice"
		if _, err := src.apply(o, alice); err != nil {
			t.Fatalf("%s: %v", o.Kind, err)
		}
		last = j.Append(o.encode())
	}
	if err := j.Sync(last); err != nil {
		t.Fatal(err)
	}
	want := dumpFeatures(src)
	for _, must := range []string{"/d/.snapshot/s0/sub/f", "/d/.snapshot/later/sub/f", "block 100 gs=1000 len=4096 file=4 refs=1", "block 101 gs=1001 len=10 file=5 refs=1", "policy=12", "carol"} {
		if !strings.Contains(want, must) {
			t.Fatalf("state lacks %q:\n%s", must, want)
		}
	}
	load := func(what string) {
		t.Helper()
		dst := &fsState{tree: namespace.New(namespace.Config{Superuser: "hdfs", Now: 1}), blocks: blockmap.New()}
		j2, err := journal.Open(fs, "/m", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := j2.Load(dst); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := dumpFeatures(dst); got != want {
			t.Fatalf("%s differs\n got:\n%s\nwant:\n%s", what, got, want)
		}
		j2.Close()
	}
	load("replay of the edit log")
	if err := j.SaveImage(src.image(last)); err != nil {
		t.Fatal(err)
	}
	j.Close()
	load("the image")
	// Damaged feature records are errors, not panics.
	recs := imageRecords(t, src)
	for i, r := range recs {
		if isFeatureRecord(r) && len(r) > 2 {
			bad := slices.Clone(recs)
			bad[i] = r[:len(r)-1]
			if err := (&fsState{tree: namespace.New(namespace.Config{}), blocks: blockmap.New()}).LoadImage(last, bad); err == nil {
				t.Errorf("truncated %c record accepted", r[0])
			}
		}
	}
}

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
