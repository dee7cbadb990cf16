package namespace

import (
	"strings"
	"testing"
)

// TestXAttrs: HDFS's namespaces (user by the permission bits, trusted for
// superusers, the rest for nobody), flags, limits and messages.
func TestXAttrs(t *testing.T) {
	tr := New(Config{Superuser: "hdfs", Permissions: true, MaxXAttrsPerInode: 2, MaxXAttrSize: 20})
	alice, bob := Caller{User: "alice"}, Caller{User: "bob"}
	mustMkdir(t, tr, root, "/home", 0o777)
	mustCreate(t, tr, alice, "/home/f")
	if err := tr.SetXAttr(alice, "/home/f", "User.color", []byte("red"), XAttrCreate); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		err  error
		kind Kind
		msg  string
	}{
		{tr.SetXAttr(alice, "/home/f", "user.color", []byte("blue"), XAttrCreate), Precondition, "XAttr: user.color already exists. The REPLACE flag must be specified."},
		{tr.SetXAttr(alice, "/home/f", "user.size", []byte("1"), XAttrReplace), Precondition, "XAttr: user.size does not exist. The CREATE flag must be specified."},
		{tr.SetXAttr(alice, "/home/f", "color", []byte("1"), XAttrCreate), Invalid, "must be prefixed with user/trusted/security/system/raw"},
		{tr.SetXAttr(alice, "/home/f", "trusted.x", []byte("1"), XAttrCreate), Denied, "User doesn't have permission for xattr: trusted.x"},
		{tr.SetXAttr(root, "/home/f", "system.x", []byte("1"), XAttrCreate), Denied, "User doesn't have permission for xattr: system.x"}, // even a superuser
		{tr.SetXAttr(alice, "/home/f", "user.big", []byte(strings.Repeat("v", 20)), XAttrCreate), Invalid, "The XAttr is too big. The maximum combined size of the name and value is 20, but the total size is 28"},
		{tr.SetXAttr(bob, "/home/f", "user.b", []byte("1"), XAttrCreate), Denied, "permission denied"},
		{tr.SetXAttr(alice, "/home/f", "user.s", nil, XAttrCreate), 0, ""},
		{tr.SetXAttr(alice, "/home/f", "user.t", nil, XAttrCreate), Invalid, "Cannot add additional XAttr to inode, would exceed limit of 2"},
		{tr.RemoveXAttr(alice, "/home/f", "user.none"), Precondition, "No matching attributes found for remove operation"},
	}
	for i, c := range cases {
		if kindOf(c.err) != c.kind || (c.msg != "" && !strings.Contains(c.err.Error(), c.msg)) {
			t.Errorf("case %d: %v; want kind %d with %q", i, c.err, c.kind, c.msg)
		}
	}
	// bob may read user attributes (0644) but not trusted ones; the
	// superuser sees trusted ones too; system ones are nobody's.
	if err := tr.RemoveXAttr(alice, "/home/f", "user.s"); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetXAttr(root, "/home/f", "trusted.t", []byte("x"), XAttrCreate|XAttrReplace); err != nil {
		t.Fatal(err)
	}
	got, err := tr.GetXAttrs(bob, "/home/f", nil)
	if err != nil || len(got) != 1 || got[0].Name != "user.color" || string(got[0].Value) != "red" {
		t.Fatalf("bob's view: %v %v", got, err)
	}
	if _, err := tr.GetXAttrs(bob, "/home/f", []string{"trusted.t"}); kindOf(err) != Denied {
		t.Fatalf("bob reading a trusted attribute: %v", err)
	}
	if _, err := tr.GetXAttrs(bob, "/home/f", []string{"user.nope"}); kindOf(err) != Precondition || !strings.Contains(err.Error(), "At least one of the attributes provided was not found.") {
		t.Fatalf("a missing attribute: %v", err)
	}
	names, err := tr.ListXAttrs(root, "/home/f")
	if err != nil || strings.Join(names, ",") != "trusted.t,user.color" {
		t.Fatalf("the superuser lists %v %v", names, err)
	}
	if err := tr.RemoveXAttr(alice, "/home/f", "USER.color"); err != nil {
		t.Fatal(err)
	}
}
