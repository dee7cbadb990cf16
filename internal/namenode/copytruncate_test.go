package namenode

import (
	"fmt"
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
	f, _ := nn.state.Tree().Lookup("/t/f")
	nb := f.Blocks[len(f.Blocks)-1]
	newID, recID, src := nb.ID, nb.RecoveryID(), nn.state.Blocks().Get(old.GetBlockId())
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
	if b := nn.state.Blocks().Get(old.GetBlockId()); b == nil || b.GS != old.GetGenerationStamp() || b.NumBytes != bs {
		t.Fatalf("the snapshot's block after the copy: %+v", b)
	}
	if b := nn.state.Blocks().Get(newID); b == nil || b.GS != recID || b.NumBytes != 100 {
		t.Fatalf("the new block: %+v", b)
	}
}
