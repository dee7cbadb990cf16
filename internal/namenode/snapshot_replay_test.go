package namenode

import (
	"strings"
	"testing"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/journal"
	"smarth/internal/namenode/namespace"
)

// replayCheck applies ops to a fresh state, logging each, with an image
// saved after the first imageAt of them; then it loads the journal twice
// (from the format image with every edit replayed, and from the mid-way
// image with the rest replayed) and once from an image of the end, and
// wants the same features (dumpFeatures) every time. It returns them.
func replayCheck(t *testing.T, ops []*editOp, imageAt int) string {
	t.Helper()
	trusted := namespace.Caller{User: "hdfs", Trusted: true}
	newState := func() *fsState {
		return &fsState{tree: namespace.New(namespace.Config{Superuser: "hdfs", Now: 1}), blocks: blockmap.New()}
	}
	load := func(fs *journal.MemFS, what, want string) {
		t.Helper()
		j, err := journal.Open(fs, "/m", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		dst := newState()
		if _, _, err := j.Load(dst); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := dumpFeatures(dst); got != want {
			t.Fatalf("%s differs\n got:\n%s\nwant:\n%s", what, got, want)
		}
	}
	run := func(midImage bool) (*journal.MemFS, *fsState, uint64) {
		fs := journal.NewMemFS()
		j, err := journal.Open(fs, "/m", nil)
		if err != nil {
			t.Fatal(err)
		}
		src := newState()
		if _, _, err := j.Load(newState()); err != nil {
			t.Fatal(err)
		}
		if err := j.SaveImage(src.image(0)); err != nil {
			t.Fatal(err)
		}
		var last uint64
		for i, o := range ops {
			if i == imageAt && midImage {
				if err := j.SaveImage(src.image(last)); err != nil {
					t.Fatal(err)
				}
			}
			o.User = "hdfs"
			if _, err := src.apply(o, trusted); err != nil {
				t.Fatalf("%s: %v", o.Kind, err)
			}
			last = j.Append(o.encode())
		}
		if err := j.Sync(last); err != nil {
			t.Fatal(err)
		}
		j.Close()
		return fs, src, last
	}
	fs, src, _ := run(false)
	want := dumpFeatures(src)
	load(fs, "replay of the whole edit log", want)
	fs, src, last := run(true)
	load(fs, "an image taken mid-way and the rest of the log", want)
	j, err := journal.Open(fs, "/m", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.SaveImage(src.image(last)); err != nil {
		t.Fatal(err)
	}
	j.Close()
	load(fs, "an image of the end", want)
	return want
}

// TestSnapshotDuringAppendReplays: snapshots taken while an append is
// open hold the reopened partial block at the stamp and length it had
// when the append reopened it, though the writer has moved it to a new
// stamp and a pipeline recovery has recorded more bytes; so does the
// state rebuilt from the edit log, and from an image saved while the
// append was open followed by the snapshot's edit.
func TestSnapshotDuringAppendReplays(t *testing.T) {
	const f = 3 // inode ids: / is 1, /d 2, /d/f 3
	ops := []*editOp{
		{Kind: opMkdirs, Path: "/d", Perm: 0o755, ParentPerm: 0o755, CreateParent: true, Now: 1},
		{Kind: opCreate, Path: "/d/f", Perm: 0o644, Replication: 3, BlockSize: 1 << 20, Client: "w", Now: 2},
		{Kind: opAddBlock, FileID: f, Block: blockRef{ID: 100, GS: 1000}},
		{Kind: opAddBlock, FileID: f, Prev: &blockRef{100, 1000, 1 << 20}, Block: blockRef{ID: 101, GS: 1001}},
		{Kind: opComplete, FileID: f, Blocks: []blockRef{{100, 1000, 1 << 20}, {101, 1001, 3000}}, Now: 3},
		{Kind: opAllowSnapshot, Path: "/d"},
		{Kind: opAppend, Path: "/d/f", Client: "app", Host: "h", Now: 4},
		{Kind: opAllocGS, Block: blockRef{GS: 1002}},
		{Kind: opUpdateBlock, Block: blockRef{ID: 101, GS: 1002, Len: 3000}},
		// The image of the mid-way load is saved here, the append open.
		{Kind: opCreateSnapshot, Path: "/d", Snapshot: "s0", Now: 5},
		{Kind: opAllocGS, Block: blockRef{GS: 1003}},
		{Kind: opUpdateBlock, Block: blockRef{ID: 101, GS: 1003, Len: 4500}},
		{Kind: opCreateSnapshot, Path: "/d", Snapshot: "s1", Now: 6},
	}
	got := replayCheck(t, ops, 9)
	for _, must := range []string{
		"/d/.snapshot/s0/f id=3 mode=644 hdfs:supergroup mtime=3 acl=[] policy=0 [100 gs=1000 len=1048576 complete] [101 gs=1001 len=3000 complete]",
		"/d/.snapshot/s1/f id=3 mode=644 hdfs:supergroup mtime=3 acl=[] policy=0 [100 gs=1000 len=1048576 complete] [101 gs=1001 len=3000 complete]",
		"block 101 gs=1003 len=4500 file=3 refs=2",
	} {
		if !strings.Contains(got, must) {
			t.Fatalf("state lacks %q:\n%s", must, got)
		}
	}
}

// TestReplayRenameOfSnapshottedTree: an edit log may hold a rename of a
// directory above a snapshottable directory with snapshots, accepted
// before such renames were refused; replay applies it (the live refusal
// is for new renames), and the namenode loads.
func TestReplayRenameOfSnapshottedTree(t *testing.T) {
	ops := []*editOp{
		{Kind: opMkdirs, Path: "/a/s", Perm: 0o755, ParentPerm: 0o755, CreateParent: true, Now: 1},
		{Kind: opAllowSnapshot, Path: "/a/s"},
		{Kind: opCreateSnapshot, Path: "/a/s", Snapshot: "s0", Now: 2},
		{Kind: opRename, Path: "/a", Dst: "/b", Now: 3},
	}
	got := replayCheck(t, ops, 3)
	for _, must := range []string{"snapshottable /b/s", "/b/s/.snapshot/s0 id=3"} {
		if !strings.Contains(got, must) {
			t.Fatalf("state lacks %q:\n%s", must, got)
		}
	}
	// A live rename is still refused.
	s := &fsState{tree: namespace.New(namespace.Config{Superuser: "hdfs", Now: 1}), blocks: blockmap.New()}
	for _, o := range ops[:3] {
		if _, err := s.apply(o, namespace.Caller{User: "hdfs", Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.apply(ops[3], namespace.Caller{User: "hdfs"})
	if err == nil || !strings.Contains(err.Error(), "cannot be renamed since /a/s is snapshottable and already has snapshots") {
		t.Fatalf("live rename of a directory above a snapshotted one: %v", err)
	}
}
