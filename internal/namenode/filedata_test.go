package namenode

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"

	"smarth/internal/rpc/dfspb"
)

func fileInfo(t *testing.T, c *rpcClient, path string) *dfspb.FileStatus {
	t.Helper()
	fi, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	return fi.GetStatus()
}

func waitClosed(t *testing.T, c *rpcClient, path string) {
	t.Helper()
	waitFor(t, path+" closed", func() bool {
		fi, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: path})
		return err == nil && !fi.GetStatus().GetUnderConstruction()
	})
}

// TestAppendTruncateConcatSurviveRestarts drives the three operations
// over RPC against fake datanodes, then restarts the namenode from its
// edit log and from a checkpoint image: the namespace (blocks, stamps,
// lengths, writers) is the same each time. A truncate whose recovery
// never ran before the restart is carried out after it.
func TestAppendTruncateConcatSurviveRestarts(t *testing.T) {
	cfg := testConfig(t)
	bs := cfg.BlockSize
	nn := startNN(t, cfg)
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 3; i++ {
		fc.add(fmt.Sprintf("dn%d", i), "/r")
	}
	c := dial(t, nn.Addr(), "hdfs")

	// Append to a partial last block: the writer gets the block with its
	// holders, bumps its stamp and the replicas grow.
	writeFile(t, c, fc, "/d/a", 3, bs, 1000)
	ar, err := c.cp.Append(c.ctx(), &dfspb.AppendRequest{Path: "/d/a", ClientName: "app"})
	if err != nil {
		t.Fatal(err)
	}
	lb := ar.GetLastBlock()
	if lb.GetBlock().GetNumBytes() != 1000 || lb.GetOffset() != bs || len(lb.GetLocations()) != 3 || ar.GetPrevious() != nil || !ar.GetStatus().GetUnderConstruction() {
		t.Fatalf("append response: %v", ar)
	}
	_, err = c.cp.Append(c.ctx(), &dfspb.AppendRequest{Path: "/d/a", ClientName: "other"})
	wantErr(t, err, codes.FailedPrecondition, "append /d/a: failed for client other because this file lease is currently owned by app")
	up, err := c.cp.UpdateBlockForPipeline(c.ctx(), &dfspb.UpdateBlockForPipelineRequest{Block: lb.GetBlock(), ClientName: "app", Nodes: ids(lb)})
	if err != nil {
		t.Fatal(err)
	}
	grown := &dfspb.ExtendedBlock{BlockId: lb.Block.BlockId, GenerationStamp: up.Block.Block.GenerationStamp, NumBytes: 1500}
	if _, err := c.cp.UpdatePipeline(c.ctx(), &dfspb.UpdatePipelineRequest{ClientName: "app", OldBlock: lb.GetBlock(),
		NewBlock: &dfspb.ExtendedBlock{BlockId: grown.BlockId, GenerationStamp: grown.GenerationStamp, NumBytes: 1000}, NewNodes: ids(lb)}); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids(lb) {
		fc.node(id).receive(grown, dfspb.ReplicaState_FINALIZED)
	}
	if r, err := c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: "/d/a", ClientName: "app", FileId: ar.Status.FileId, Last: grown}); err != nil || !r.GetCompleted() {
		t.Fatalf("complete after append: %v %v", r, err)
	}
	if st := fileInfo(t, c, "/d/a"); st.GetLength() != bs+1500 || st.GetUnderConstruction() {
		t.Fatalf("/d/a after append: %v", st)
	}

	// A full last block: nothing to continue; the previous block is named.
	writeFile(t, c, fc, "/d/b", 3, bs)
	ar, err = c.cp.Append(c.ctx(), &dfspb.AppendRequest{Path: "/d/b", ClientName: "app"})
	if err != nil || ar.GetLastBlock() != nil || ar.GetPrevious().GetNumBytes() != bs {
		t.Fatalf("append to a full block: %v %v", ar, err)
	}
	if r, err := c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: "/d/b", ClientName: "app", FileId: ar.Status.FileId, Last: ar.Previous}); err != nil || !r.GetCompleted() {
		t.Fatalf("complete an append of nothing: %v %v", r, err)
	}

	// Truncates: on a boundary, and inside a block.
	writeFile(t, c, fc, "/d/c", 3, bs, bs, 10)
	if r, err := c.cp.Truncate(c.ctx(), &dfspb.TruncateRequest{Path: "/d/c", NewLength: bs, ClientName: "tr"}); err != nil || !r.GetReady() {
		t.Fatalf("truncate on a boundary: %v %v", r, err)
	}
	e := writeFile(t, c, fc, "/d/e", 3, bs, bs)
	if r, err := c.cp.Truncate(c.ctx(), &dfspb.TruncateRequest{Path: "/d/e", NewLength: bs + 100, ClientName: "tr"}); err != nil || r.GetReady() {
		t.Fatalf("truncate inside a block: %v %v", r, err)
	}
	waitClosed(t, c, "/d/e")
	if st := fileInfo(t, c, "/d/e"); st.GetLength() != bs+100 {
		t.Fatalf("/d/e after truncate: %v", st)
	}
	for _, id := range fc.holders(e[1].Block.BlockId) {
		rep := fc.node(id).snapshot()
		for _, r := range rep {
			if r.Block.BlockId == e[1].Block.BlockId && (r.Block.NumBytes != 100 || r.Block.GenerationStamp <= e[1].Block.GenerationStamp) {
				t.Errorf("replica on %s after truncate recovery: %v", id, r.Block)
			}
		}
	}
	_, err = c.cp.Truncate(c.ctx(), &dfspb.TruncateRequest{Path: "/d/e", NewLength: bs + 101, ClientName: "tr"})
	wantErr(t, err, codes.InvalidArgument, "truncate /d/e: Cannot truncate to a larger file size. Current size: 1048676, truncate size: 1048677.")

	// Concat.
	writeFile(t, c, fc, "/d/t", 3, bs)
	writeFile(t, c, fc, "/d/s1", 3, bs)
	writeFile(t, c, fc, "/d/s2", 3, 20)
	if _, err := c.cp.Concat(c.ctx(), &dfspb.ConcatRequest{Target: "/d/t", Srcs: []string{"/d/s1", "/d/s2"}}); err != nil {
		t.Fatal(err)
	}
	if st := fileInfo(t, c, "/d/t"); st.GetLength() != 2*bs+20 {
		t.Fatalf("/d/t after concat: %v", st)
	}

	// A truncate whose recovery cannot run: the datanodes stop
	// heartbeating (the namenode still counts them live for a moment).
	writeFile(t, c, fc, "/d/p", 3, bs, 50) // no block is longer than the block size
	for i := 1; i <= 3; i++ {
		fc.node(fmt.Sprintf("id-dn%d", i)).kill()
	}
	if r, err := c.cp.Truncate(c.ctx(), &dfspb.TruncateRequest{Path: "/d/p", NewLength: 10, ClientName: "tr"}); err != nil || r.GetReady() {
		t.Fatalf("truncate with recovery pending: %v %v", r, err)
	}
	_, err = c.cp.Append(c.ctx(), &dfspb.AppendRequest{Path: "/d/p", ClientName: "app"})
	wantErr(t, err, codes.Unavailable, "append /d/p: the file is being truncated")
	// A repeat of the truncate in progress (a client whose reply was lost
	// repeats truncate, @Idempotent, maybe on a new active) is "not
	// ready" and changes nothing; another length is refused.
	pending := dumpState(nn)
	if r, err := c.cp.Truncate(c.ctx(), &dfspb.TruncateRequest{Path: "/d/p", NewLength: 10, ClientName: "tr"}); err != nil || r.GetReady() {
		t.Fatalf("repeated truncate with recovery pending: %v %v; want not ready", r, err)
	}
	if now := dumpState(nn); now != pending {
		t.Fatalf("a repeated truncate changed the namespace\nbefore:\n%s\nafter:\n%s", pending, now)
	}
	_, err = c.cp.Truncate(c.ctx(), &dfspb.TruncateRequest{Path: "/d/p", NewLength: 11, ClientName: "tr"})
	wantErr(t, err, codes.Unavailable, "truncate /d/p: the file is being truncated")
	mallory := dial(t, nn.Addr(), "mallory")
	_, err = mallory.cp.Truncate(mallory.ctx(), &dfspb.TruncateRequest{Path: "/d/p", NewLength: 10, ClientName: "m"})
	wantErr(t, err, codes.PermissionDenied, "")

	before := dumpState(nn)
	if err := nn.Close(); err != nil {
		t.Fatal(err)
	}
	nn2 := startNN(t, cfg)
	if after := dumpState(nn2); after != before {
		t.Fatalf("namespace changed across a restart from the edit log\nbefore:\n%s\nafter:\n%s", before, after)
	}
	fc2 := newFakeCluster(t, nn2)
	for i := 1; i <= 3; i++ {
		old := fc.node(fmt.Sprintf("id-dn%d", i))
		fc2.addWith(old.info.Hostname, "/r", old.snapshot())
	}
	c2 := dial(t, nn2.Addr(), "hdfs")
	waitClosed(t, c2, "/d/p")
	if st := fileInfo(t, c2, "/d/p"); st.GetLength() != 10 {
		t.Fatalf("/d/p after the truncate finished behind a restart: %v", st)
	}
	if err := nn2.checkpoint(); err != nil {
		t.Fatal(err)
	}
	before = dumpState(nn2)
	if err := nn2.Close(); err != nil {
		t.Fatal(err)
	}
	nn3 := startNN(t, cfg)
	if after := dumpState(nn3); after != before {
		t.Fatalf("namespace changed across a restart from the image\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
