package namenode

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"

	"smarth/internal/rpc/dfspb"
)

// TestTruncateSyncMustCutToNewLength: the commit of a truncate recovery
// must report the length the truncate set and keep the block; another
// length or a deletion is refused (the file stays being truncated), and
// the right commit closes the file at the new length.
func TestTruncateSyncMustCutToNewLength(t *testing.T) {
	cfg := testConfig(t)
	nn := startNN(t, cfg)
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 3; i++ {
		fc.add(fmt.Sprintf("dn%d", i), "/r")
	}
	c := dial(t, nn.Addr(), "hdfs")
	bs := cfg.BlockSize
	lbs := writeFile(t, c, fc, "/t/f", 3, bs, 500)
	// The fakes stop heartbeating: the recovery command stays queued and
	// the test plays the primary datanode itself.
	for i := 1; i <= 3; i++ {
		fc.node(fmt.Sprintf("id-dn%d", i)).kill()
	}
	if r, err := c.cp.Truncate(c.ctx(), &dfspb.TruncateRequest{Path: "/t/f", NewLength: bs + 100, ClientName: "tr"}); err != nil || r.GetReady() {
		t.Fatalf("truncate inside the last block: %v %v", r, err)
	}
	nn.mu.RLock()
	b := nn.state.Blocks().Get(lbs[1].GetBlock().GetBlockId())
	blk, recID := ext(b), b.RecoveryID()
	nn.mu.RUnlock()
	if recID == 0 {
		t.Fatal("no truncate recovery in progress")
	}
	dn := fc.node("id-dn1")
	commit := func(length int64, del bool) error {
		_, err := dn.rpc.dp.CommitBlockSynchronization(dn.rpc.ctx(), &dfspb.CommitBlockSynchronizationRequest{
			Block: blk, NewGs: recID, NewLength: length, DeleteBlock: del, CloseFile: true, NewTargets: []string{"id-dn1"}})
		return err
	}
	wantErr(t, commit(300, false), codes.FailedPrecondition,
		fmt.Sprintf("commitBlockSynchronization /t/f: block %d is being truncated to 100 bytes, but the recovery reported length 300; refused", b.ID))
	wantErr(t, commit(0, true), codes.FailedPrecondition,
		fmt.Sprintf("commitBlockSynchronization /t/f: block %d is being truncated to 100 bytes, but the recovery would delete it; refused", b.ID))
	if st := fileInfo(t, c, "/t/f"); !st.GetUnderConstruction() {
		t.Fatalf("/t/f after refused commits: %v", st)
	}
	if err := commit(100, false); err != nil {
		t.Fatal(err)
	}
	if st := fileInfo(t, c, "/t/f"); st.GetUnderConstruction() || st.GetLength() != bs+100 {
		t.Fatalf("/t/f after the truncate recovery: %v", st)
	}
}
