package webhdfs_test

import (
	"bytes"
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"smarth/internal/testcluster"
)

// TestRenameOverwrite: RENAME with renameoptions=OVERWRITE replaces the
// destination in one namenode operation (rename2): a reader polling the
// destination never finds it missing, the replaced file's blocks go, the
// errors are rename2's, and the result survives a namenode restart (the
// one journal record replays).
func TestRenameOverwrite(t *testing.T) {
	c, w := startCluster(t, testcluster.Options{DataNodes: 1, Simple: true})
	ctx := context.Background()
	admin := c.Client(t)
	su := "user.name=" + osUser(t)
	put := func(p string, data []byte) {
		t.Helper()
		if r := w.twoStep("PUT", p, "CREATE", data, su, "overwrite=true"); r.code != 201 {
			t.Fatalf("CREATE %s: %d %s", p, r.code, r.body)
		}
	}
	old := randBytes(3<<20 + 1)
	put("/dst", old)

	// Readers of /dst while it is replaced again and again must always
	// find a file.
	var stop atomic.Bool
	var missing atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if _, err := admin.Stat(ctx, "/dst"); err != nil {
				missing.Add(1)
			}
		}
	}()
	var last []byte
	for i := 0; i < 15; i++ {
		last = randBytes(1000 + i)
		put("/src", last)
		if r := w.op("PUT", "/src", "RENAME", su, "destination=/dst", "renameoptions=OVERWRITE"); r.code != 200 {
			t.Fatalf("RENAME OVERWRITE %d: %d %s", i, r.code, r.body)
		}
	}
	stop.Store(true)
	wg.Wait()
	if n := missing.Load(); n > 0 {
		t.Fatalf("/dst was missing %d times while being overwritten by rename", n)
	}
	if r := w.twoStep("GET", "/dst", "OPEN", nil, su); !bytes.Equal(r.body, last) {
		t.Fatalf("after RENAME OVERWRITE /dst holds %d bytes, want the source's %d", len(r.body), len(last))
	}
	w.op("GET", "/src", "GETFILESTATUS", su).remote(t, 404, "FileNotFoundException")
	// The replaced files' blocks left the namespace: the one datanode
	// deletes its replicas, leaving only /dst's block.
	deadline := time.Now().Add(20 * time.Second)
	for {
		n := countBlockFiles(t, c, 0)
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("datanode still holds %d block files after the overwrites, want 1", n)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// rename2's errors.
	put("/src", []byte("x"))
	w.op("PUT", "/src", "RENAME", su, "destination=/dst", "renameoptions=NONE").remote(t, 403, "FileAlreadyExistsException")
	w.op("PUT", "/src", "RENAME", su, "destination=/src", "renameoptions=OVERWRITE").remote(t, 403, "FileAlreadyExistsException")
	w.op("PUT", "/src", "RENAME", su, "destination=/nodir/x", "renameoptions=OVERWRITE").remote(t, 404, "FileNotFoundException")
	w.op("PUT", "/src", "RENAME", su, "destination=/dst/x", "renameoptions=OVERWRITE").remote(t, 403, "ParentNotDirectoryException")
	w.op("PUT", "/gone", "RENAME", su, "destination=/dst", "renameoptions=OVERWRITE").remote(t, 404, "FileNotFoundException")
	w.op("PUT", "/a/b", "MKDIRS", su)
	w.op("PUT", "/e", "MKDIRS", su)
	msg := w.op("PUT", "/src", "RENAME", su, "destination=/a", "renameoptions=OVERWRITE").remote(t, 403, "IOException")
	if !bytes.Contains([]byte(msg), []byte("must both be")) {
		t.Fatalf("file over directory: %q", msg)
	}
	w.op("PUT", "/e", "RENAME", su, "destination=/a", "renameoptions=OVERWRITE").remote(t, 403, "IOException")
	w.op("PUT", "/a", "RENAME", su, "destination=/a/b/c", "renameoptions=OVERWRITE").remote(t, 403, "IOException")
	// An empty directory may be replaced by a directory; NONE into an
	// existing directory does not move into it.
	if r := w.op("PUT", "/a/b", "RENAME", su, "destination=/e", "renameoptions=OVERWRITE"); r.code != 200 {
		t.Fatalf("directory over an empty directory: %d %s", r.code, r.body)
	}
	if _, err := admin.Stat(ctx, "/e"); err != nil {
		t.Fatal(err)
	}
	w.op("PUT", "/src", "RENAME", su, "destination=/a", "renameoptions=NONE").remote(t, 403, "IOException")
	if _, err := admin.Stat(ctx, "/a/src"); err == nil {
		t.Fatal("rename2 moved the file into the existing directory")
	}
	// Permission: bob may not replace root's file.
	w.op("PUT", "/src", "RENAME", "user.name=bob", "destination=/dst", "renameoptions=OVERWRITE").remote(t, 403, "AccessControlException")

	c.RestartNameNode()
	w = newWeb(t, c)
	if r := w.twoStep("GET", "/dst", "OPEN", nil, su); r.code != 200 || !bytes.Equal(r.body, last) {
		t.Fatalf("after a restart /dst holds %d bytes (%d), want the last source's %d", len(r.body), r.code, len(last))
	}
	w.op("GET", "/a/b", "GETFILESTATUS", su).remote(t, 404, "FileNotFoundException")
	if r := w.op("GET", "/e", "GETFILESTATUS", su); r.code != 200 {
		t.Fatalf("/e after a restart: %d %s", r.code, r.body)
	}
}

// TestRenameToTrash: renameoptions=TO_TRASH (Hadoop 3.4's TrashPolicyDefault
// moves with it, so `hadoop fs -rm` over webhdfs:// sends it) is rename2
// plus delete's permission check on the source: bob may move his directory
// elsewhere, but not to the trash while it holds a non-empty directory he
// may not delete; a root-owned file in a world-writable directory he may.
func TestRenameToTrash(t *testing.T) {
	c, w := startCluster(t, testcluster.Options{DataNodes: 1, Simple: true})
	ctx := context.Background()
	admin := c.Client(t)
	su := "user.name=" + osUser(t)
	bob := "user.name=bob"
	w.op("PUT", "/shared/d/locked", "MKDIRS", su)
	w.op("PUT", "/user/bob/.Trash/Current", "MKDIRS", su)
	if r := w.twoStep("PUT", "/shared/d/locked/f", "CREATE", []byte("x"), su); r.code != 201 {
		t.Fatalf("CREATE: %d %s", r.code, r.body)
	}
	if r := w.twoStep("PUT", "/shared/rootfile", "CREATE", []byte("y"), su); r.code != 201 {
		t.Fatalf("CREATE: %d %s", r.code, r.body)
	}
	for p, owner := range map[string]string{"/shared/d": "bob", "/user/bob": "bob", "/user/bob/.Trash": "bob", "/user/bob/.Trash/Current": "bob"} {
		if err := admin.SetOwner(ctx, p, owner, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := admin.SetPermission(ctx, "/shared", 0o777); err != nil {
		t.Fatal(err)
	}

	// Root's directory inside bob's: a recursive delete by bob is refused,
	// and so is the move to the trash; the old check (write on the
	// parent) would let it through.
	w.op("DELETE", "/shared/d", "DELETE", bob, "recursive=true").remote(t, 403, "AccessControlException")
	w.op("PUT", "/shared/d", "RENAME", bob, "destination=/user/bob/.Trash/Current/d", "renameoptions=TO_TRASH").remote(t, 403, "AccessControlException")
	if _, err := admin.Stat(ctx, "/shared/d/locked/f"); err != nil {
		t.Fatalf("the refused trash move lost the file: %v", err)
	}
	// A plain rename needs only write on the parents.
	if r := w.op("PUT", "/shared/d", "RENAME", bob, "destination=/shared/d2", "renameoptions=NONE"); r.code != 200 {
		t.Fatalf("RENAME NONE of bob's directory: %d %s", r.code, r.body)
	}
	// A file, even root's, goes to the trash when its parent is writable.
	if r := w.op("PUT", "/shared/rootfile", "RENAME", bob, "destination=/user/bob/.Trash/Current/rootfile", "renameoptions=TO_TRASH"); r.code != 200 {
		t.Fatalf("RENAME TO_TRASH of a file: %d %s", r.code, r.body)
	}
	if r := w.twoStep("GET", "/user/bob/.Trash/Current/rootfile", "OPEN", nil, su); r.code != 200 || string(r.body) != "y" {
		t.Fatalf("the trashed file: %d %q", r.code, r.body)
	}
	// rename2's rules hold: an existing destination without OVERWRITE.
	if r := w.twoStep("PUT", "/shared/again", "CREATE", []byte("z"), su); r.code != 201 {
		t.Fatalf("CREATE: %d %s", r.code, r.body)
	}
	w.op("PUT", "/shared/again", "RENAME", su, "destination=/user/bob/.Trash/Current/rootfile", "renameoptions=TO_TRASH").remote(t, 403, "FileAlreadyExistsException")
	if r := w.op("PUT", "/shared/again", "RENAME", su, "destination=/user/bob/.Trash/Current/rootfile", "renameoptions=TO_TRASH,OVERWRITE"); r.code != 200 {
		t.Fatalf("RENAME TO_TRASH,OVERWRITE: %d %s", r.code, r.body)
	}
	w.op("PUT", "/shared/d2", "RENAME", su, "destination=/x", "renameoptions=TO_TRAS").remote(t, 400, "IllegalArgumentException")
}

// TestCancelledTokenStaysCancelled: a delegation token cancelled before a
// namenode restart is still refused after it (the cancellation is kept in
// meta_dir), while a token that was not cancelled still works.
func TestCancelledTokenStaysCancelled(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 1})
	w := newWeb(t, c)
	ctx := context.Background()
	admin := c.Client(t)
	if err := admin.Mkdir(ctx, "/user/alice", 0o700, true); err != nil {
		t.Fatal(err)
	}
	if err := admin.SetOwner(ctx, "/user/alice", "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	w.auth = "Bearer " + c.Credential("alice")
	token := func() string {
		return w.op("GET", "/", "GETDELEGATIONTOKEN", "renewer=alice").json(t)["Token"].(map[string]any)["urlString"].(string)
	}
	cancelled, kept := token(), token()
	if r := w.op("PUT", "/", "CANCELDELEGATIONTOKEN", "token="+cancelled); r.code != 200 {
		t.Fatalf("CANCELDELEGATIONTOKEN: %d %s", r.code, r.body)
	}
	w.auth = ""
	list := func(tok string) resp { return w.op("GET", "/user/alice", "LISTSTATUS", "delegation="+tok) }
	list(cancelled).remote(t, 403, "InvalidToken")
	if r := list(kept); r.code != 200 {
		t.Fatalf("the other token before the restart: %d %s", r.code, r.body)
	}

	c.RestartNameNode()
	w = newWeb(t, c)
	list(cancelled).remote(t, 403, "InvalidToken")
	if r := list(kept); r.code != 200 {
		t.Fatalf("the token not cancelled, after the restart: %d %s", r.code, r.body)
	}
	// Nor can the cancelled token be renewed back to life.
	w.auth = "Bearer " + c.Credential("alice")
	w.op("PUT", "/", "RENEWDELEGATIONTOKEN", "token="+cancelled).remote(t, 403, "InvalidToken")
}

// countBlockFiles counts datanode i's block files (blk_N, not the metas).
func countBlockFiles(t *testing.T, c *testcluster.Cluster, i int) int {
	n := 0
	_ = filepath.WalkDir(c.DataDir(i), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "blk_") && !strings.HasSuffix(d.Name(), ".meta") {
			n++
		}
		return nil
	})
	return n
}
