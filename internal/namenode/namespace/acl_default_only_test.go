package namespace

import "testing"

// TestDefaultOnlyACLUsesModeBits: a directory with a default ACL but only
// the minimal access ACL (setfacl -m default:...) is checked by its mode
// bits, as HDFS's FSPermissionChecker does ("it's possible that the inode
// has a default ACL but no access ACL"): a member of its group gets the
// group bits, not the other bits.
func TestDefaultOnlyACLUsesModeBits(t *testing.T) {
	tr := newTree()
	alice := Caller{User: "alice", Groups: []string{"alice"}}
	mustMkdir(t, tr, root, "/proj", 0o750)
	if err := tr.SetOwner(root, "/proj", "alice", "eng"); err != nil {
		t.Fatal(err)
	}
	if err := tr.ChangeACL(alice, "/proj", ACLModify, spec(t, "default:user:carol:rwx", true)); err != nil {
		t.Fatal(err)
	}
	n, _ := tr.Lookup("/proj")
	if !tr.HasACL(n) || n.Perm() != 0o750 {
		t.Fatalf("after a default-only ACL: acl %v, mode %o; want an ACL and 750", tr.HasACL(n), n.Perm())
	}
	bob := Caller{User: "bob", Groups: []string{"eng"}}       // in the group: r-x
	mallory := Caller{User: "mallory", Groups: []string{"x"}} // other: ---
	if err := tr.CheckAccess(bob, "/proj", Read|Execute); err != nil {
		t.Fatalf("group member reading a directory with a default-only ACL: %v", err)
	}
	if err := tr.CheckAccess(bob, "/proj", Write); kindOf(err) != Denied {
		t.Fatalf("group member writing (group bits r-x): %v, want denied", err)
	}
	if err := tr.CheckAccess(mallory, "/proj", Read); kindOf(err) != Denied {
		t.Fatalf("other reading (other bits ---): %v, want denied", err)
	}
	// The other way round: other bits wider than the group's must not
	// reach a group member.
	if err := tr.SetPermission(alice, "/proj", 0o705); err != nil {
		t.Fatal(err)
	}
	if err := tr.CheckAccess(bob, "/proj", Read); kindOf(err) != Denied {
		t.Fatalf("group member with group bits --- and other r-x: %v, want denied", err)
	}
	if err := tr.CheckAccess(mallory, "/proj", Read|Execute); err != nil {
		t.Fatalf("other with other bits r-x: %v", err)
	}
}
