package namespace

import (
	"errors"
	"strings"
	"testing"
)

var root = Caller{User: "hdfs"}

func newTree() *Tree {
	return New(Config{Superuser: "hdfs", Permissions: true, Now: 1})
}

func mustMkdir(t *testing.T, tr *Tree, c Caller, path string, perm uint16) {
	t.Helper()
	if err := tr.Mkdirs(c, path, perm, 0o755, true, 2); err != nil {
		t.Fatal(err)
	}
}

func mustCreate(t *testing.T, tr *Tree, c Caller, path string) *INode {
	t.Helper()
	f, _, err := tr.Create(c, path, CreateOptions{Perm: 0o644, Replication: 3, BlockSize: 1 << 20, Writer: Writer{Client: "c1"}, CreateParent: true}, 3)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func kindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

func TestPaths(t *testing.T) {
	good := map[string]string{"/": "/", "/a": "/a", "/a/b/": "/a/b", "/a b/c-d_e.f": "/a b/c-d_e.f", "/...": "/...", "/.a": "/.a"}
	for in, want := range good {
		if got, err := Clean(in); err != nil || got != want {
			t.Errorf("Clean(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                             "empty path",
		"a/b":                          "must be absolute",
		"/a//b":                        "empty path component",
		"/a/./b":                       `"."`,
		"/a/../b":                      `".."`,
		"/a:b":                         `contains ":"`,
		"/a\x00b":                      "NUL",
		"/" + strings.Repeat("x", 256): "limit is 255",
	}
	for in, want := range bad {
		_, err := Clean(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Clean(%q) error %v, want it to mention %q", in, err, want)
		}
	}
}

func FuzzComponents(f *testing.F) {
	for _, s := range []string{"/", "/a/b", "a", "//", "/a/../b", "/a:b/", "/\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		names, err := Components(path)
		cleaned, cerr := Clean(path) // checks without building the names
		if (err == nil) != (cerr == nil) || err != nil && err.Error() != cerr.Error() {
			t.Fatalf("%q: Components says %v, Clean says %v", path, err, cerr)
		}
		if err != nil {
			return
		}
		clean := Join(names)
		if cleaned != clean {
			t.Fatalf("%q: Clean gives %q, Join(Components) %q", path, cleaned, clean)
		}
		again, err := Components(clean)
		if err != nil || Join(again) != clean {
			t.Fatalf("%q cleans to %q, which gives %v, %v", path, clean, again, err)
		}
		for _, n := range names {
			if n == "" || n == "." || n == ".." || strings.ContainsAny(n, ":/\x00") {
				t.Fatalf("%q accepted with component %q", path, n)
			}
		}
	})
}

func TestErrorMessages(t *testing.T) {
	tr := newTree()
	mustMkdir(t, tr, root, "/a/b", 0o755)
	mustCreate(t, tr, root, "/a/b/f")
	mustCreate(t, tr, root, "/a/g")
	cases := []struct {
		name string
		err  error
		kind Kind
		msg  string
	}{
		{"path through a file", tr.Mkdirs(root, "/a/b/f/c", 0o755, 0o755, true, 5), NotDirectory, "mkdir /a/b/f/c: /a/b/f is not a directory"},
		{"missing parent", tr.Mkdirs(root, "/x/y", 0o755, 0o755, false, 5), NotFound, "mkdir /x/y: parent directory /x does not exist"},
		{"mkdir over a file", tr.Mkdirs(root, "/a/g", 0o755, 0o755, false, 5), Exists, "mkdir /a/g: file exists (not a directory)"},
		{"create existing", third(tr.Create(root, "/a/g", CreateOptions{}, 5)), Exists, "create /a/g: file exists"},
		{"create over dir", third(tr.Create(root, "/a/b", CreateOptions{Overwrite: true}, 5)), Exists, "create /a/b: is a directory"},
		{"create invalid", third(tr.Create(root, "/a/../b", CreateOptions{}, 5)), Invalid, `create /a/../b: invalid path component ".."`},
		{"delete non-empty", second(tr.Delete(root, "/a", false, 5)), NotEmpty, "delete /a: directory is not empty (2 entries); delete it recursively"},
		{"delete missing", second(tr.Delete(root, "/nope", false, 5)), NotFound, "delete /nope: no such file or directory"},
		{"delete root", second(tr.Delete(root, "/", true, 5)), Invalid, "delete /: cannot delete the root directory"},
		{"stat missing", second(tr.Stat(root, "open", "/a/zz")), NotFound, "open /a/zz: no such file or directory"},
		{"rename onto file", second(tr.Rename(root, "/a/g", "/a/b/f", 5)), Exists, "rename /a/g to /a/b/f: destination /a/b/f exists"},
		{"rename into itself", second(tr.Rename(root, "/a", "/a/b", 5)), Invalid, "rename /a to /a/b: cannot move /a into itself"},
		{"rename missing", second(tr.Rename(root, "/q", "/r", 5)), NotFound, "rename /q to /r: /q: no such file or directory"},
		{"setrep dir", second(tr.SetReplication(root, "/a", 2)), Precondition, "setrep /a: is a directory; replication is set per file"},
	}
	for _, c := range cases {
		if c.err == nil || kindOf(c.err) != c.kind || c.err.Error() != c.msg {
			t.Errorf("%s: got %v (kind %d), want %q (kind %d)", c.name, c.err, kindOf(c.err), c.msg, c.kind)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func TestCreateAndDeleteCounts(t *testing.T) {
	tr := newTree()
	f := mustCreate(t, tr, root, "/a/b/c/file") // create_parent makes a, b, c
	if tr.Dirs() != 4 || tr.Files() != 1 || f.Path() != "/a/b/c/file" || f.Writer().Client != "c1" {
		t.Fatalf("dirs %d files %d path %s", tr.Dirs(), tr.Files(), f.Path())
	}
	if tr.ByID(f.ID) != f {
		t.Error("ByID does not find the new file")
	}
	// Overwrite replaces and returns the old file.
	nf, old, err := tr.Create(root, "/a/b/c/file", CreateOptions{Overwrite: true, Perm: 0o600}, 9)
	if err != nil || old != f || nf.ID == f.ID || tr.ByID(f.ID) != nil || tr.Files() != 1 {
		t.Fatalf("overwrite: %v old=%v", err, old == f)
	}
	files, err := tr.Delete(root, "/a", true, 10)
	if err != nil || len(files) != 1 || files[0] != nf || tr.Dirs() != 1 || tr.Files() != 0 {
		t.Fatalf("delete: %v files=%d dirs=%d", err, len(files), tr.Dirs())
	}
}

func TestRenameSemantics(t *testing.T) {
	tr := newTree()
	mustMkdir(t, tr, root, "/d", 0o755)
	f := mustCreate(t, tr, root, "/f")
	// Destination is a directory: move into it.
	if p, err := tr.Rename(root, "/f", "/d", 4); err != nil || p != "/d/f" || f.Path() != "/d/f" {
		t.Fatalf("rename into dir: %q %v", p, err)
	}
	// New name.
	if p, err := tr.Rename(root, "/d/f", "/g", 4); err != nil || p != "/g" {
		t.Fatalf("rename to new name: %q %v", p, err)
	}
	// Onto itself: no-op.
	if p, err := tr.Rename(root, "/g", "/g", 4); err != nil || p != "/g" {
		t.Fatalf("rename onto itself: %q %v", p, err)
	}
	// Directory with contents moves as a whole.
	mustCreate(t, tr, root, "/d/x/y")
	if _, err := tr.Rename(root, "/d", "/e", 4); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Lookup("/e/x/y"); err != nil {
		t.Fatal(err)
	}
}

func TestPermissions(t *testing.T) {
	tr := newTree()
	alice := Caller{User: "alice", Groups: []string{"alice", "staff"}}
	bob := Caller{User: "bob", Groups: []string{"bob"}}
	// Root is 0755 owned by the superuser: alice cannot write there.
	err := tr.Mkdirs(alice, "/x", 0o755, 0o755, false, 2)
	if kindOf(err) != Denied || !strings.Contains(err.Error(), "user alice needs -wx on / (drwxr-xr-x hdfs supergroup)") {
		t.Fatalf("alice mkdir /x: %v", err)
	}
	mustMkdir(t, tr, root, "/home/alice", 0o755)
	if err := tr.SetOwner(root, "/home/alice", "alice", "staff"); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, tr, alice, "/home/alice/f")
	if f, _ := tr.Lookup("/home/alice/f"); f.Owner() != "alice" || f.Group() != "staff" {
		t.Errorf("new file owner %s group %s; want alice, inherited staff", f.Owner(), f.Group())
	}
	if _, _, err := tr.Create(bob, "/home/alice/g", CreateOptions{}, 3); kindOf(err) != Denied {
		t.Errorf("bob create in alice's dir: %v", err)
	}
	if _, err := tr.Delete(bob, "/home/alice/f", false, 3); kindOf(err) != Denied {
		t.Errorf("bob delete alice's file: %v", err)
	}
	if err := tr.SetPermission(bob, "/home/alice/f", 0o777); kindOf(err) != Denied {
		t.Errorf("bob chmod: %v", err)
	}
	if err := tr.SetOwner(alice, "/home/alice/f", "bob", ""); kindOf(err) != Denied {
		t.Errorf("alice chown to bob: %v", err)
	}
	if err := tr.SetOwner(alice, "/home/alice/f", "", "alice"); err != nil {
		t.Errorf("alice chgrp to her own group: %v", err)
	}
	// No traverse: alice makes her home 0700; bob cannot stat inside.
	if err := tr.SetPermission(alice, "/home/alice", 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Stat(bob, "open", "/home/alice/f"); kindOf(err) != Denied {
		t.Errorf("bob stat through 0700 dir: %v", err)
	}
	if _, _, err := tr.List(bob, "/home/alice", "", 0); kindOf(err) != Denied {
		t.Errorf("bob list 0700 dir: %v", err)
	}
	// Sticky /tmp: bob may create but not delete alice's file.
	mustMkdir(t, tr, root, "/tmp", 0o1777)
	if err := tr.SetPermission(root, "/tmp", 0o1777); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, tr, alice, "/tmp/a")
	mustCreate(t, tr, bob, "/tmp/b")
	if _, err := tr.Delete(bob, "/tmp/a", false, 4); kindOf(err) != Denied || !strings.Contains(err.Error(), "sticky") {
		t.Errorf("bob delete alice's file in sticky /tmp: %v", err)
	}
	if _, err := tr.Rename(bob, "/tmp/a", "/tmp/c", 4); kindOf(err) != Denied {
		t.Errorf("bob rename alice's file in sticky /tmp: %v", err)
	}
	if _, err := tr.Delete(bob, "/tmp/b", false, 4); err != nil {
		t.Errorf("bob delete his own file in /tmp: %v", err)
	}
	// Supergroup members and trusted callers bypass everything.
	admin := Caller{User: "carol", Groups: []string{"supergroup"}}
	if _, err := tr.Delete(admin, "/home/alice", true, 5); err != nil {
		t.Errorf("supergroup member delete: %v", err)
	}
	// Recursive delete needs access to the whole subtree.
	mustMkdir(t, tr, alice, "/tmp/ad/locked", 0o755)
	mustCreate(t, tr, root, "/tmp/ad/locked/x")
	if err := tr.SetOwner(root, "/tmp/ad/locked", "hdfs", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Delete(alice, "/tmp/ad", true, 6); kindOf(err) != Denied {
		t.Errorf("alice recursive delete over a dir she cannot write: %v", err)
	}
	// Permission checks off: anyone may.
	tr.SetPermissions(false)
	if _, err := tr.Delete(bob, "/tmp/ad", true, 7); err != nil {
		t.Errorf("with permissions off: %v", err)
	}
}

func TestListingPages(t *testing.T) {
	tr := newTree()
	for _, n := range []string{"e", "a", "d", "b", "c"} {
		mustCreate(t, tr, root, "/dir/"+n)
	}
	var got []string
	after := ""
	for {
		page, remaining, err := tr.List(root, "/dir", after, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range page {
			got = append(got, n.Name)
		}
		if remaining == 0 {
			break
		}
		after = page[len(page)-1].Name
	}
	if strings.Join(got, "") != "abcde" {
		t.Errorf("pages gave %v", got)
	}
	// start_after a name that no longer exists still continues after it.
	page, rem, _ := tr.List(root, "/dir", "bb", 0)
	if len(page) != 3 || page[0].Name != "c" || rem != 0 {
		t.Errorf("after bb: %d entries from %s, %d remaining", len(page), page[0].Name, rem)
	}
	// Listing a file lists the file.
	page, _, err := tr.List(root, "/dir/a", "", 0)
	if err != nil || len(page) != 1 || page[0].Name != "a" {
		t.Errorf("list of a file: %v %v", page, err)
	}
}

func TestContentSummary(t *testing.T) {
	tr := newTree()
	mustCreate(t, tr, root, "/s/a")
	mustCreate(t, tr, root, "/s/t/b")
	s, err := tr.ContentSummary(root, "/s")
	if err != nil || s.Files != 2 || s.Directories != 2 {
		t.Errorf("summary %+v %v", s, err)
	}
}

func TestModeString(t *testing.T) {
	cases := map[string]*INode{
		"drwxr-xr-x": {status: packStatus(true, 0o755, 0, 0)},
		"-rw-r-----": {status: packStatus(false, 0o640, 0, 0)},
		"drwxrwxrwt": {status: packStatus(true, 0o1777, 0, 0)},
		"drwxrwxrwT": {status: packStatus(true, 0o1776, 0, 0)},
	}
	for want, n := range cases {
		if got := ModeString(n); got != want {
			t.Errorf("ModeString(%o) = %s, want %s", n.Perm(), got, want)
		}
	}
}

func TestRestoreRebuildsTree(t *testing.T) {
	tr := newTree()
	mustCreate(t, tr, root, "/a/b/f")
	mustMkdir(t, tr, root, "/c", 0o700)
	cp := New(Config{Superuser: "hdfs", Permissions: true})
	var err error
	tr.Walk(func(n *INode) bool {
		c := *n
		var pid uint64
		if n.Parent != nil {
			pid = n.Parent.ID
		}
		if e := cp.Restore(pid, &c); e != nil {
			err = e
		}
		return err == nil
	})
	cp.SetLastID(tr.LastID())
	if err != nil {
		t.Fatal(err)
	}
	if dumpTree(cp) != dumpTree(tr) || cp.LastID() != tr.LastID() || cp.Files() != 1 || cp.Dirs() != 4 {
		t.Errorf("restored:\n%s\noriginal:\n%s", dumpTree(cp), dumpTree(tr))
	}
	if err := cp.Restore(999, &INode{ID: 50, Name: "x"}); err == nil {
		t.Error("Restore under a missing parent succeeded")
	}
}

func third[T, U any](_ T, _ U, err error) error { return err }
