package namespace

import (
	"testing"

	"smarth/internal/namenode/blockmap"
)

// closedFile makes a closed file at path owned by c with one full,
// complete block.
func closedFile(t *testing.T, tr *Tree, c Caller, path string, id uint64) *INode {
	t.Helper()
	f := mustCreate(t, tr, c, path)
	tr.AddBlock(f, &blockmap.Block{ID: id, GS: 1, NumBytes: f.BlockSize(), State: blockmap.Complete, FileID: f.ID, Expected: f.Replication()})
	tr.CloseFile(f, 4)
	return f
}

// TestConcatStickyDirectory: concat deletes its sources, so in a sticky
// directory (/tmp, 1777) a source must be the caller's, as for delete and
// rename (HDFS checks the sticky bit whenever the parent's WRITE is
// checked). Without it, anyone could swallow another user's readable file
// into a target of their own and remove its name.
func TestConcatStickyDirectory(t *testing.T) {
	tr := newTree()
	alice := Caller{User: "alice", Groups: []string{"users"}}
	bob := Caller{User: "bob", Groups: []string{"users"}}
	mustMkdir(t, tr, root, "/tmp", 0o777)
	if err := tr.SetPermission(root, "/tmp", 0o1777); err != nil {
		t.Fatal(err)
	}
	closedFile(t, tr, alice, "/tmp/alice-data", 10) // 0644: bob may read it
	closedFile(t, tr, bob, "/tmp/bob-target", 11)
	closedFile(t, tr, bob, "/tmp/bob-src", 12)

	if _, err := tr.Concat(bob, "/tmp/bob-target", []string{"/tmp/alice-data"}, 5); kindOf(err) != Denied {
		t.Fatalf("bob concatenating alice's file in a sticky directory: %v, want permission denied", err)
	}
	if _, err := tr.Lookup("/tmp/alice-data"); err != nil {
		t.Fatalf("alice's file after the refused concat: %v", err)
	}
	// Control: his own source is his to remove.
	trg, err := tr.Concat(bob, "/tmp/bob-target", []string{"/tmp/bob-src"}, 5)
	if err != nil {
		t.Fatalf("bob concatenating his own file: %v", err)
	}
	if len(trg.Blocks) != 2 {
		t.Fatalf("target has %d blocks after concat, want 2", len(trg.Blocks))
	}
}
