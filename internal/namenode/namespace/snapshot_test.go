package namespace

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"smarth/internal/namenode/blockmap"
)

func addBlocks(tr *Tree, f *INode, ids ...uint64) {
	for _, id := range ids {
		tr.AddBlock(f, &blockmap.Block{ID: id, GS: 1, NumBytes: 100, State: blockmap.Complete, FileID: f.ID})
	}
	tr.CloseFile(f, 4)
}

// TestSnapshotSemantics: allow/create/read-only views/delete/rename/
// disallow with HDFS's rules, and the block references that keep a
// deleted file's blocks alive until the last snapshot holding them goes.
func TestSnapshotSemantics(t *testing.T) {
	tr := newTree()
	alice := Caller{User: "alice"}
	mustMkdir(t, tr, root, "/d", 0o755)
	if err := tr.SetOwner(root, "/d", "alice", ""); err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, tr, alice, "/d/sub", 0o755)
	f := mustCreate(t, tr, alice, "/d/sub/f")
	addBlocks(tr, f, 10, 11)

	if _, err := tr.CreateSnapshot(alice, "/d", "s0", 5); kindOf(err) != Precondition {
		t.Fatalf("snapshot of a directory that is not snapshottable: %v", err)
	}
	if err := tr.AllowSnapshot(alice, "/d"); kindOf(err) != Denied {
		t.Fatalf("alice allowing snapshots: %v", err)
	}
	if err := tr.AllowSnapshot(root, "/d"); err != nil {
		t.Fatal(err)
	}
	if err := tr.AllowSnapshot(root, "/d/sub"); kindOf(err) != Precondition || !strings.Contains(err.Error(), "Nested snapshottable directories not allowed") {
		t.Fatalf("nested: %v", err)
	}
	p, err := tr.CreateSnapshot(alice, "/d", "s0", 5)
	if err != nil || p != "/d/.snapshot/s0" {
		t.Fatalf("create: %q %v", p, err)
	}
	if _, err := tr.CreateSnapshot(alice, "/d", "s0", 6); kindOf(err) != Exists {
		t.Fatalf("duplicate name: %v", err)
	}
	if _, err := tr.CreateSnapshot(Caller{User: "bob"}, "/d", "b", 6); kindOf(err) != Denied {
		t.Fatalf("bob snapshots alice's directory: %v", err)
	}
	if got := tr.SnapshotRefs(10); got != 1 {
		t.Fatalf("refs of block 10: %d", got)
	}

	// The live file changes; the snapshot does not.
	if _, err := tr.Delete(alice, "/d/sub/f", false, 7); err != nil {
		t.Fatal(err)
	}
	g := mustCreate(t, tr, alice, "/d/sub/f")
	addBlocks(tr, g, 20)
	old, err := tr.Open(alice, "/d/.snapshot/s0/sub/f")
	if err != nil || old.Length() != 200 || old.Blocks[0].ID != 10 || old.Path() != "/d/.snapshot/s0/sub/f" {
		t.Fatalf("snapshot file: %+v %v", old, err)
	}
	if !tr.InSnapshot(old) || tr.InSnapshot(g) {
		t.Fatal("InSnapshot")
	}
	ls, _, err := tr.List(alice, "/d/.snapshot", "", 0)
	if err != nil || len(ls) != 1 || ls[0].Name != "s0" {
		t.Fatalf("list .snapshot: %v %v", ls, err)
	}

	// Every write under .snapshot is refused; .snapshot is reserved.
	writes := map[string]error{
		"create":  third(tr.Create(alice, "/d/.snapshot/s0/sub/new", CreateOptions{Perm: 0o644, Writer: Writer{Client: "c"}}, 8)),
		"delete":  second(tr.Delete(alice, "/d/.snapshot/s0/sub/f", false, 8)),
		"rename":  second(tr.Rename(alice, "/d/.snapshot/s0/sub/f", "/d/x", 8)),
		"into":    second(tr.Rename(alice, "/d/sub/f", "/d/.snapshot/s0/y", 8)),
		"mkdir":   tr.Mkdirs(alice, "/d/.snapshot/s9", 0o755, 0o755, false, 8),
		"chmod":   tr.SetPermission(alice, "/d/.snapshot/s0/sub/f", 0o777),
		"setrep":  second(tr.SetReplication(alice, "/d/.snapshot/s0/sub/f", 1)),
		"xattr":   tr.SetXAttr(alice, "/d/.snapshot/s0/sub/f", "user.a", nil, XAttrCreate),
		"acl":     tr.ChangeACL(alice, "/d/.snapshot/s0/sub/f", ACLModify, spec(t, "user:bob:r--", true)),
		"times":   second(tr.SetTimes(alice, "/d/.snapshot/s0/sub/f", 1, 1)),
		"policy":  tr.SetStoragePolicy(alice, "/d/.snapshot/s0/sub/f", 2),
		"lookup":  second(tr.Lookup("/d/.snapshot/s0/sub/f")),
		"touchAt": second(tr.TouchAccess("/d/.snapshot/s0/sub/f", 99)),
	}
	for name, err := range writes {
		if kindOf(err) != Denied || !strings.Contains(err.Error(), "Modification on a read-only snapshot is disallowed") {
			t.Errorf("%s under .snapshot: %v", name, err)
		}
	}
	if err := tr.Mkdirs(alice, "/d/sub/.snapshot", 0o755, 0o755, false, 8); kindOf(err) != Invalid || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("mkdir .snapshot elsewhere: %v", err)
	}
	if _, err := tr.Stat(alice, "stat", "/d/sub/.snapshot"); kindOf(err) != NotFound {
		t.Fatalf("stat .snapshot of a plain directory: %v", err)
	}

	// Deleting the directory, or disallowing, fails while snapshots exist.
	if _, err := tr.Delete(root, "/d", true, 9); kindOf(err) != Precondition || !strings.Contains(err.Error(), "cannot be deleted since /d is snapshottable and already has snapshots") {
		t.Fatalf("delete of a snapshottable directory: %v", err)
	}
	if err := tr.DisallowSnapshot(root, "/d"); kindOf(err) != Precondition {
		t.Fatalf("disallow with snapshots: %v", err)
	}
	if err := tr.RenameSnapshot(alice, "/d", "s0", "old"); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Stat(alice, "stat", "/d/.snapshot/old/sub/f"); err != nil {
		t.Fatal(err)
	}
	// A second snapshot shares block 20 with the live file.
	if _, err := tr.CreateSnapshot(alice, "/d", "s1", 10); err != nil {
		t.Fatal(err)
	}
	freed, err := tr.DeleteSnapshot(alice, "/d", "old")
	if err != nil || !slices.Equal(freed, []uint64{10, 11}) {
		t.Fatalf("delete old: freed %v %v; want the old file's blocks 10, 11", freed, err)
	}
	freed, err = tr.DeleteSnapshot(alice, "/d", "s1")
	if err != nil || !slices.Equal(freed, []uint64{20}) || tr.SnapshotRefs(20) != 0 {
		t.Fatalf("delete s1: freed %v %v (block 20 is still the live file's; the caller keeps it)", freed, err)
	}
	if _, err := tr.DeleteSnapshot(alice, "/d", "s1"); kindOf(err) != NotFound {
		t.Fatalf("delete again: %v", err)
	}
	if err := tr.DisallowSnapshot(root, "/d"); err != nil {
		t.Fatal(err)
	}
	if len(tr.acls)+len(tr.policies)+len(tr.snapRefs) != 0 {
		t.Fatal("side maps not emptied")
	}
}

// TestSnapshotPreservesAttributes: a snapshot keeps the ACL, xattrs,
// policy and mode of its time, and checks permissions with them.
func TestSnapshotPreservesAttributes(t *testing.T) {
	tr := newTree()
	alice, bob := Caller{User: "alice"}, Caller{User: "bob"}
	mustMkdir(t, tr, root, "/d", 0o777)
	f := mustCreate(t, tr, alice, "/d/f")
	addBlocks(tr, f, 1)
	if err := tr.ChangeACL(alice, "/d/f", ACLModify, spec(t, "user:bob:r--,other::---", true)); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetStoragePolicy(alice, "/d/f", 2); err != nil {
		t.Fatal(err)
	}
	if err := tr.AllowSnapshot(root, "/d"); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.CreateSnapshot(root, "/d", "s", 3); err != nil {
		t.Fatal(err)
	}
	if err := tr.ChangeACL(alice, "/d/f", ACLRemoveAll, nil); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetStoragePolicy(alice, "/d/f", PolicyUnspecified); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Open(bob, "/d/f"); kindOf(err) != Denied {
		t.Fatalf("bob reads the live file after the ACL went: %v", err)
	}
	if _, err := tr.Open(bob, "/d/.snapshot/s/f"); err != nil {
		t.Fatalf("bob reads the snapshot through its ACL: %v", err)
	}
	if id, err := tr.GetStoragePolicy(bob, "/d/.snapshot/s/f"); err != nil || id != 2 {
		t.Fatalf("snapshot policy %d %v", id, err)
	}
}

// TestSnapshotDiff: created, deleted, renamed and modified entries,
// against a snapshot and the current state.
func TestSnapshotDiff(t *testing.T) {
	tr := newTree()
	mustMkdir(t, tr, root, "/d/keep", 0o755)
	addBlocks(tr, mustCreate(t, tr, root, "/d/gone"), 1)
	addBlocks(tr, mustCreate(t, tr, root, "/d/mod"), 2)
	addBlocks(tr, mustCreate(t, tr, root, "/d/keep/moved"), 3)
	if err := tr.AllowSnapshot(root, "/d"); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.CreateSnapshot(root, "/d", "s0", 5); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Delete(root, "/d/gone", false, 6); err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, tr, root, "/d/new/deep", 0o755)
	if _, err := tr.Rename(root, "/d/keep/moved", "/d/renamed", 6); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetPermission(root, "/d/mod", 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.CreateSnapshot(root, "/d", "s1", 7); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{"s1", "."} {
		diff, err := tr.SnapshotDiff(root, "/d", "s0", to)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range diff {
			got = append(got, fmt.Sprintf("%s %s %s", e.Kind, e.Path, e.Target))
		}
		want := []string{"M . ", "M ./keep ", "- ./gone ", "R ./keep/moved ./renamed", "M ./mod ", "+ ./new "}
		slices.Sort(got)
		slices.Sort(want)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("diff s0..%s:\n got %q\nwant %q", to, got, want)
		}
	}
	if _, err := tr.SnapshotDiff(root, "/d", "s0", "nope"); kindOf(err) != NotFound {
		t.Fatalf("diff with a missing snapshot: %v", err)
	}
}
