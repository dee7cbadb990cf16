package namenode

import (
	"testing"

	"google.golang.org/grpc/codes"

	"smarth/internal/rpc/dfspb"
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

// An append record written before the appending user was kept (it ends
// after the time) still decodes, with no user.
func TestAppendRecordWithoutUserDecodes(t *testing.T) {
	o := &editOp{Kind: opAppend, Path: "/f", Client: "c", Host: "h", Now: 5}
	b := o.encode()
	old := b[:len(b)-1] // the empty user's length byte
	got, err := decodeOp(old)
	if err != nil || got.User != "" || got.Client != "c" || got.Now != 5 {
		t.Fatalf("old append record: %+v, %v", got, err)
	}
}
