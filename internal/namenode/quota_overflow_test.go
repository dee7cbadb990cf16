package namenode

import (
	"fmt"
	"math"
	"testing"

	"google.golang.org/grpc/codes"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/rpc/dfspb"
)

// TestReportedBlockLengthBounded: a writer's report of a block's length
// that no block of the file can have (negative, or past the file's block
// size, where every writer moves to a new block) is refused naming the
// path, before anything is committed: a negative length would shrink the
// file's space charge below its replicas' bytes.
func TestReportedBlockLengthBounded(t *testing.T) {
	nn, _, c, fid, ab := openFile(t, 3)
	b := ab.GetBlock().GetBlock()
	bs := nn.cfg.BlockSize
	for _, n := range []int64{-1, bs + 1, math.MaxInt64} {
		prev := &dfspb.ExtendedBlock{BlockId: b.GetBlockId(), GenerationStamp: b.GetGenerationStamp(), NumBytes: n}
		_, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/f", ClientName: "c1", FileId: fid, Previous: prev})
		wantErr(t, err, codes.InvalidArgument, fmt.Sprintf("addBlock /f: block %d reported with length %d, outside 0..%d", b.GetBlockId(), n, bs))
		_, err = c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: "/f", ClientName: "c1", FileId: fid, Last: prev})
		wantErr(t, err, codes.InvalidArgument, fmt.Sprintf("complete /f: block %d reported with length %d", b.GetBlockId(), n))
	}
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	if blk := nn.state.Blocks().Get(b.GetBlockId()); blk.State != blockmap.UnderConstruction || blk.NumBytes != 0 {
		t.Errorf("block after refused reports: state %v length %d", blk.State, blk.NumBytes)
	}
}
