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
