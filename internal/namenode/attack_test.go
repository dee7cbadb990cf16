package namenode

import (
	"fmt"
	"os/user"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"smarth/internal/auth"
	"smarth/internal/namenode/cachemgr"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/webhdfs"
)

// Hole 2 (issue 23), across a restart: the user who opened a file is part
// of its under-construction state, so it survives a checkpoint (image) and
// edit replay. alice opens /w/created (create, then checkpointed) and
// /w/appended (append, only in the edit log), both 0666 so that write
// permission alone would let bob in; after a restart bob, quoting her
// client name, still cannot complete either, and alice can.
func TestAttackOpenFileWriterSurvivesRestart(t *testing.T) {
	cfg := testConfig(t)
	nn := startNN(t, cfg)
	hdfs, alice := dial(t, nn.Addr(), "hdfs"), dial(t, nn.Addr(), "alice")
	if _, err := hdfs.cp.Mkdirs(hdfs.ctx(), &dfspb.MkdirsRequest{Path: "/w", Permission: 0o777}); err != nil {
		t.Fatal(err)
	}
	if _, err := hdfs.cp.SetPermission(hdfs.ctx(), &dfspb.SetPermissionRequest{Path: "/w", Permission: 0o777}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.cp.Create(alice.ctx(), &dfspb.CreateRequest{Path: "/w/created", ClientName: "alice-c", Replication: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := hdfs.cp.Create(hdfs.ctx(), &dfspb.CreateRequest{Path: "/w/appended", ClientName: "hdfs-c", Replication: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := hdfs.cp.Complete(hdfs.ctx(), &dfspb.CompleteRequest{Path: "/w/appended", ClientName: "hdfs-c"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/w/created", "/w/appended"} {
		if _, err := hdfs.cp.SetPermission(hdfs.ctx(), &dfspb.SetPermissionRequest{Path: p, Permission: 0o666}); err != nil {
			t.Fatal(err)
		}
	}
	if err := nn.checkpoint(); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.cp.Append(alice.ctx(), &dfspb.AppendRequest{Path: "/w/appended", ClientName: "alice-c"}); err != nil {
		t.Fatal(err)
	}
	if err := nn.Close(); err != nil {
		t.Fatal(err)
	}
	nn = startNN(t, cfg)
	bob, alice := dial(t, nn.Addr(), "bob"), dial(t, nn.Addr(), "alice")
	for _, p := range []string{"/w/created", "/w/appended"} {
		_, err := bob.cp.Complete(bob.ctx(), &dfspb.CompleteRequest{Path: p, ClientName: "alice-c"})
		wantErr(t, err, codes.PermissionDenied, "user bob did not open it")
		resp, err := alice.cp.Complete(alice.ctx(), &dfspb.CompleteRequest{Path: p, ClientName: "alice-c"})
		if err != nil || !resp.GetCompleted() {
			t.Fatalf("%s: alice's complete after the restart: %v %v", p, resp, err)
		}
	}
}

// Hole 4 (issue 23), at the RPC door: a redirect token is good only for
// the calls of its operation, on its path, from its datanode's addresses
// (advertised, or registered from); anything else is refused as
// unauthenticated, before any handler runs.
func TestAttackRedirectTokenScopeOnRPC(t *testing.T) {
	nn, secret, dnKey := secureNN(t)
	fc := newFakeCluster(t, nn)
	fc.dnKey = dnKey
	fc.add("dn1", "/r") // advertises 10.0.0.1, registers from 127.0.0.1
	c := dial(t, nn.Addr(), "")
	if _, err := c.cp.Mkdirs(callAs(auth.MDCredential, auth.UserCredential(secret, "hdfs")), &dfspb.MkdirsRequest{Path: "/d", Permission: 0o777}); err != nil {
		t.Fatal(err)
	}
	open := nn.ident.web.IssueRedirect("alice", webhdfs.RedirectScope{Op: "OPEN", Path: "/d", Datanode: "id-dn1"})
	as := callAs(auth.MDCredential, open)
	if _, err := c.cp.GetFileInfo(as, &dfspb.GetFileInfoRequest{Path: "/d"}); err != nil {
		t.Fatalf("the redirect's own call: %v", err)
	}
	_, err := c.cp.GetFileInfo(as, &dfspb.GetFileInfoRequest{Path: "/"})
	wantErr(t, err, codes.Unauthenticated, "issued for OPEN /d, not /")
	_, err = c.cp.Delete(as, &dfspb.DeleteRequest{Path: "/d"})
	wantErr(t, err, codes.Unauthenticated, "makes no Delete call")
	_, err = c.cp.Create(as, &dfspb.CreateRequest{Path: "/d", ClientName: "x"})
	wantErr(t, err, codes.Unauthenticated, "makes no Create call")
	other := nn.ident.web.IssueRedirect("alice", webhdfs.RedirectScope{Op: "OPEN", Path: "/d", Datanode: "id-dn9"})
	_, err = c.cp.GetFileInfo(callAs(auth.MDCredential, other), &dfspb.GetFileInfoRequest{Path: "/d"})
	wantErr(t, err, codes.Unauthenticated, "issued for datanode id-dn9; a call from 127.0.0.1 may not carry it")
	// dn1 on another host: its token is no good from this one.
	nn.mu.Lock()
	nn.nodes["id-dn1"].peer = "10.0.0.1"
	nn.mu.Unlock()
	_, err = c.cp.GetFileInfo(as, &dfspb.GetFileInfoRequest{Path: "/d"})
	wantErr(t, err, codes.Unauthenticated, "issued for datanode id-dn1; a call from 127.0.0.1 may not carry it")
}

// Hole 8 (issue 23): cache RPCs are authorized and bounded. bob may not
// ask to cache (or learn the cache state of) a block of alice's private
// file; neither may end or register jobs' inputs, which is the resource
// manager's (a service identity's) call; and a loop of accesses under new
// app names keeps the namenode's per-app table bounded.
func TestAttackCacheRPCs(t *testing.T) {
	nn, secret, dnKey := secureNN(t)
	fc := newFakeCluster(t, nn)
	fc.dnKey = dnKey
	for i := 1; i <= 3; i++ {
		d := fc.add(fmt.Sprintf("dn%d", i), "/r")
		d.mu.Lock()
		d.cacheCap = 8 << 20
		d.mu.Unlock()
	}
	as := func(user string) *rpcClient {
		c := dial(t, nn.Addr(), "")
		c.md = []string{auth.MDCredential, auth.UserCredential(secret, user)}
		return c
	}
	hdfs, alice, bob := as("hdfs"), as("alice"), as("bob")
	if _, err := hdfs.cp.Mkdirs(hdfs.ctx(), &dfspb.MkdirsRequest{Path: "/home/alice", Permission: 0o700, CreateParent: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := hdfs.cp.SetOwner(hdfs.ctx(), &dfspb.SetOwnerRequest{Path: "/home/alice", Owner: "alice"}); err != nil {
		t.Fatal(err)
	}
	blk := writeFile(t, alice, fc, "/home/alice/f", 3, 1<<20)[0].GetBlock().GetBlockId()

	_, err := bob.cp.CacheAccess(bob.ctx(), &dfspb.CacheAccessRequest{BlockId: blk, App: "grep", Affinity: -1})
	wantErr(t, err, codes.PermissionDenied, "user bob may not read its file")
	if strings.Contains(err.Error(), "/home/alice") {
		t.Errorf("the refusal names alice's path: %v", err)
	}
	for _, c := range []*rpcClient{alice, hdfs} {
		if _, err := c.cp.CacheAccess(c.ctx(), &dfspb.CacheAccessRequest{BlockId: blk, App: "grep", Affinity: -1}); err != nil {
			t.Fatalf("cache access by a reader of the file: %v", err)
		}
	}

	job := []*dfspb.JobCacheStatusRequest_Job{{JobId: "job_alice", App: "grep", BlockIds: []uint64{blk}}}
	if _, err := hdfs.cp.JobCacheStatus(hdfs.ctx(), &dfspb.JobCacheStatusRequest{Jobs: job}); err != nil {
		t.Fatalf("the service registering a job: %v", err)
	}
	end := []*dfspb.JobCacheStatusRequest_Job{{JobId: "job_alice", Finished: true}}
	_, err = bob.cp.JobCacheStatus(bob.ctx(), &dfspb.JobCacheStatusRequest{Jobs: end})
	wantErr(t, err, codes.PermissionDenied, "user bob is not a service user")
	_, err = bob.cp.JobCacheStatus(bob.ctx(), &dfspb.JobCacheStatusRequest{Jobs: []*dfspb.JobCacheStatusRequest_Job{{JobId: "job_bob", BlockIds: make([]uint64, 10000)}}})
	wantErr(t, err, codes.PermissionDenied, "user bob is not a service user")
	st, err := hdfs.cp.GetCacheStats(hdfs.ctx(), &dfspb.GetCacheStatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if jobs := st.GetJobs(); len(jobs) != 1 || jobs[0].GetJobId() != "job_alice" {
		t.Fatalf("jobs after bob's attempts: %v; want job_alice only", jobs)
	}
	// Other users' jobs are not listed to a user: the namenode cannot
	// tell whose a job is, so it lists jobs to the services only.
	if st, err := bob.cp.GetCacheStats(bob.ctx(), &dfspb.GetCacheStatsRequest{}); err != nil || len(st.GetJobs()) != 0 {
		t.Fatalf("bob's cache stats: %v, jobs %v; want no jobs listed to a user", err, st.GetJobs())
	}

	for i := range cachemgr.MaxApps + 100 {
		if _, err := alice.cp.CacheAccess(alice.ctx(), &dfspb.CacheAccessRequest{BlockId: blk, App: fmt.Sprintf("app-%d", i), Affinity: -1}); err != nil {
			t.Fatal(err)
		}
	}
	// The statistics list every app the namenode keeps (none is
	// configured here).
	st, err = hdfs.cp.GetCacheStats(hdfs.ctx(), &dfspb.GetCacheStatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if apps := len(st.GetApps()); apps > cachemgr.MaxApps {
		t.Fatalf("%d apps kept after %d new app names; want at most %d", apps, cachemgr.MaxApps+100, cachemgr.MaxApps)
	}
}

// Hole 9 (issue 23): a user named like the supergroup (or any group) is
// no member of it. The namenode resolved an unknown user's groups as a
// group of their own name, so a credential for "supergroup" was a
// superuser's.
func TestAttackUserNamedLikeSupergroup(t *testing.T) {
	nn, secret, _ := secureNN(t)
	if _, err := user.Lookup(nn.cfg.Supergroup); err == nil {
		t.Skipf("this host has an OS user named %s", nn.cfg.Supergroup)
	}
	c := dial(t, nn.Addr(), "")
	as := callAs(auth.MDCredential, auth.UserCredential(secret, nn.cfg.Supergroup))
	_, err := c.cp.SetSafeMode(as, &dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_ENTER})
	wantErr(t, err, codes.PermissionDenied, "user "+nn.cfg.Supergroup+" is not a superuser")
	_, err = c.cp.SetOwner(as, &dfspb.SetOwnerRequest{Path: "/", Owner: nn.cfg.Supergroup})
	wantErr(t, err, codes.PermissionDenied, "only a superuser")
	if g := nn.ident.groupsOf(nn.cfg.Supergroup); len(g) != 0 {
		t.Fatalf("an unknown user's groups: %v; want none", g)
	}
}
