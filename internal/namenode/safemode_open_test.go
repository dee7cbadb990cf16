package namenode

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"

	"smarth/internal/rpc/dfspb"
)

// A namenode restarted under a writer that had finished one block and
// started the next must wait in safe mode for the finished (committed)
// block to be reported, as HDFS does after forcing such blocks complete
// when it loads the edit log. Before, it counted only complete blocks,
// left safe mode at once with no datanode registered, and failed the
// writer's next block with "no live datanodes"
// (TestProcsNameNodeKilledDuringWrite found it).
func TestRestartUnderAWriterWaitsForItsCommittedBlock(t *testing.T) {
	cfg := testConfig(t)
	nn := startNN(t, cfg)
	fc := newFakeCluster(t, nn)
	for i := 1; i <= 3; i++ {
		fc.add(fmt.Sprintf("dn%d", i), "/r")
	}
	c := dial(t, nn.Addr(), "hdfs")
	cr, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: "/open", ClientName: "w", Replication: 3})
	if err != nil {
		t.Fatal(err)
	}
	id := cr.GetStatus().GetFileId()
	b1, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/open", ClientName: "w", FileId: id})
	if err != nil {
		t.Fatal(err)
	}
	prev := &dfspb.ExtendedBlock{BlockId: b1.Block.Block.BlockId, GenerationStamp: b1.Block.Block.GenerationStamp, NumBytes: 1 << 20}
	if _, err := c.cp.AddBlock(c.ctx(), &dfspb.AddBlockRequest{Path: "/open", ClientName: "w", FileId: id, Previous: prev}); err != nil {
		t.Fatal(err)
	}
	if err := nn.Close(); err != nil {
		t.Fatal(err)
	}
	nn2 := startNN(t, cfg)
	c2 := dial(t, nn2.Addr(), "hdfs")
	_, err = c2.cp.Mkdirs(c2.ctx(), &dfspb.MkdirsRequest{Path: "/new"})
	wantErr(t, err, codes.Unavailable, "namenode is in safe mode: 0 of 1 blocks reported")
}
