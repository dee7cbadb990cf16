package namenode

import (
	"context"
	"fmt"
	"os"
	"path"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"smarth/internal/rpc/callid"
	"smarth/internal/rpc/dfspb"
)

// withCall is c's context carrying the ids of one client call.
func withCall(c *rpcClient, id callid.ID) context.Context {
	return metadata.AppendToOutgoingContext(c.ctx(), callid.Key, id.Encode())
}

// lostReplyCalls are the at-most-once calls of the retry tests: each
// one's first attempt and its repeat.
type lostReplyCalls struct {
	ids      map[string]callid.ID // by call, as named in prepare
	created  *dfspb.FileStatus
	snapshot string // the path of the snapshot made with the default name
	dirID    int64  // the directive kept
}

func newLostReplyCalls() *lostReplyCalls {
	src := callid.NewSource()
	l := &lostReplyCalls{ids: map[string]callid.ID{}}
	for _, name := range []string{"create", "delete", "rename", "createSnapshot", "createSnapshotS1", "renameSnapshot",
		"createSnapshotS3", "deleteSnapshot", "addCachePool", "addCachePoolGone", "removeCachePool",
		"addCacheDirective", "addCacheDirectiveGone", "removeCacheDirective"} {
		l.ids[name] = src.Next()
	}
	return l
}

// run sends the calls through c, each with its ids: create /rc/f, delete
// /rc/gone, rename /rc/src to /rc/dst; snapshots of /snap (one with the
// default name, s1 renamed s2, s3 deleted); cache pools (rcpool kept,
// gonepool removed) and directives (one kept, one removed). It returns
// the first error, naming the call; a repeat (first false) must give
// the first outcomes.
func (l *lostReplyCalls) run(c *rpcClient, first bool) error {
	call := func(name string) context.Context { return withCall(c, l.ids[name]) }
	r, err := c.cp.Create(call("create"), &dfspb.CreateRequest{Path: "/rc/f", ClientName: "cl", Replication: 1})
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if first {
		l.created = r.Status
	} else if r.Status.GetFileId() != l.created.GetFileId() {
		return fmt.Errorf("create returned file %d; the first made %d", r.Status.GetFileId(), l.created.GetFileId())
	}
	if d, err := c.cp.Delete(call("delete"), &dfspb.DeleteRequest{Path: "/rc/gone", Recursive: true}); err != nil || !d.GetDeleted() {
		return fmt.Errorf("delete: %v, %w; want true", d, err)
	}
	if _, err := c.cp.Rename(call("rename"), &dfspb.RenameRequest{Src: "/rc/src", Dst: "/rc/dst"}); err != nil {
		return fmt.Errorf("rename: %w", err)
	}
	cs, err := c.cp.CreateSnapshot(call("createSnapshot"), &dfspb.CreateSnapshotRequest{SnapshotRoot: "/snap"})
	if err != nil {
		return fmt.Errorf("createSnapshot: %w", err)
	}
	if first {
		l.snapshot = cs.GetSnapshotPath()
	} else if cs.GetSnapshotPath() != l.snapshot {
		return fmt.Errorf("createSnapshot made %s; the first made %s", cs.GetSnapshotPath(), l.snapshot)
	}
	for _, s := range []struct {
		name string
		fn   func(context.Context) error
	}{
		{"createSnapshotS1", func(ctx context.Context) error {
			_, err := c.cp.CreateSnapshot(ctx, &dfspb.CreateSnapshotRequest{SnapshotRoot: "/snap", SnapshotName: "s1"})
			return err
		}},
		{"renameSnapshot", func(ctx context.Context) error {
			_, err := c.cp.RenameSnapshot(ctx, &dfspb.RenameSnapshotRequest{SnapshotRoot: "/snap", SnapshotOldName: "s1", SnapshotNewName: "s2"})
			return err
		}},
		{"createSnapshotS3", func(ctx context.Context) error {
			_, err := c.cp.CreateSnapshot(ctx, &dfspb.CreateSnapshotRequest{SnapshotRoot: "/snap", SnapshotName: "s3"})
			return err
		}},
		{"deleteSnapshot", func(ctx context.Context) error {
			_, err := c.cp.DeleteSnapshot(ctx, &dfspb.DeleteSnapshotRequest{SnapshotRoot: "/snap", SnapshotName: "s3"})
			return err
		}},
		{"addCachePool", func(ctx context.Context) error {
			_, err := c.cp.AddCachePool(ctx, &dfspb.AddCachePoolRequest{Pool: &dfspb.CachePoolInfo{Name: "rcpool"}})
			return err
		}},
		{"addCachePoolGone", func(ctx context.Context) error {
			_, err := c.cp.AddCachePool(ctx, &dfspb.AddCachePoolRequest{Pool: &dfspb.CachePoolInfo{Name: "gonepool"}})
			return err
		}},
		{"removeCachePool", func(ctx context.Context) error {
			_, err := c.cp.RemoveCachePool(ctx, &dfspb.RemoveCachePoolRequest{Name: "gonepool"})
			return err
		}},
	} {
		if err := s.fn(call(s.name)); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	dirs := map[string]int64{}
	for _, name := range []string{"addCacheDirective", "addCacheDirectiveGone"} {
		r, err := c.cp.AddCacheDirective(call(name), &dfspb.AddCacheDirectiveRequest{Directive: &dfspb.CacheDirectiveInfo{Path: "/rc/dst", Pool: "rcpool"}})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		dirs[name] = r.GetId()
	}
	if first {
		l.dirID = dirs["addCacheDirective"]
	} else if dirs["addCacheDirective"] != l.dirID {
		return fmt.Errorf("addCacheDirective returned directive %d; the first made %d", dirs["addCacheDirective"], l.dirID)
	}
	if _, err := c.cp.RemoveCacheDirective(call("removeCacheDirective"), &dfspb.RemoveCacheDirectiveRequest{Id: dirs["addCacheDirectiveGone"]}); err != nil {
		return fmt.Errorf("removeCacheDirective %d: %w", dirs["addCacheDirectiveGone"], err)
	}
	return nil
}

// prepare makes what the calls act on (plain calls, no ids) and runs
// them once through c.
func (l *lostReplyCalls) prepare(t *testing.T, c *rpcClient) {
	t.Helper()
	for _, p := range []string{"/rc/gone", "/rc/src", "/snap"} {
		if _, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: p, CreateParent: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.cp.AllowSnapshot(c.ctx(), &dfspb.AllowSnapshotRequest{SnapshotRoot: "/snap"}); err != nil {
		t.Fatal(err)
	}
	if err := l.run(c, true); err != nil {
		t.Fatal(err)
	}
}

// repeat sends the calls again with the same ids through c, as a client
// whose replies were lost does, and demands the first outcomes: the
// created file (the same inode, not "already exists"), a delete that
// succeeds (not "not found"), a rename that succeeds, the same default
// snapshot path and directive id, and no "already exists" or "does not
// exist"; and that each call's effect is there exactly once.
func (l *lostReplyCalls) repeat(t *testing.T, c *rpcClient) {
	t.Helper()
	if err := l.run(c, false); err != nil {
		t.Fatalf("repeated %v; want the first call's outcome", err)
	}
	if got := listing(t, c, "/rc"); !slices.Equal(got, []string{"dst", "f"}) {
		t.Fatalf("/rc holds %q; want dst and f, once each", got)
	}
	want := []string{path.Base(l.snapshot), "s2"}
	slices.Sort(want)
	if got := listing(t, c, "/snap/.snapshot"); !slices.Equal(got, want) {
		t.Fatalf("/snap/.snapshot holds %q; want %q", got, want)
	}
	pools, err := c.cp.ListCachePools(c.ctx(), &dfspb.ListCachePoolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pools.GetPools()) != 1 || pools.GetPools()[0].GetName() != "rcpool" {
		t.Fatalf("cache pools %v; want rcpool alone", pools.GetPools())
	}
	ds, err := c.cp.ListCacheDirectives(c.ctx(), &dfspb.ListCacheDirectivesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.GetDirectives()) != 1 || ds.GetDirectives()[0].GetId() != l.dirID {
		t.Fatalf("cache directives %v; want %d alone", ds.GetDirectives(), l.dirID)
	}
	// The same calls with new ids are new calls: the namespace answers.
	fresh := callid.NewSource()
	_, err = c.cp.Create(withCall(c, fresh.Next()), &dfspb.CreateRequest{Path: "/rc/f", ClientName: "cl", Replication: 1})
	wantErr(t, err, codes.AlreadyExists, "")
	_, err = c.cp.Delete(withCall(c, fresh.Next()), &dfspb.DeleteRequest{Path: "/rc/gone"})
	wantErr(t, err, codes.NotFound, "")
	_, err = c.cp.AddCachePool(withCall(c, fresh.Next()), &dfspb.AddCachePoolRequest{Pool: &dfspb.CachePoolInfo{Name: "rcpool"}})
	wantErr(t, err, codes.AlreadyExists, "")
}

// listing is the sorted names in dir.
func listing(t *testing.T, c *rpcClient, dir string) []string {
	t.Helper()
	ls, err := c.cp.GetListing(c.ctx(), &dfspb.GetListingRequest{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ls.GetEntries() {
		names = append(names, path.Base(e.GetPath()))
	}
	slices.Sort(names)
	return names
}

// TestRetryCacheAcrossFailover: the active applies a create, a delete
// and a rename and is then closed, as if it died before its replies
// reached the client; the client repeats the calls with the same ids on
// the new active, which answers each with the first outcome from the
// retry cache it rebuilt from the replicated log.
func TestRetryCacheAcrossFailover(t *testing.T) {
	g := startHAGroup(t, 3)
	l := g.active(nil)
	calls := newLostReplyCalls()
	calls.prepare(t, g.cli[l])
	waitFor(t, "every member to have applied the rename", func() bool {
		for i := range g.nns {
			if !g.has(i, "/rc/dst") {
				return false
			}
		}
		return true
	})
	if err := g.nns[l].Close(); err != nil {
		t.Logf("close of the old active: %v", err)
	}
	nl := g.active(map[int]bool{l: true})
	calls.repeat(t, g.cli[nl])
}

// TestRetryCacheAcrossCrash: a single namenode rebuilds the cache from
// its edit log at start. The crash is a copy of meta_dir taken while the
// namenode runs (what kill -9 leaves: the acknowledged edits, no image
// of them), started as a namenode of its own.
func TestRetryCacheAcrossCrash(t *testing.T) {
	cfg := testConfig(t)
	nn := startNN(t, cfg)
	calls := newLostReplyCalls()
	calls.prepare(t, dial(t, nn.Addr(), "hdfs"))
	crashed := cfg
	crashed.MetaDir = t.TempDir()
	if err := os.CopyFS(crashed.MetaDir, os.DirFS(cfg.MetaDir)); err != nil {
		t.Fatal(err)
	}
	nn2 := startNN(t, crashed)
	calls.repeat(t, dial(t, nn2.Addr(), "hdfs"))
}

// TestRetryCacheIsPerUser: another user sending alice's ids does not get
// her outcome: the call runs for it and the namespace answers.
func TestRetryCacheIsPerUser(t *testing.T) {
	nn := startNN(t, testConfig(t))
	admin, alice, mallory := dial(t, nn.Addr(), "hdfs"), dial(t, nn.Addr(), "alice"), dial(t, nn.Addr(), "mallory")
	if _, err := admin.cp.Mkdirs(admin.ctx(), &dfspb.MkdirsRequest{Path: "/home/alice", CreateParent: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.cp.SetOwner(admin.ctx(), &dfspb.SetOwnerRequest{Path: "/home/alice", Owner: "alice"}); err != nil {
		t.Fatal(err)
	}
	id := callid.NewSource().Next()
	if _, err := alice.cp.Create(withCall(alice, id), &dfspb.CreateRequest{Path: "/home/alice/secret", ClientName: "a", Replication: 1}); err != nil {
		t.Fatal(err)
	}
	// The namespace answers mallory (the file exists), not the cache.
	_, err := mallory.cp.Create(withCall(mallory, id), &dfspb.CreateRequest{Path: "/home/alice/secret", ClientName: "m", Replication: 1})
	wantErr(t, err, codes.AlreadyExists, "")
	if _, err := alice.cp.Create(withCall(alice, id), &dfspb.CreateRequest{Path: "/home/alice/secret", ClientName: "a", Replication: 1}); err != nil {
		t.Fatalf("alice's own repeat after mallory's: %v", err)
	}
	// Ids reused on another method are refused, not answered with the
	// first method's reply.
	_, err = alice.cp.Delete(withCall(alice, id), &dfspb.DeleteRequest{Path: "/home/alice/secret"})
	wantErr(t, err, codes.InvalidArgument, "already used")
	// A malformed id is refused, naming the key.
	bad := metadata.AppendToOutgoingContext(alice.ctx(), callid.Key, "short")
	_, err = alice.cp.Delete(bad, &dfspb.DeleteRequest{Path: "/home/alice/secret"})
	wantErr(t, err, codes.InvalidArgument, callid.Key)
}
