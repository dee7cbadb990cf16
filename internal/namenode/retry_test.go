package namenode

import (
	"context"
	"os"
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
	ids     [3]callid.ID
	created *dfspb.FileStatus
}

func newLostReplyCalls() *lostReplyCalls {
	src := callid.NewSource()
	return &lostReplyCalls{ids: [3]callid.ID{src.Next(), src.Next(), src.Next()}}
}

// prepare makes what the calls act on (plain calls, no ids) and runs the
// three calls once through c: create /rc/f, delete /rc/gone, rename
// /rc/src to /rc/dst.
func (l *lostReplyCalls) prepare(t *testing.T, c *rpcClient) {
	t.Helper()
	if _, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/rc/gone", CreateParent: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/rc/src"}); err != nil {
		t.Fatal(err)
	}
	r, err := c.cp.Create(withCall(c, l.ids[0]), &dfspb.CreateRequest{Path: "/rc/f", ClientName: "cl", Replication: 1})
	if err != nil {
		t.Fatal(err)
	}
	l.created = r.Status
	if _, err := c.cp.Delete(withCall(c, l.ids[1]), &dfspb.DeleteRequest{Path: "/rc/gone", Recursive: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cp.Rename(withCall(c, l.ids[2]), &dfspb.RenameRequest{Src: "/rc/src", Dst: "/rc/dst"}); err != nil {
		t.Fatal(err)
	}
}

// repeat sends the three calls again with the same ids through c, as a
// client whose replies were lost does, and demands the first outcomes:
// the created file (the same inode, not "already exists"), a delete that
// succeeds (not "not found"), a rename that succeeds; and /rc holds f
// and dst exactly once.
func (l *lostReplyCalls) repeat(t *testing.T, c *rpcClient) {
	t.Helper()
	r, err := c.cp.Create(withCall(c, l.ids[0]), &dfspb.CreateRequest{Path: "/rc/f", ClientName: "cl", Replication: 1})
	if err != nil {
		t.Fatalf("repeated create: %v; want the first create's success", err)
	}
	if r.Status.GetFileId() != l.created.GetFileId() {
		t.Fatalf("repeated create returned file %d; the first made %d", r.Status.GetFileId(), l.created.GetFileId())
	}
	d, err := c.cp.Delete(withCall(c, l.ids[1]), &dfspb.DeleteRequest{Path: "/rc/gone", Recursive: true})
	if err != nil || !d.GetDeleted() {
		t.Fatalf("repeated delete: %v, %v; want true", d, err)
	}
	if _, err := c.cp.Rename(withCall(c, l.ids[2]), &dfspb.RenameRequest{Src: "/rc/src", Dst: "/rc/dst"}); err != nil {
		t.Fatalf("repeated rename: %v; want the first rename's success", err)
	}
	ls, err := c.cp.GetListing(c.ctx(), &dfspb.GetListingRequest{Path: "/rc"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ls.GetEntries() {
		names = append(names, e.GetPath())
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"dst", "f"}) && !slices.Equal(names, []string{"/rc/dst", "/rc/f"}) {
		t.Fatalf("/rc holds %q; want dst and f, once each", names)
	}
	// The same calls with new ids are new calls: the namespace answers.
	fresh := callid.NewSource()
	_, err = c.cp.Create(withCall(c, fresh.Next()), &dfspb.CreateRequest{Path: "/rc/f", ClientName: "cl", Replication: 1})
	wantErr(t, err, codes.AlreadyExists, "")
	_, err = c.cp.Delete(withCall(c, fresh.Next()), &dfspb.DeleteRequest{Path: "/rc/gone"})
	wantErr(t, err, codes.NotFound, "")
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
