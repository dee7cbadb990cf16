package namespace

import "testing"

// TestCheckAccessInSnapshot: an access check only reads, so it answers
// for paths under .snapshot as for live ones (HDFS FileSystem.access,
// WebHDFS CHECKACCESS), rather than calling it a modification.
func TestCheckAccessInSnapshot(t *testing.T) {
	tr := newTree()
	alice := Caller{User: "alice", Groups: []string{"alice"}}
	mustMkdir(t, tr, root, "/d", 0o755)
	if err := tr.SetOwner(root, "/d", "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	closedFile(t, tr, alice, "/d/f", 20)
	if err := tr.AllowSnapshot(root, "/d"); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.CreateSnapshot(alice, "/d", "s1", 5); err != nil {
		t.Fatal(err)
	}
	bob := Caller{User: "bob", Groups: []string{"bob"}}
	if err := tr.CheckAccess(bob, "/d/.snapshot/s1/f", Read); err != nil {
		t.Fatalf("read access to a snapshot file (0644): %v", err)
	}
	if err := tr.CheckAccess(bob, "/d/.snapshot/s1/f", Write); kindOf(err) != Denied {
		t.Fatalf("write access for bob to alice's 0644 file in a snapshot: %v, want denied", err)
	}
}

// TestRenameSnapshottableWithSnapshots: a directory with snapshots, or
// one above it, can be neither deleted nor renamed until the snapshots
// are deleted (HDFS Snapshots guide); renaming it into another
// snapshottable tree would also nest snapshottable directories, which
// allowSnapshot refuses.
func TestRenameSnapshottableWithSnapshots(t *testing.T) {
	tr := newTree()
	mustMkdir(t, tr, root, "/top/d", 0o755)
	mustMkdir(t, tr, root, "/other", 0o755)
	if err := tr.AllowSnapshot(root, "/top/d"); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.CreateSnapshot(root, "/top/d", "s1", 5); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{"/top/d", "/top"} {
		if _, err := tr.Rename(root, src, "/other/x", 6); kindOf(err) != Precondition {
			t.Fatalf("rename %s holding snapshots: %v, want refused", src, err)
		}
		for _, over := range []bool{false, true} {
			if _, _, err := tr.Rename2(root, src, "/other/x", over, 6); kindOf(err) != Precondition {
				t.Fatalf("rename2 (overwrite %v) %s holding snapshots: %v, want refused", over, src, err)
			}
		}
	}
	if _, err := tr.Stat(root, "stat", "/top/d/.snapshot/s1"); err != nil {
		t.Fatalf("the snapshot after the refused renames: %v", err)
	}
	// Control: once its snapshots are gone it moves.
	if _, err := tr.DeleteSnapshot(root, "/top/d", "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Rename(root, "/top", "/other/x", 7); err != nil {
		t.Fatalf("rename without snapshots: %v", err)
	}
}
