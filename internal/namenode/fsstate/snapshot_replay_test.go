package fsstate

import (
	"strings"
	"testing"

	"smarth/internal/namenode/journal"
	"smarth/internal/namenode/namespace"
)

// replayCheck applies ops to a fresh state, logging each, with an image
// saved after the first imageAt of them; then it loads the journal twice
// (from the format image with every edit replayed, and from the mid-way
// image with the rest replayed) and once from an image of the end, and
// wants the same features (dumpFeatures) every time. It returns them.
func replayCheck(t *testing.T, ops []Record, imageAt int) string {
	t.Helper()
	trusted := namespace.Caller{User: "hdfs", Trusted: true}
	newState := func() *State {
		return newTestState()
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
	run := func(midImage bool) (*journal.MemFS, *State, uint64) {
		fs := journal.NewMemFS()
		j, err := journal.Open(fs, "/m", nil)
		if err != nil {
			t.Fatal(err)
		}
		src := newState()
		if _, _, err := j.Load(newState()); err != nil {
			t.Fatal(err)
		}
		if err := j.SaveImage(src.Image(0)); err != nil {
			t.Fatal(err)
		}
		var last uint64
		for i, o := range ops {
			if i == imageAt && midImage {
				if err := j.SaveImage(src.Image(last)); err != nil {
					t.Fatal(err)
				}
			}
			actAs(o, "hdfs")
			if _, err := src.Apply(o, trusted); err != nil {
				t.Fatalf("%s: %v", o.Kind(), err)
			}
			last = j.Append(Encode(o))
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
	if err := j.SaveImage(src.Image(last)); err != nil {
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
	ops := []Record{
		&Mkdirs{Path: "/d", Perm: 0o755, ParentPerm: 0o755, CreateParent: true, Now: 1},
		&Create{Path: "/d/f", Perm: 0o644, Replication: 3, BlockSize: 1 << 20, Client: "w", Now: 2},
		&AddBlock{FileID: f, Block: BlockRef{ID: 100, GS: 1000}},
		&AddBlock{FileID: f, Prev: &BlockRef{100, 1000, 1 << 20}, Block: BlockRef{ID: 101, GS: 1001}},
		&Complete{FileID: f, Blocks: []BlockRef{{100, 1000, 1 << 20}, {101, 1001, 3000}}, Now: 3},
		&AllowSnapshot{Path: "/d"},
		&Append{Path: "/d/f", Client: "app", Host: "h", Now: 4},
		&AllocGS{GS: 1002},
		&UpdateBlock{Block: BlockRef{ID: 101, GS: 1002, Len: 3000}},
		// The image of the mid-way load is saved here, the append open.
		&CreateSnapshot{Path: "/d", Snapshot: "s0", Now: 5},
		&AllocGS{GS: 1003},
		&UpdateBlock{Block: BlockRef{ID: 101, GS: 1003, Len: 4500}},
		&CreateSnapshot{Path: "/d", Snapshot: "s1", Now: 6},
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
	ops := []Record{
		&Mkdirs{Path: "/a/s", Perm: 0o755, ParentPerm: 0o755, CreateParent: true, Now: 1},
		&AllowSnapshot{Path: "/a/s"},
		&CreateSnapshot{Path: "/a/s", Snapshot: "s0", Now: 2},
		&Rename{Path: "/a", Dst: "/b", Now: 3},
	}
	got := replayCheck(t, ops, 3)
	for _, must := range []string{"snapshottable /b/s", "/b/s/.snapshot/s0 id=3"} {
		if !strings.Contains(got, must) {
			t.Fatalf("state lacks %q:\n%s", must, got)
		}
	}
	// A live rename is still refused.
	s := newTestState()
	for _, o := range ops[:3] {
		if _, err := s.Apply(o, namespace.Caller{User: "hdfs", Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.Apply(ops[3], namespace.Caller{User: "hdfs"})
	if err == nil || !strings.Contains(err.Error(), "cannot be renamed since /a/s is snapshottable and already has snapshots") {
		t.Fatalf("live rename of a directory above a snapshotted one: %v", err)
	}
}

// TestCopyOnTruncateReplays: the copy-on-truncate record (with the new
// block) replays to the same state, and an image taken while the copy is
// in progress keeps its source, which stays in the block map even once
// the snapshot that held it is deleted, until the file closes.
func TestCopyOnTruncateReplays(t *testing.T) {
	const f = 3 // inode ids: / is 1, /d 2, /d/f 3
	base := []Record{
		&Mkdirs{Path: "/d", Perm: 0o755, ParentPerm: 0o755, CreateParent: true, Now: 1},
		&Create{Path: "/d/f", Perm: 0o644, Replication: 3, BlockSize: 1 << 20, Client: "w", Now: 2},
		&AddBlock{FileID: f, Block: BlockRef{ID: 100, GS: 1000}},
		&AddBlock{FileID: f, Prev: &BlockRef{100, 1000, 1 << 20}, Block: BlockRef{ID: 101, GS: 1001}},
		&Complete{FileID: f, Blocks: []BlockRef{{100, 1000, 1 << 20}, {101, 1001, 3000}}, Now: 3},
		&AllowSnapshot{Path: "/d"},
		&CreateSnapshot{Path: "/d", Snapshot: "s0", Now: 4},
		&Truncate{Path: "/d/f", NewLength: 500, Client: "tr", Host: "h", Block: BlockRef{ID: 200, GS: 1005}, Now: 5},
		// The mid-way image is saved here, the copy in progress.
		&DeleteSnapshot{Path: "/d", Snapshot: "s0"},
	}
	inProgress := replayCheck(t, clone(base), 8)
	for _, must := range []string{
		"/d/f id=3 mode=644 hdfs:supergroup mtime=5 acl=[] policy=0 [200 gs=1005 len=500 under-construction]",
		"block 100 gs=1000 len=1048576 file=3 refs=0", // the copy's source
	} {
		if !strings.Contains(inProgress, must) {
			t.Fatalf("state lacks %q:\n%s", must, inProgress)
		}
	}
	if strings.Contains(inProgress, "block 101") {
		t.Fatalf("block 101, dropped by the truncate and the snapshot deletion, is still there:\n%s", inProgress)
	}
	done := replayCheck(t, append(clone(base),
		&AllocGS{GS: 1006},
		&CommitSync{FileID: f, Block: BlockRef{ID: 200, GS: 1006, Len: 500}, Now: 6},
		&CloseFile{FileID: f, Keep: 1, Now: 7},
	), 8)
	if !strings.Contains(done, "[200 gs=1006 len=500 complete]") || strings.Contains(done, "block 100 ") {
		t.Fatalf("after the copy is committed the source should be gone:\n%s", done)
	}
}

// clone copies records through their encoding, so that a run cannot
// change another's.
func clone(ops []Record) []Record {
	out := make([]Record, len(ops))
	for i, o := range ops {
		c, err := Decode(Encode(o))
		if err != nil {
			panic(err)
		}
		out[i] = c
	}
	return out
}
