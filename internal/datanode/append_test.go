package datanode

import (
	"testing"

	"smarth/internal/blocktoken"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// An append needs a WRITE token for the new stamp (latest_gs), which the
// namenode gives only the lease holder; a token for the block's current
// stamp, as any reader of the file can have, does not reopen the replica.
func TestAppendNeedsTokenForNewStamp(t *testing.T) {
	nn := startFakeNameNode(t)
	dn, _ := startDataNode(t, nn, "", nil)
	data := randomData(3000, 3)
	writeBlock(t, 450, 1, data, dn)
	op := &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 450, GenerationStamp: 1, NumBytes: 3000}, ClientName: "c",
		Stage: dfspb.WriteStage_PIPELINE_SETUP_APPEND, LatestGs: 2, BytesPerChecksum: 512, Mode: dfspb.WriteMode_CLASSIC}
	wantTokenRefused(t, sendOp(t, dn, op), "no token")
	op.Token = testToken(450, 1, blocktoken.Write)
	wantTokenRefused(t, sendOp(t, dn, op), "generation stamp 1, not 2")
	op.Token = testToken(450, 2, blocktoken.Read)
	wantTokenRefused(t, sendOp(t, dn, op), "allows READ, not WRITE")
	if r, _ := dn.store.Get(450); r.GS != 1 || r.State.String() != "finalized" {
		t.Fatalf("a refused append touched the replica: %+v", r)
	}
	op.Token = writeToken(op)
	if resp := sendOp(t, dn, op); resp.GetStatus() != dfspb.OpStatus_OP_STATUS_SUCCESS {
		t.Fatalf("append with the lease holder's token: %v", datatransfer.ResponseError(resp))
	}
}
