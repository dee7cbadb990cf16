package namenode

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"smarth/internal/rpc/dfspb"
)

// TestCopyOnTruncateSync: a truncate inside a block a snapshot holds gives
// the file a new last block (new id) and sends a recovery that copies the
// snapshot's block; the commit must name the new block with the truncate's
// length: a commit of the snapshot's block, another length or a deletion
// is refused, and the right one closes the file while the snapshot keeps
// the old block as it was.
func TestCopyOnTruncateSync(t *testing.T) {
	cfg := testConfig(t)
	nn := startNN(t, cfg)
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 3; i++ {
		fc.add(fmt.Sprintf("dn%d", i), "/r")
	}
	c := dial(t, nn.Addr(), "hdfs")
	bs := cfg.BlockSize
	lbs := writeFile(t, c, fc, "/t/f", 3, bs, 500)
	if _, err := c.cp.AllowSnapshot(c.ctx(), &dfspb.AllowSnapshotRequest{SnapshotRoot: "/t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.cp.CreateSnapshot(c.ctx(), &dfspb.CreateSnapshotRequest{SnapshotRoot: "/t", SnapshotName: "s1"}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		fc.node(fmt.Sprintf("id-dn%d", i)).kill()
	}
	old := lbs[0].GetBlock()
	if r, err := c.cp.Truncate(c.ctx(), &dfspb.TruncateRequest{Path: "/t/f", NewLength: 100, ClientName: "tr"}); err != nil || r.GetReady() {
		t.Fatalf("truncate inside a snapshotted block: %v %v", r, err)
	}
	nn.mu.RLock()
	f, _ := nn.state.tree.Lookup("/t/f")
	nb := f.Blocks[len(f.Blocks)-1]
	newID, recID, src := nb.ID, nb.RecoveryID(), nn.state.blocks.Get(old.GetBlockId())
	var cmd *dfspb.RecoverBlockCommand
	for _, dn := range nn.nodes {
		for _, r := range dn.recoveries {
			cmd = r
		}
	}
	nn.mu.RUnlock()
	switch {
	case len(f.Blocks) != 1 || newID == old.GetBlockId() || recID == 0:
		t.Fatalf("after the truncate: %d blocks, last %d (old %d), recovery %d", len(f.Blocks), newID, old.GetBlockId(), recID)
	case src == nil || src.GS != old.GetGenerationStamp() || src.NumBytes != bs:
		t.Fatalf("the snapshot's block in the block map: %+v", src)
	case cmd == nil || !cmd.GetTruncate() || cmd.GetNewBlockId() != newID || cmd.GetBlock().GetBlockId() != old.GetBlockId() ||
		cmd.GetBlock().GetNumBytes() != bs || cmd.GetNewLength() != 100 || cmd.GetNewGs() != recID:
		t.Fatalf("recovery command: %v", cmd)
	}
	dn := fc.node("id-dn1")
	commit := func(blk *dfspb.ExtendedBlock, length int64, del bool) error {
		_, err := dn.rpc.dp.CommitBlockSynchronization(dn.rpc.ctx(), &dfspb.CommitBlockSynchronizationRequest{
			Block: blk, NewGs: recID, NewLength: length, DeleteBlock: del, CloseFile: true, NewTargets: []string{"id-dn1"}})
		return err
	}
	newBlk := &dfspb.ExtendedBlock{BlockId: newID, GenerationStamp: old.GetGenerationStamp(), NumBytes: 100}
	wantErr(t, commit(old, 100, false), codes.FailedPrecondition,
		fmt.Sprintf("commitBlockSynchronization /t/f: block %d is the source of a copy-on-truncate (a snapshot holds it); the recovery commits the new block %d; refused", old.GetBlockId(), newID))
	wantErr(t, commit(newBlk, 300, false), codes.FailedPrecondition,
		fmt.Sprintf("block %d is being truncated to 100 bytes, but the recovery reported length 300; refused", newID))
	wantErr(t, commit(newBlk, 0, true), codes.FailedPrecondition, "but the recovery would delete it; refused")
	if st := fileInfo(t, c, "/t/f"); !st.GetUnderConstruction() {
		t.Fatalf("/t/f after refused commits: %v", st)
	}
	if err := commit(newBlk, 100, false); err != nil {
		t.Fatal(err)
	}
	if st := fileInfo(t, c, "/t/f"); st.GetUnderConstruction() || st.GetLength() != 100 {
		t.Fatalf("/t/f after the copy: %v", st)
	}
	if st := fileInfo(t, c, "/t/.snapshot/s1/f"); st.GetLength() != bs+500 {
		t.Fatalf("snapshot after the copy: %v", st)
	}
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	if b := nn.state.blocks.Get(old.GetBlockId()); b == nil || b.GS != old.GetGenerationStamp() || b.NumBytes != bs {
		t.Fatalf("the snapshot's block after the copy: %+v", b)
	}
	if b := nn.state.blocks.Get(newID); b == nil || b.GS != recID || b.NumBytes != 100 {
		t.Fatalf("the new block: %+v", b)
	}
}

// TestCopyOnTruncateReplays: the copy-on-truncate record (with the new
// block) replays to the same state, and an image taken while the copy is
// in progress keeps its source, which stays in the block map even once
// the snapshot that held it is deleted, until the file closes.
func TestCopyOnTruncateReplays(t *testing.T) {
	const f = 3 // inode ids: / is 1, /d 2, /d/f 3
	base := []*editOp{
		{Kind: opMkdirs, Path: "/d", Perm: 0o755, ParentPerm: 0o755, CreateParent: true, Now: 1},
		{Kind: opCreate, Path: "/d/f", Perm: 0o644, Replication: 3, BlockSize: 1 << 20, Client: "w", Now: 2},
		{Kind: opAddBlock, FileID: f, Block: blockRef{ID: 100, GS: 1000}},
		{Kind: opAddBlock, FileID: f, Prev: &blockRef{100, 1000, 1 << 20}, Block: blockRef{ID: 101, GS: 1001}},
		{Kind: opComplete, FileID: f, Blocks: []blockRef{{100, 1000, 1 << 20}, {101, 1001, 3000}}, Now: 3},
		{Kind: opAllowSnapshot, Path: "/d"},
		{Kind: opCreateSnapshot, Path: "/d", Snapshot: "s0", Now: 4},
		{Kind: opTruncate, Path: "/d/f", NewLength: 500, Client: "tr", Host: "h", Block: blockRef{ID: 200, GS: 1005}, Now: 5},
		// The mid-way image is saved here, the copy in progress.
		{Kind: opDeleteSnapshot, Path: "/d", Snapshot: "s0"},
	}
	inProgress := replayCheck(t, clone(base), 8)
	for _, must := range []string{
		"/d/f id=3 mode=644 hdfs:supergroup mtime=5 acl=[] policy=0 [200 gs=1005 len=500 under-construction]",
		"block 100 gs=1000 len=1048576 file=3 refs=0", // the copy's source
	} {
		if !strings.Contains(inProgress, must) {
			t.Fatalf("state lacks %q:\n%s", must, inProgress)
		}
	}
	if strings.Contains(inProgress, "block 101") {
		t.Fatalf("block 101, dropped by the truncate and the snapshot deletion, is still there:\n%s", inProgress)
	}
	done := replayCheck(t, append(clone(base),
		&editOp{Kind: opAllocGS, Block: blockRef{GS: 1006}},
		&editOp{Kind: opCommitSync, FileID: f, Block: blockRef{ID: 200, GS: 1006, Len: 500}, Now: 6},
		&editOp{Kind: opCloseFile, FileID: f, Keep: 1, Now: 7},
	), 8)
	if !strings.Contains(done, "[200 gs=1006 len=500 complete]") || strings.Contains(done, "block 100 ") {
		t.Fatalf("after the copy is committed the source should be gone:\n%s", done)
	}
}

func clone(ops []*editOp) []*editOp {
	out := make([]*editOp, len(ops))
	for i, o := range ops {
		c := *o
		out[i] = &c
	}
	return out
}
