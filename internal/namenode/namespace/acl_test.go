package namespace

import (
	"strings"
	"testing"
)

func spec(t *testing.T, s string, perm bool) []ACLEntry {
	t.Helper()
	e, err := ParseACLSpec(s, perm)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func aclLines(tr *Tree, path string) string {
	n, err := tr.Lookup(path)
	if err != nil {
		return err.Error()
	}
	return strings.Join(ACLString(n.Perm(), tr.StoredACL(n)), ",")
}

// TestACLTransformations: the five operations give the ACLs HDFS's
// AclTransformation gives (mask computed, kept, recalculated; defaults
// completed from the access ACL; validation messages).
func TestACLTransformations(t *testing.T) {
	tr := newTree()
	alice := Caller{User: "alice", Groups: []string{"staff"}}
	mustMkdir(t, tr, root, "/d", 0o777)
	mustMkdir(t, tr, alice, "/d/a", 0o750)
	steps := []struct {
		kind ACLOp
		spec string
		want string // full ACL after, or an error fragment
	}{
		{ACLModify, "user:bob:rwx", "user::rwx,user:bob:rwx,group::r-x,mask::rwx,other::---"},
		{ACLModify, "mask::r--", "user::rwx,user:bob:rwx\t#effective:r--,group::r-x\t#effective:r--,mask::r--,other::---"},
		// a later change to the group class recalculates the mask
		{ACLModify, "group:eng:r-x", "user::rwx,user:bob:rwx,group::r-x,group:eng:r-x,mask::rwx,other::---"},
		{ACLRemoveEntries, "user:bob", "user::rwx,group::r-x,group:eng:r-x,mask::r-x,other::---"},
		{ACLRemoveEntries, "mask::", "mask is required and cannot be deleted if ACL contains named entries"},
		{ACLModify, "default:user:carol:rw-", "user::rwx,group::r-x,group:eng:r-x,mask::r-x,other::---,default:user::rwx,default:user:carol:rw-,default:group::r-x,default:mask::rwx,default:other::---"},
		{ACLRemoveDefault, "", "user::rwx,group::r-x,group:eng:r-x,mask::r-x,other::---"},
		// removing the last named entry keeps the (recalculated) mask, as HDFS
		{ACLRemoveEntries, "group:eng", "user::rwx,group::r-x,mask::r-x,other::---"},
		{ACLSet, "user::rw-,group::r--,other::r--", "user::rw-,group::r--,other::r--"},
		{ACLSet, "user::rwx,user:bob:r--,user:bob:rw-,group::---,other::---", "duplicate"},
		{ACLSet, "user:bob:r--,group::---,other::---", "the user, group and other entries are required"},
		{ACLModify, "user:bob:r-x", "user::rw-,user:bob:r-x,group::r--,mask::r-x,other::r--"},
		{ACLRemoveAll, "", "user::rw-,group::r--,other::r--"},
	}
	for i, s := range steps {
		var sp []ACLEntry
		if s.spec != "" {
			sp = spec(t, s.spec, s.kind != ACLRemoveEntries)
		}
		err := tr.ChangeACL(alice, "/d/a", s.kind, sp)
		got := aclLines(tr, "/d/a")
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, s.want) {
			t.Fatalf("step %d %s %q:\n got %q\nwant %q", i, s.kind, s.spec, got, s.want)
		}
	}
	n, _ := tr.Lookup("/d/a")
	if tr.HasACL(n) || n.Perm() != 0o644 {
		t.Fatalf("after removeAcl: acl %v, mode %o; want none and 644 (group:: again, not the mask)", tr.HasACL(n), n.Perm())
	}
	// Only the owner (or a superuser) changes ACLs; files take no default ACL.
	if err := tr.ChangeACL(Caller{User: "bob"}, "/d/a", ACLModify, spec(t, "user:bob:rwx", true)); kindOf(err) != Denied {
		t.Fatalf("bob changing alice's ACL: %v", err)
	}
	if err := tr.SetPermission(alice, "/d/a", 0o750); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, tr, alice, "/d/a/f")
	if err := tr.ChangeACL(alice, "/d/a/f", ACLModify, spec(t, "default:user:bob:rwx", true)); err == nil || !strings.Contains(err.Error(), "only directories may have a default ACL") {
		t.Fatalf("default ACL on a file: %v", err)
	}
	// chmod on an inode with an ACL changes the mask.
	if err := tr.ChangeACL(alice, "/d/a/f", ACLModify, spec(t, "user:bob:rw-", true)); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetPermission(alice, "/d/a/f", 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := aclLines(tr, "/d/a/f"), "user::rw-,user:bob:rw-\t#effective:---,group::r--\t#effective:---,mask::---,other::---"; got != want {
		t.Fatalf("after chmod 600:\n got %q\nwant %q", got, want)
	}
}

// TestACLPermissionChecks: named users and groups, masked; a matching
// group entry that does not grant the access denies rather than falling
// through to other; the owner class ignores the ACL.
func TestACLPermissionChecks(t *testing.T) {
	tr := newTree()
	alice := Caller{User: "alice", Groups: []string{"alice"}}
	bob := Caller{User: "bob", Groups: []string{"bob"}}
	carol := Caller{User: "carol", Groups: []string{"eng"}}
	dave := Caller{User: "dave", Groups: []string{"sales", "eng2"}}
	eve := Caller{User: "eve", Groups: []string{"other"}}
	mustMkdir(t, tr, root, "/p", 0o777)
	mustMkdir(t, tr, alice, "/p/d", 0o700)
	mustCreate(t, tr, alice, "/p/d/f")
	readable := func(c Caller) bool { _, err := tr.Open(c, "/p/d/f"); return err == nil }
	if readable(bob) {
		t.Fatal("bob reads through 0700")
	}
	for _, s := range []struct{ path, spec string }{
		{"/p/d", "user:bob:r-x,group:eng:--x,group:sales:--x,other::--x"},
		{"/p/d/f", "user:bob:r--,group:eng:---,group:sales:r--,other::r--"},
	} {
		if err := tr.ChangeACL(alice, s.path, ACLModify, spec(t, s.spec, true)); err != nil {
			t.Fatal(err)
		}
	}
	if !readable(bob) || !readable(dave) || !readable(eve) {
		t.Fatalf("bob %v dave %v eve %v should read", readable(bob), readable(dave), readable(eve))
	}
	if readable(carol) {
		t.Fatal("carol's group entry grants nothing and must deny, though other may read")
	}
	if _, _, err := tr.List(bob, "/p/d", "", 0); err != nil {
		t.Fatalf("bob lists via user:bob:r-x: %v", err)
	}
	if _, _, err := tr.List(carol, "/p/d", "", 0); kindOf(err) != Denied {
		t.Fatalf("carol lists with --x: %v", err)
	}
	// The mask limits named entries: bob loses read when the mask drops it.
	if err := tr.ChangeACL(alice, "/p/d/f", ACLModify, spec(t, "mask::---", true)); err != nil {
		t.Fatal(err)
	}
	if readable(bob) || readable(dave) || !readable(eve) {
		t.Fatalf("with mask::--- bob %v dave %v (want false) eve %v (want true)", readable(bob), readable(dave), readable(eve))
	}
	// Writes: a named user entry with w lets bob create in the directory.
	if err := tr.ChangeACL(alice, "/p/d", ACLModify, spec(t, "user:bob:rwx", true)); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, tr, bob, "/p/d/bobs")
	if err := tr.Mkdirs(carol, "/p/d/x", 0o755, 0o755, false, 5); kindOf(err) != Denied {
		t.Fatalf("carol mkdir: %v", err)
	}
}

// TestDefaultACLInheritance: new children copy the parent's default ACL
// into their access ACL, directories also as their default ACL; the mode
// (after the umask) filters owner, mask and other, so files lose execute.
func TestDefaultACLInheritance(t *testing.T) {
	tr := newTree()
	alice := Caller{User: "alice"}
	mustMkdir(t, tr, root, "/shared", 0o777)
	if err := tr.SetOwner(root, "/shared", "alice", ""); err != nil {
		t.Fatal(err)
	}
	if err := tr.ChangeACL(alice, "/shared", ACLModify, spec(t, "default:user:bob:rwx,default:group::r-x,default:other::r-x", true)); err != nil {
		t.Fatal(err)
	}
	// A file created 0644 (0666 under umask 022).
	mustCreate(t, tr, alice, "/shared/f")
	if got, want := aclLines(tr, "/shared/f"), "user::rw-,user:bob:rwx\t#effective:r--,group::r-x\t#effective:r--,mask::r--,other::r--"; got != want {
		t.Fatalf("file:\n got %q\nwant %q", got, want)
	}
	// A directory created 0755 keeps the default ACL and passes it on,
	// also to parents made on the way (mkdir -p).
	mustMkdir(t, tr, alice, "/shared/a/b", 0o755)
	for _, p := range []string{"/shared/a", "/shared/a/b"} {
		want := "user::rwx,user:bob:rwx\t#effective:r-x,group::r-x,mask::r-x,other::r-x,default:user::rwx,default:user:bob:rwx,default:group::r-x,default:mask::rwx,default:other::r-x"
		if got := aclLines(tr, p); got != want {
			t.Fatalf("%s:\n got %q\nwant %q", p, got, want)
		}
	}
	// A parent whose default ACL is minimal gives no ACL, only the mode.
	mustMkdir(t, tr, alice, "/shared/m", 0o777)
	if err := tr.ChangeACL(alice, "/shared/m", ACLSet, spec(t, "user::rwx,group::rwx,other::rwx,default:user::rwx,default:group::r--,default:other::---", true)); err != nil {
		t.Fatal(err)
	}
	f := mustCreate(t, tr, alice, "/shared/m/g")
	if tr.HasACL(f) || f.Perm() != 0o640 {
		t.Fatalf("child of a minimal default ACL: acl %v mode %o, want none and 640", tr.HasACL(f), f.Perm())
	}
	// Without a default ACL, nothing is inherited.
	f = mustCreate(t, tr, alice, "/shared/a2/plain")
	if p, _ := tr.Lookup("/shared/a2"); !tr.HasACL(p) {
		t.Fatal("a parent made by create -p inherits the default ACL")
	}
	_ = f
	mustMkdir(t, tr, root, "/none", 0o777)
	if g := mustCreate(t, tr, alice, "/none/h"); tr.HasACL(g) || g.Perm() != 0o644 {
		t.Fatalf("no default ACL: %v %o", tr.HasACL(g), g.Perm())
	}
	// Deleting inodes drops their ACLs from the side map.
	if _, err := tr.Delete(root, "/shared", true, 9); err != nil {
		t.Fatal(err)
	}
	if len(tr.acls) != 0 {
		t.Fatalf("%d ACLs left after deleting every inode that had one", len(tr.acls))
	}
}

func TestParseACLSpec(t *testing.T) {
	got, err := ParseACLSpec("user::rwx,default:group:eng:r-x,mask::r--,other::---", true)
	if err != nil || len(got) != 4 || got[1] != (ACLEntry{Scope: ScopeDefault, Type: ACLGroup, Name: "eng", Perm: 5}) {
		t.Fatalf("%+v %v", got, err)
	}
	for _, bad := range []string{"", "bogus::rwx", "user:bob", "user:bob:rwz", "mask:m:r--", "user:bob:rwx:x"} {
		if _, err := ParseACLSpec(bad, true); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if got, err := ParseACLSpec("user:bob,default:mask::", false); err != nil || len(got) != 2 {
		t.Fatalf("-x spec: %+v %v", got, err)
	}
}
