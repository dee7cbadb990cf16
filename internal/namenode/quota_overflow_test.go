package namenode

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
)

// TestAddBlockChargeCannotWrap: the space an addBlock needs (a whole
// block being written, less what committing the previous block gives
// back) is block size x replication and a client-reported length x
// replication; either product or their sum used to wrap negative for
// large enough factors, and a negative need passes every quota check. It
// now saturates and the addBlock is refused naming the path, on the live
// path and on replay alike (both run apply).
func TestAddBlockChargeCannotWrap(t *testing.T) {
	s := &fsState{tree: namespace.New(namespace.Config{Superuser: "hdfs", Now: 1}), blocks: blockmap.New(), cache: newCacheDirs()}
	c := namespace.Caller{User: "hdfs", Trusted: true}
	run := func(o *editOp) error {
		_, err := s.apply(o, c)
		return err
	}
	const bs = namespace.MaxBlockSize &^ 511
	for _, o := range []*editOp{
		{Kind: opMkdirs, Path: "/q", Perm: 0o777, ParentPerm: 0o755, Now: 2},
		{Kind: opSetQuota, Path: "/q", NSQuota: namespace.QuotaDontSet, DSQuota: math.MaxInt64 - 1},
		// 32767 (max_replication's bound) x 2^48-512 fits in an int64...
		{Kind: opCreate, Path: "/q/a", Perm: 0o644, Replication: 32767, BlockSize: bs, Client: "c", Now: 3},
		{Kind: opCreate, Path: "/q/b", Perm: 0o644, Replication: 32767, BlockSize: bs, Client: "c", Now: 3},
		{Kind: opAddBlock, FileID: 3, Block: blockRef{ID: 1 << 30, GS: 1000}},
		// Replication 3, 1 MiB blocks, under a 1 TiB quota.
		{Kind: opMkdirs, Path: "/small", Perm: 0o777, ParentPerm: 0o755, Now: 2},
		{Kind: opSetQuota, Path: "/small", NSQuota: namespace.QuotaDontSet, DSQuota: 1 << 40},
		{Kind: opCreate, Path: "/small/f", Perm: 0o644, Replication: 3, BlockSize: 1 << 20, Client: "c", Now: 3},
		{Kind: opAddBlock, FileID: 6, Block: blockRef{ID: 1<<30 + 1, GS: 1001}},
	} {
		if err := run(o); err != nil {
			t.Fatalf("%s: %v", o.Kind, err)
		}
	}
	quota := func(p string) *namespace.Quota {
		d, _ := s.tree.Lookup(p)
		return d.Quota()
	}
	usedQ := quota("/q").UsedDS
	if usedQ != namespace.Space(bs, 32767) {
		t.Fatalf("/q uses %d, want one block being written, %d", usedQ, namespace.Space(bs, 32767))
	}
	// ...but two of them do not: the sum used to wrap negative and pass
	// the quota, and the usage went negative.
	err := run(&editOp{Kind: opAddBlock, FileID: 4, Block: blockRef{ID: 1<<30 + 2, GS: 1002}})
	if err == nil || !strings.Contains(err.Error(), "/q/b") || !strings.Contains(err.Error(), "would exceed") {
		t.Errorf("a second 2^63-byte block under /q: %v; want a refusal naming /q/b", err)
	}
	if got := quota("/q").UsedDS; got != usedQ {
		t.Errorf("/q uses %d after a refused addBlock, want %d", got, usedQ)
	}
	// A client reporting an absurd length for the block it finished:
	// (2^63-1 - 1 MiB) x 3 used to wrap.
	usedS := quota("/small").UsedDS
	err = run(&editOp{Kind: opAddBlock, FileID: 6, Prev: &blockRef{ID: 1<<30 + 1, GS: 1001, Len: math.MaxInt64}, Block: blockRef{ID: 1<<30 + 3, GS: 1003}})
	if err == nil || !strings.Contains(err.Error(), "/small/f") || !strings.Contains(err.Error(), "quota") {
		t.Errorf("addBlock after a previous block of 2^63-1 bytes: %v; want a quota refusal naming /small/f", err)
	}
	if got := quota("/small").UsedDS; got != usedS || got < 0 {
		t.Errorf("/small uses %d after a refused addBlock, want %d", got, usedS)
	}
}

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
	if blk := nn.state.blocks.Get(b.GetBlockId()); blk.State != blockmap.UnderConstruction || blk.NumBytes != 0 {
		t.Errorf("block after refused reports: state %v length %d", blk.State, blk.NumBytes)
	}
}
