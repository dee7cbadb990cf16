package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/client"
	"smarth/internal/client/fsshell"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/testcluster"
)

// replicaFiles counts the finalized replica files of block id on the
// cluster's datanodes.
func replicaFiles(c *testcluster.Cluster, id uint64) int {
	n := 0
	for i := 0; i < c.NumDataNodes(); i++ {
		m, _ := filepath.Glob(filepath.Join(c.DataDir(i), "current", "finalized", fmt.Sprintf("blk_%d", id)))
		n += len(m)
	}
	return n
}

// TestClusterACLs: on a real cluster, a named-user entry lets bob read
// alice's 0600 file, the mask takes it away again, a default ACL reaches
// new files, and all of it survives a namenode restart; getfacl and ls
// print what hdfs dfs prints.
func TestClusterACLs(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 2, BlockSize: 1 << 20})
	ctx := context.Background()
	admin := c.Client(t)
	alice := c.Client(t, testcluster.WithUser("alice"))
	bob := c.Client(t, testcluster.WithUser("bob"))
	if err := admin.Mkdir(ctx, "/home/alice", 0o755, true); err != nil {
		t.Fatal(err)
	}
	if err := admin.SetOwner(ctx, "/home/alice", "alice", ""); err != nil {
		t.Fatal(err)
	}
	secret := []byte("alice's secret\n")
	mustPut(t, alice, "/home/alice/secret", secret, client.CreateOptions{Perm: 0o600})
	if _, err := bob.Open(ctx, "/home/alice/secret"); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("bob opens a 0600 file: %v", err)
	}
	spec, _ := client.ParseACLSpec("user:bob:r--", true)
	if err := bob.ModifyACLEntries(ctx, "/home/alice/secret", spec); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("bob changing alice's ACL: %v", err)
	}
	if err := alice.ModifyACLEntries(ctx, "/home/alice/secret", spec); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, bob, "/home/alice/secret"); !bytes.Equal(got, secret) {
		t.Fatalf("bob reads %q", got)
	}
	// chmod 600 sets the mask to ---: bob is out again.
	if err := alice.SetPermission(ctx, "/home/alice/secret", 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Open(ctx, "/home/alice/secret"); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("bob opens after the mask went to ---: %v", err)
	}
	// A default ACL on a directory reaches the files made in it.
	if err := admin.Mkdir(ctx, "/shared", 0o777, true); err != nil {
		t.Fatal(err)
	}
	if err := admin.SetPermission(ctx, "/shared", 0o777); err != nil {
		t.Fatal(err)
	}
	def, _ := client.ParseACLSpec("default:user:bob:rw-", true)
	if err := admin.ModifyACLEntries(ctx, "/shared", def); err != nil {
		t.Fatal(err)
	}
	// Created 0640 (after the umask): the inherited mask is rw- & r--, so
	// bob's rw- entry is effective r--: he reads, he cannot append.
	mustPut(t, alice, "/shared/report", []byte("q3"), client.CreateOptions{Perm: 0o640})
	if _, err := bob.Append(ctx, "/shared/report", client.AppendOptions{}); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("bob appends through a masked entry: %v", err)
	}

	check := func(when string) {
		t.Helper()
		var out bytes.Buffer
		sh := &fsshell.Shell{FS: alice, Out: &out, Err: &out}
		if err := sh.Getfacl(ctx, []string{"/home/alice/secret"}, false); err != nil {
			t.Fatal(err)
		}
		want := "# file: /home/alice/secret\n# owner: alice\n# group: supergroup\nuser::rw-\nuser:bob:r--\t#effective:---\ngroup::---\nmask::---\nother::---\n\n"
		if out.String() != want {
			t.Fatalf("%s: getfacl\n%s\nwant\n%s", when, out.String(), want)
		}
		out.Reset()
		if err := sh.Ls(ctx, []string{"/home/alice", "/shared"}, fsshell.LsOptions{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "-rw-------+  2 alice") || !strings.Contains(out.String(), "/shared/report") ||
			strings.Count(out.String(), "+  2 alice") != 2 {
			t.Fatalf("%s: ls shows no + for the files with ACLs:\n%s", when, out.String())
		}
		if got := mustRead(t, bob, "/shared/report"); string(got) != "q3" {
			t.Fatalf("%s: /shared/report = %q", when, got)
		}
		st, err := bob.GetACLStatus(ctx, "/shared/report")
		if err != nil || len(st.Entries) != 2 { // user:bob:rw-, group::
			t.Fatalf("%s: inherited ACL %+v %v", when, st, err)
		}
	}
	check("live")
	c.RestartNameNode()
	check("after a namenode restart")
}

// TestClusterSnapshots: a snapshot keeps the old file readable after the
// live one was deleted and rewritten; nothing under .snapshot can be
// written; the old blocks stay on the datanodes until the snapshot goes;
// every snapshot operation survives a namenode restart.
func TestClusterSnapshots(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 2, BlockSize: 1 << 20})
	ctx := context.Background()
	admin := c.Client(t)
	alice := c.Client(t, testcluster.WithUser("alice"))
	if err := admin.Mkdir(ctx, "/proj", 0o755, true); err != nil {
		t.Fatal(err)
	}
	if err := admin.SetOwner(ctx, "/proj", "alice", ""); err != nil {
		t.Fatal(err)
	}
	v1 := data(2<<20+777, 1)
	mustPut(t, alice, "/proj/data/f", v1, client.CreateOptions{Replication: 2})
	if _, err := alice.CreateSnapshot(ctx, "/proj", "s0"); err == nil || !strings.Contains(err.Error(), "not a snapshottable directory") {
		t.Fatalf("snapshot before allowSnapshot: %v", err)
	}
	if err := alice.AllowSnapshot(ctx, "/proj"); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("alice allowing snapshots: %v", err)
	}
	if err := admin.AllowSnapshot(ctx, "/proj"); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sh := &fsshell.Shell{FS: alice, Out: &out, Err: &out}
	if err := sh.CreateSnapshot(ctx, "/proj", "s0"); err != nil || out.String() != "Created snapshot /proj/.snapshot/s0\n" {
		t.Fatalf("createSnapshot: %q %v", out.String(), err)
	}
	locs, err := alice.Namenode().GetBlockLocations(ctx, &dfspb.GetBlockLocationsRequest{Path: "/proj/data/f"})
	if err != nil {
		t.Fatal(err)
	}
	var oldBlocks []uint64
	for _, lb := range locs.GetLocations().GetBlocks() {
		oldBlocks = append(oldBlocks, lb.GetBlock().GetBlockId())
	}
	// Delete and rewrite the live file; the snapshot still has v1.
	if err := alice.Delete(ctx, "/proj/data/f", false); err != nil {
		t.Fatal(err)
	}
	v2 := data(1000, 2)
	mustPut(t, alice, "/proj/data/f", v2, client.CreateOptions{})
	if got := mustRead(t, alice, "/proj/.snapshot/s0/data/f"); !bytes.Equal(got, v1) {
		t.Fatalf("snapshot read: %d bytes, want the %d of v1", len(got), len(v1))
	}
	if got := mustRead(t, alice, "/proj/data/f"); !bytes.Equal(got, v2) {
		t.Fatal("live file is not v2")
	}
	ls, err := alice.List(ctx, "/proj/.snapshot")
	if err != nil || len(ls) != 1 || ls[0].Path != "/proj/.snapshot/s0" {
		t.Fatalf("ls .snapshot: %+v %v", ls, err)
	}
	// Writes under .snapshot fail with HDFS's message, naming the path.
	for name, err := range map[string]error{
		"create": func() error {
			_, err := alice.Create(ctx, "/proj/.snapshot/s0/data/new", client.CreateOptions{})
			return err
		}(),
		"delete": alice.Delete(ctx, "/proj/.snapshot/s0/data/f", false),
		"mkdir":  alice.Mkdir(ctx, "/proj/.snapshot/s0/x", 0o755, false),
		"rename": alice.Rename(ctx, "/proj/.snapshot/s0/data/f", "/proj/g"),
		"append": func() error {
			_, err := alice.Append(ctx, "/proj/.snapshot/s0/data/f", client.AppendOptions{})
			return err
		}(),
	} {
		if err == nil || !strings.Contains(err.Error(), "Modification on a read-only snapshot is disallowed") || !strings.Contains(err.Error(), "/proj/.snapshot/s0") {
			t.Errorf("%s under .snapshot: %v", name, err)
		}
	}
	for _, id := range oldBlocks {
		if n := replicaFiles(c, id); n != 2 {
			t.Fatalf("block %d of the deleted file: %d replicas on disk, want 2 (the snapshot holds it)", id, n)
		}
	}
	if err := admin.Delete(ctx, "/proj", true); err == nil || !strings.Contains(err.Error(), "snapshottable and already has snapshots") {
		t.Fatalf("deleting a directory with snapshots: %v", err)
	}
	if err := admin.DisallowSnapshot(ctx, "/proj"); err == nil {
		t.Fatal("disallowSnapshot with snapshots succeeded")
	}
	if _, err := alice.CreateSnapshot(ctx, "/proj", "s1"); err != nil {
		t.Fatal(err)
	}
	if err := alice.RenameSnapshot(ctx, "/proj", "s1", "later"); err != nil {
		t.Fatal(err)
	}

	c.RestartNameNode()

	if got := mustRead(t, alice, "/proj/.snapshot/s0/data/f"); !bytes.Equal(got, v1) {
		t.Fatal("snapshot s0 after restart differs from v1")
	}
	if got := mustRead(t, alice, "/proj/.snapshot/later/data/f"); !bytes.Equal(got, v2) {
		t.Fatal("snapshot 'later' after restart differs from v2")
	}
	diff, err := alice.SnapshotDiff(ctx, "/proj", "s0", "later")
	// The file was deleted and made anew (a new inode): "-" and "+", as HDFS.
	if err != nil || fmt.Sprint(diff) != "[{M ./data } {+ ./data/f } {- ./data/f }]" {
		t.Fatalf("diff s0..later: %+v %v", diff, err)
	}
	dirs, err := admin.SnapshottableDirs(ctx)
	if err != nil || len(dirs) != 1 || strings.Join(dirs[0].Snapshots, ",") != "later,s0" {
		t.Fatalf("snapshottable dirs: %+v %v", dirs, err)
	}
	if err := alice.DeleteSnapshot(ctx, "/proj", "s0"); err != nil {
		t.Fatal(err)
	}
	c.WaitFor(t, "the deleted file's replicas to be removed from the datanodes", func() bool {
		for _, id := range oldBlocks {
			if replicaFiles(c, id) != 0 {
				return false
			}
		}
		return true
	})
	// v2's blocks are the live file's and snapshot 'later''s: kept.
	if got := mustRead(t, alice, "/proj/data/f"); !bytes.Equal(got, v2) {
		t.Fatal("live file damaged by deleting a snapshot")
	}
	c.RestartNameNode()
	if _, err := alice.Stat(ctx, "/proj/.snapshot/s0"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("deleted snapshot after restart: %v", err)
	}
	if err := alice.DeleteSnapshot(ctx, "/proj", "later"); err != nil {
		t.Fatal(err)
	}
	if err := admin.DisallowSnapshot(ctx, "/proj"); err != nil {
		t.Fatal(err)
	}
}

// TestClusterStoragePolicy: set, inherited, unset, listed; kept across a
// restart.
func TestClusterStoragePolicy(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 1})
	ctx := context.Background()
	f := c.Client(t)
	mustPut(t, f, "/archive/2020/a", []byte("x"), client.CreateOptions{})
	if _, ok, err := f.GetStoragePolicy(ctx, "/archive/2020/a"); ok || err != nil {
		t.Fatalf("policy before any is set: %v %v", ok, err)
	}
	if err := f.SetStoragePolicy(ctx, "/archive", "cold"); err != nil {
		t.Fatal(err)
	}
	if err := f.SetStoragePolicy(ctx, "/archive", "TEPID"); !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf("unknown policy: %v", err)
	}
	check := func(when string) {
		p, ok, err := f.GetStoragePolicy(ctx, "/archive/2020/a")
		if err != nil || !ok || p.Name != "COLD" || p.ID != 2 || strings.Join(p.StorageTypes, ",") != "ARCHIVE" {
			t.Fatalf("%s: inherited policy %+v %v %v", when, p, ok, err)
		}
		st, err := f.Stat(ctx, "/archive/2020/a")
		if err != nil || st.StoragePolicy != 2 {
			t.Fatalf("%s: stat policy %+v %v", when, st, err)
		}
	}
	check("live")
	c.RestartNameNode()
	check("after a restart")
	if err := f.UnsetStoragePolicy(ctx, "/archive"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := f.GetStoragePolicy(ctx, "/archive/2020/a"); ok {
		t.Fatal("policy still set after unset")
	}
	ps, err := f.StoragePolicies(ctx)
	if err != nil || len(ps) != 7 || fsshell.PolicyString(ps[3]) != "BlockStoragePolicy{HOT:7, storageTypes=[DISK], creationFallbacks=[], replicationFallbacks=[ARCHIVE]}" {
		t.Fatalf("policies %+v %v", ps, err)
	}
}
