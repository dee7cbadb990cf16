package namenode

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"smarth/internal/rpc/dfspb"
)

func TestNamespaceOverRPC(t *testing.T) {
	nn := startNN(t, testConfig(t))
	c := dial(t, nn.Addr(), "hdfs")
	cp := c.cp
	if _, err := cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/a/b", CreateParent: true}); err != nil {
		t.Fatal(err)
	}
	cr, err := cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/a/b/f", ClientName: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	st := cr.GetStatus()
	if st.GetPath() != "/a/b/f" || !st.GetUnderConstruction() || st.GetReplication() != 3 || st.GetBlockSize() != 1<<20 || st.GetPermission() != 0o644 || st.GetOwner() != "hdfs" {
		t.Errorf("created %+v", st)
	}
	_, err = cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/a/b/f", ClientName: "c2"})
	wantErr(t, err, codes.AlreadyExists, "create /a/b/f: file exists")
	_, err = cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/a/b/f/g", CreateParent: true})
	wantErr(t, err, codes.FailedPrecondition, "mkdir /a/b/f/g: /a/b/f is not a directory")
	_, err = cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: "/nope"})
	wantErr(t, err, codes.NotFound, "stat /nope: no such file or directory")
	_, err = cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/a/x:y", ClientName: "c1"})
	wantErr(t, err, codes.InvalidArgument, `create /a/x:y: invalid path component "x:y": contains ":"`)
	_, err = cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/q/f", ClientName: "c1"})
	wantErr(t, err, codes.NotFound, "create /q/f: parent directory /q does not exist")
	_, err = cp.Delete(c.ctx(), &dfspb.DeleteRequest{Path: "/a"})
	wantErr(t, err, codes.FailedPrecondition, "delete /a: directory is not empty")
	_, err = cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/a/g", ClientName: ""})
	wantErr(t, err, codes.InvalidArgument, "client_name is required")

	// Complete an empty file; it is no longer under construction.
	if r, err := cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: "/a/b/f", ClientName: "c1", FileId: st.GetFileId()}); err != nil || !r.GetCompleted() {
		t.Fatalf("complete: %v %v", r, err)
	}
	// A retried complete is fine.
	if r, err := cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: "/a/b/f", ClientName: "c1", FileId: st.GetFileId()}); err != nil || !r.GetCompleted() {
		t.Fatalf("retried complete: %v %v", r, err)
	}
	fi, err := cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: "/a/b/f"})
	if err != nil || fi.GetStatus().GetUnderConstruction() {
		t.Fatalf("stat after complete: %v %v", fi, err)
	}
	// to_trash, like overwrite, is an option of rename2 only.
	_, err = cp.Rename(c.ctx(), &dfspb.RenameRequest{Src: "/a/b/f", Dst: "/a/t", ToTrash: true})
	wantErr(t, err, codes.InvalidArgument, "overwrite and to_trash are options of rename2 only")
	// Rename into a directory, list, summary, delete.
	if _, err := cp.Rename(c.ctx(), &dfspb.RenameRequest{Src: "/a/b/f", Dst: "/a"}); err != nil {
		t.Fatal(err)
	}
	ls, err := cp.GetListing(c.ctx(), &dfspb.GetListingRequest{Path: "/a"})
	if err != nil || len(ls.GetEntries()) != 2 || ls.GetEntries()[0].GetPath() != "/a/b" || ls.GetEntries()[1].GetPath() != "/a/f" {
		t.Fatalf("listing %v %v", ls, err)
	}
	cs, err := cp.GetContentSummary(c.ctx(), &dfspb.GetContentSummaryRequest{Path: "/a"})
	if err != nil || cs.GetFileCount() != 1 || cs.GetDirectoryCount() != 2 {
		t.Fatalf("summary %v %v", cs, err)
	}
	if _, err := cp.Delete(c.ctx(), &dfspb.DeleteRequest{Path: "/a", Recursive: true}); err != nil {
		t.Fatal(err)
	}
	_, err = cp.Delete(c.ctx(), &dfspb.DeleteRequest{Path: "/a"})
	wantErr(t, err, codes.NotFound, "delete /a: no such file or directory")
	// setrep bounds, chmod, chown.
	cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/r", ClientName: "c1"})
	_, err = cp.SetReplication(c.ctx(), &dfspb.SetReplicationRequest{Path: "/r", Replication: 0})
	wantErr(t, err, codes.InvalidArgument, "setrep /r: replication 0 is outside [1, 512]")
	if _, err := cp.SetPermission(c.ctx(), &dfspb.SetPermissionRequest{Path: "/r", Permission: 0o600}); err != nil {
		t.Fatal(err)
	}
	if _, err := cp.SetOwner(c.ctx(), &dfspb.SetOwnerRequest{Path: "/r", Owner: "alice", Group: "staff"}); err != nil {
		t.Fatal(err)
	}
	fi, _ = cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: "/r"})
	if fi.GetStatus().GetPermission() != 0o600 || fi.GetStatus().GetOwner() != "alice" || fi.GetStatus().GetGroup() != "staff" {
		t.Errorf("after chmod/chown: %+v", fi.GetStatus())
	}
}

func TestPermissionsOverRPC(t *testing.T) {
	nn := startNN(t, testConfig(t))
	admin := dial(t, nn.Addr(), "hdfs")
	alice := dial(t, nn.Addr(), "alice")
	anon := dial(t, nn.Addr(), "") // no smarth-user: acts as "smarth"
	_, err := alice.cp.Mkdirs(alice.ctx(), &dfspb.MkdirsRequest{Path: "/x"})
	wantErr(t, err, codes.PermissionDenied, "mkdir /x: permission denied: user alice needs -wx on / (drwxr-xr-x hdfs supergroup)")
	if _, err := admin.cp.Mkdirs(admin.ctx(), &dfspb.MkdirsRequest{Path: "/user/alice", CreateParent: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.cp.SetOwner(admin.ctx(), &dfspb.SetOwnerRequest{Path: "/user/alice", Owner: "alice"}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.cp.Create(alice.ctx(), &dfspb.CreateRequest{Path: "/user/alice/f", ClientName: "ca", Permission: 0o777}); err != nil {
		t.Fatal(err)
	}
	fi, _ := alice.cp.GetFileInfo(alice.ctx(), &dfspb.GetFileInfoRequest{Path: "/user/alice/f"})
	if fi.GetStatus().GetPermission() != 0o755 {
		t.Errorf("mode %o; want 0755 after umask 022", fi.GetStatus().GetPermission())
	}
	_, err = anon.cp.Delete(anon.ctx(), &dfspb.DeleteRequest{Path: "/user/alice/f"})
	wantErr(t, err, codes.PermissionDenied, "user smarth needs -wx on /user/alice")
	_, err = alice.cp.SetSafeMode(alice.ctx(), &dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_ENTER})
	wantErr(t, err, codes.PermissionDenied, "safemode: user alice is not a superuser")
}

func TestWriteAndReadPath(t *testing.T) {
	nn := startNN(t, testConfig(t))
	fc := newFakeCluster(t, nn)
	for _, h := range []string{"dn1", "dn2", "dn3"} {
		fc.add(h, "/rack-a")
	}
	for _, h := range []string{"dn4", "dn5", "dn6"} {
		fc.add(h, "/rack-b")
	}
	c := dial(t, nn.Addr(), "hdfs")
	cr, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/f", ClientName: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	fid := cr.GetStatus().GetFileId()
	// Client on dn2's host: first replica local, the other two on rack-b.
	ab, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/f", ClientName: "c1", FileId: fid, ClientHost: "dn2"})
	if err != nil {
		t.Fatal(err)
	}
	b1 := ab.GetBlock()
	got := ids(b1)
	if len(got) != 3 || got[0] != "id-dn2" || !strings.HasPrefix(b1.GetLocations()[1].GetRack(), "/rack-b") || b1.GetLocations()[1].GetRack() != b1.GetLocations()[2].GetRack() {
		t.Fatalf("targets %v racks %v", got, b1.GetLocations())
	}
	if b1.GetOffset() != 0 || b1.GetBlock().GetBlockId() == 0 {
		t.Errorf("block %+v", b1)
	}
	// Pipeline writes 1 MiB; all three finalize.
	full := &dfspb.ExtendedBlock{BlockId: b1.Block.BlockId, GenerationStamp: b1.Block.GenerationStamp, NumBytes: 1 << 20}
	for _, id := range got {
		fc.node(id).receive(full, dfspb.ReplicaState_FINALIZED)
	}
	ab2, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/f", ClientName: "c1", FileId: fid, Previous: full, ClientHost: "dn2"})
	if err != nil {
		t.Fatal(err)
	}
	if ab2.GetBlock().GetOffset() != 1<<20 {
		t.Errorf("second block offset %d", ab2.GetBlock().GetOffset())
	}
	// While written, a reader sees the first block and the open last one.
	lbs, err := c.cp.GetBlockLocations(c.ctx(), &dfspb.GetBlockLocationsRequest{Path: "/f", ClientHost: "dn5"})
	if err != nil {
		t.Fatal(err)
	}
	l := lbs.GetLocations()
	if !l.GetUnderConstruction() || l.GetFileLength() != 1<<20 || len(l.GetBlocks()) != 2 || l.GetLastBlock() == nil || l.GetLastBlockComplete() {
		t.Fatalf("locations while writing: %+v", l)
	}
	// Sorted for a client on dn5: dn5 (same host) or its rack first, dn2 last.
	if r := ids(l.GetBlocks()[0]); r[2] != "id-dn2" {
		t.Errorf("read order for dn5: %v", r)
	}
	// Last block: 100 bytes on two of three; complete waits for one (min_replication 1).
	b2 := &dfspb.ExtendedBlock{BlockId: ab2.Block.Block.BlockId, GenerationStamp: ab2.Block.Block.GenerationStamp, NumBytes: 100}
	r, err := c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: "/f", ClientName: "c1", FileId: fid, Last: b2})
	if err != nil || r.GetCompleted() {
		t.Fatalf("complete before any replica: %v %v", r, err)
	}
	fc.node(ids(ab2.GetBlock())[0]).receive(b2, dfspb.ReplicaState_FINALIZED)
	r, err = c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: "/f", ClientName: "c1", FileId: fid, Last: b2})
	if err != nil || !r.GetCompleted() {
		t.Fatalf("complete with a replica: %v %v", r, err)
	}
	fi, _ := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: "/f"})
	if fi.GetStatus().GetLength() != 1<<20+100 || fi.GetStatus().GetUnderConstruction() {
		t.Errorf("closed file %+v", fi.GetStatus())
	}
	// The second block was short of replicas: the monitor copies it.
	waitFor(t, "block 2 re-replicated to 3 nodes", func() bool {
		n := 0
		for _, id := range []string{"id-dn1", "id-dn2", "id-dn3", "id-dn4", "id-dn5", "id-dn6"} {
			if fc.node(id).has(b2.BlockId) {
				n++
			}
		}
		return n == 3
	})
	// fsck sees a healthy file.
	fs, err := c.cp.Fsck(c.ctx(), &dfspb.FsckRequest{Path: "/"})
	if err != nil || !fs.GetHealthy() || fs.GetTotalBlocks() != 2 || len(fs.GetFiles()) != 1 {
		t.Fatalf("fsck %v %v", fs, err)
	}
	// Writing to a closed file is refused.
	_, err = c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/f", ClientName: "c1", FileId: fid, Previous: b2})
	wantErr(t, err, codes.FailedPrecondition, "file is not open for writing")
	// Delete: replicas are invalidated on the datanodes.
	if _, err := c.cp.Delete(c.ctx(), &dfspb.DeleteRequest{Path: "/f"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "replicas of the deleted file removed", func() bool {
		for _, id := range []string{"id-dn1", "id-dn2", "id-dn3", "id-dn4", "id-dn5", "id-dn6"} {
			if fc.node(id).has(b1.Block.BlockId) || fc.node(id).has(b2.BlockId) {
				return false
			}
		}
		return true
	})
}

func TestNotEnoughDatanodes(t *testing.T) {
	nn := startNN(t, testConfig(t))
	c := dial(t, nn.Addr(), "hdfs")
	cr, _ := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/f", ClientName: "c1"})
	_, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/f", ClientName: "c1", FileId: cr.GetStatus().GetFileId()})
	wantErr(t, err, codes.ResourceExhausted, "addBlock /f: could only be written to 0 of the 1 required datanodes: no live datanodes (0 live, 0 excluded, 0 busy)")
	fc := newFakeCluster(t, nn)
	fc.add("dn1", "/r")
	fc.add("dn2", "/r")
	_, err = c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/f", ClientName: "c1", FileId: cr.GetStatus().GetFileId(), ExcludeNodes: []string{"id-dn1"}, BusyNodes: []string{"id-dn2"}})
	wantErr(t, err, codes.ResourceExhausted, "every live datanode is excluded or busy in another pipeline of this client (2 live, 1 excluded, 1 busy)")
	// Fewer datanodes than the replication factor: two targets, a write, and
	// the block stays under-replicated.
	ab, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/f", ClientName: "c1", FileId: cr.GetStatus().GetFileId()})
	if err != nil || len(ab.GetBlock().GetLocations()) != 2 {
		t.Fatalf("addBlock with 2 nodes: %v %v", ab, err)
	}
	// Busy nodes are never chosen.
	cr2, _ := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/g", ClientName: "c1"})
	ab2, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/g", ClientName: "c1", FileId: cr2.GetStatus().GetFileId(), BusyNodes: []string{"id-dn1"}})
	if err != nil || !slices.Equal(ids(ab2.GetBlock()), []string{"id-dn2"}) {
		t.Fatalf("addBlock with dn1 busy: %v %v", ab2, err)
	}
}

func TestStatusPageAndMetrics(t *testing.T) {
	nn := startNN(t, testConfig(t))
	fc := newFakeCluster(t, nn)
	fc.add("dn1", "/rack-a")
	c := dial(t, nn.Addr(), "hdfs")
	c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/d"})
	c.cp.ClientHeartbeat(c.ctx(), &dfspb.ClientHeartbeatRequest{ClientName: "c9", Samples: []*dfspb.SpeedSample{{DatanodeId: "id-dn1", Bytes: 64 << 20, Nanos: 1e9}}})
	get := func(path string) string {
		resp, err := http.Get("http://" + nn.HTTPAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	page := get("/")
	for _, want := range []string{"/rack-a", "dn1", "Safe mode is off", "67.1", "67.1 MB/s (n=1)"} {
		if !strings.Contains(page, want) {
			t.Errorf("status page lacks %q", want)
		}
	}
	m := get("/metrics")
	for _, want := range []string{`smarth_namenode_directories 2`, `smarth_namenode_datanodes{state="live"} 1`,
		`smarth_namenode_rpc_total{code="OK",method="Mkdirs"} 1`, "smarth_namenode_edit_log_sync_seconds_count", "smarth_namenode_safe_mode 0",
		"smarth_namenode_under_replicated_blocks 0"} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestReadOrderForAClientOnARack(t *testing.T) {
	cfg := testConfig(t)
	cfg.Racks = map[string]string{"dn1": "/a", "dn2": "/b", "dn3": "/b", "laptop": "/a"}
	nn := startNN(t, cfg)
	fc := newFakeCluster(t, nn)
	for _, h := range []string{"dn1", "dn2", "dn3"} {
		fc.add(h, "/ignored") // the namenode's racks map wins
	}
	c := dial(t, nn.Addr(), "hdfs")
	writeFile(t, c, fc, "/f", 3, 10)
	// Complete needs one reported replica; the other two reports may
	// still be on their way (they were, under -race).
	waitFor(t, "the namenode to know all 3 replicas", func() bool {
		lbs, _ := c.cp.GetBlockLocations(c.ctx(), &dfspb.GetBlockLocationsRequest{Path: "/f"})
		return len(lbs.GetLocations().GetBlocks()) == 1 && len(lbs.GetLocations().GetBlocks()[0].GetLocations()) == 3
	})
	for i := 0; i < 10; i++ {
		lbs, err := c.cp.GetBlockLocations(c.ctx(), &dfspb.GetBlockLocationsRequest{Path: "/f", ClientHost: "laptop"})
		if err != nil {
			t.Fatal(err)
		}
		if first := lbs.GetLocations().GetBlocks()[0].GetLocations()[0]; first.GetId() != "id-dn1" || first.GetRack() != "/a" {
			t.Fatalf("a client on rack /a reads first from %s (%s); want dn1 on /a", first.GetId(), first.GetRack())
		}
	}
}
