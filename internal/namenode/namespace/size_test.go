package namespace

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"smarth/internal/namenode/blockmap"
)

// TestStructSizes pins the size of what a namespace holds millions of: a
// change that grows them shows here, with what it costs (HDFS's rule of
// thumb is about 150 bytes of heap per file, block and directory).
func TestStructSizes(t *testing.T) {
	if got := unsafe.Sizeof(INode{}); got != 96 {
		t.Errorf("INode is %d bytes; was 96 (a 96-byte size class). Move rarely used fields to features", got)
	}
	if got := unsafe.Sizeof(blockmap.Block{}); got != 80 {
		t.Errorf("blockmap.Block is %d bytes; was 80 (an 80-byte size class)", got)
	}
}

// TestStatusPacking: owner, group, kind and mode survive every change of
// one of them, at the edges of their bit fields.
func TestStatusPacking(t *testing.T) {
	n, err := NewINode(7, "f", false, 0o7777, "alice", "staff", 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, dir bool, perm uint16, owner, group string) {
		t.Helper()
		if n.IsDir() != dir || n.Perm() != perm || n.Owner() != owner || n.Group() != group {
			t.Errorf("%s: dir %v perm %o owner %q group %q; want %v %o %q %q", what, n.IsDir(), n.Perm(), n.Owner(), n.Group(), dir, perm, owner, group)
		}
	}
	check("new", false, 0o7777, "alice", "staff")
	n.SetPerm(0)
	check("chmod 0", false, 0, "alice", "staff")
	n.SetPerm(0o17777) // bits above 07777 are not mode bits and do not reach the dir flag
	check("chmod 017777", false, 0o7777, "alice", "staff")
	if err := n.SetOwner("bob", ""); err != nil {
		t.Fatal(err)
	}
	check("chown bob", false, 0o7777, "bob", "staff")
	if err := n.SetOwner("", "eng"); err != nil {
		t.Fatal(err)
	}
	check("chgrp eng", false, 0o7777, "bob", "eng")
	d, err := NewINode(8, "d", true, 0o1755, "", "supergroup", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !d.IsDir() || d.Perm() != 0o1755 || d.Owner() != "" || d.Group() != "supergroup" {
		t.Errorf("dir: %v %o %q %q", d.IsDir(), d.Perm(), d.Owner(), d.Group())
	}

	n.SetReplication(MaxReplication)
	n.SetBlockSize(MaxBlockSize)
	if n.Replication() != MaxReplication || n.BlockSize() != MaxBlockSize {
		t.Errorf("max: replication %d block size %d", n.Replication(), n.BlockSize())
	}
	n.SetBlockSize(1)
	n.SetReplication(0)
	if n.Replication() != 0 || n.BlockSize() != 1 || n.Perm() != 0o7777 || n.Owner() != "bob" {
		t.Errorf("after setting replication 0 and block size 1: %d %d %o %q", n.Replication(), n.BlockSize(), n.Perm(), n.Owner())
	}
}

// TestManyNames: thousands of distinct owners and groups each read back
// as set, including names that differ in one byte.
func TestManyNames(t *testing.T) {
	before := NumNames()
	var nodes []*INode
	for i := range 5000 {
		n, err := NewINode(uint64(i+2), "f", false, 0o644, fmt.Sprintf("user%d", i), fmt.Sprintf("group%d", i%97), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	for i, n := range nodes {
		if n.Owner() != fmt.Sprintf("user%d", i) || n.Group() != fmt.Sprintf("group%d", i%97) {
			t.Fatalf("inode %d: owner %q group %q", i, n.Owner(), n.Group())
		}
	}
	if got := NumNames() - before; got > 5000+97 {
		t.Errorf("%d new names for 5097 distinct ones", got)
	}
	// The same names again take no new serials.
	count := NumNames()
	again, _ := NewINode(1, "g", false, 0, "user42", "group5", 0, 0)
	if NumNames() != count || again.status>>userShift != nodes[42].status>>userShift ||
		again.status>>groupShift&serialMask != nodes[5].status>>groupShift&serialMask {
		t.Errorf("user42/group5 got new serials")
	}
}

// TestNameTableFull: a full table fails the operation that needs a new
// name, with an error naming the path, and changes nothing.
func TestNameTableFull(t *testing.T) {
	tr := newTree()
	mustMkdir(t, tr, root, "/d", 0o777)
	names.mu.Lock()
	saved := nameLimit
	nameLimit = len(*names.list.Load()) // full as it is
	names.mu.Unlock()
	defer func() {
		names.mu.Lock()
		nameLimit = saved
		names.mu.Unlock()
	}()
	newcomer := Caller{User: "newcomer-never-seen"}
	files := tr.Files()
	if _, _, err := tr.Create(newcomer, "/d/f", CreateOptions{Perm: 0o644}, 5); kindOf(err) != Invalid || err == nil {
		t.Fatalf("create by a new user with a full table: %v", err)
	} else if want := "/d/f"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
	if err := tr.Mkdirs(newcomer, "/d/e", 0o755, 0o755, false, 5); kindOf(err) != Invalid {
		t.Fatalf("mkdir by a new user with a full table: %v", err)
	}
	if err := tr.SetOwner(root, "/d", "another-new-name", ""); kindOf(err) != Invalid {
		t.Fatalf("chown to a new name with a full table: %v", err)
	}
	if n, _ := tr.Lookup("/d"); n.Owner() != root.User || tr.Files() != files || n.NumChildren() != 0 {
		t.Errorf("a refused op changed the tree: owner %q files %d children %d", n.Owner(), tr.Files(), n.NumChildren())
	}
	// Known names still work.
	if _, _, err := tr.Create(root, "/d/ok", CreateOptions{Perm: 0o644}, 5); err != nil {
		t.Fatal(err)
	}
}

// TestRefusedOpsAddNoNames: creates and mkdirs refused for any reason
// (permission, a missing parent, an existing file, a quota, the sticky
// bit) by callers with names never seen leave the name table as it was;
// in simple mode anyone can assert a fresh name per call. A permitted op
// by a new name does add it.
func TestRefusedOpsAddNoNames(t *testing.T) {
	tr := newTree()
	mustMkdir(t, tr, root, "/private", 0o700)
	mustMkdir(t, tr, root, "/tmp", 0o1777)
	mustMkdir(t, tr, root, "/full", 0o777)
	mustCreate(t, tr, root, "/tmp/roots")
	if err := tr.SetQuota(root, "/full", 1, QuotaReset); err != nil {
		t.Fatal(err)
	}
	before := NumNames()
	for i := range 300 {
		c := Caller{User: fmt.Sprintf("stranger%d", i)}
		opts := CreateOptions{Perm: 0o644, Replication: 3, BlockSize: 1 << 20, Writer: Writer{Client: "c"}}
		over := opts
		over.Overwrite = true
		refused := map[string]error{}
		_, _, refused["create in a dir without write"] = tr.Create(c, "/private/f", opts, 5)
		refused["mkdir in a dir without write"] = tr.Mkdirs(c, "/private/d", 0o755, 0o755, true, 5)
		refused["mkdir -p under a dir without write"] = tr.Mkdirs(c, "/private/a/b", 0o755, 0o755, true, 5)
		refused["mkdir with a missing parent"] = tr.Mkdirs(c, "/tmp/no/d", 0o755, 0o755, false, 5)
		_, _, refused["create over a file"] = tr.Create(c, "/tmp/roots", opts, 5)
		_, _, refused["overwrite of another's file in a sticky dir"] = tr.Create(c, "/tmp/roots", over, 5)
		refused["mkdir over the name quota"] = tr.Mkdirs(c, "/full/d", 0o755, 0o755, false, 5)
		_, _, refused["create over the name quota"] = tr.Create(c, "/full/f", opts, 5)
		for what, err := range refused {
			if err == nil {
				t.Fatalf("%s by %s succeeded", what, c.User)
			}
		}
	}
	if got := NumNames(); got != before {
		t.Errorf("2400 refused ops by 300 new names grew the name table from %d to %d", before, got)
	}
	if err := tr.Mkdirs(Caller{User: "newcomer-allowed"}, "/tmp/mine", 0o755, 0o755, false, 5); err != nil {
		t.Fatal(err)
	}
	if n, _ := tr.Lookup("/tmp/mine"); n.Owner() != "newcomer-allowed" || NumNames() != before+1 {
		t.Errorf("a permitted mkdir by a new name: owner %q, table %d -> %d", n.Owner(), before, NumNames())
	}
}
