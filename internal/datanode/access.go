package datanode

import (
	"time"

	"smarth/internal/blocktoken"
	"smarth/internal/rpc/dfspb"
)

// Access checks (DESIGN "Security"): every op on the data port presents a
// block access token the namenode signed; this node checks it against its
// copy of the namenode's block keys before touching the replica or dialing
// anyone. What each op needs:
//
//	READ_BLOCK                          READ,  the block's stamp
//	WRITE_BLOCK create                  WRITE, the block's stamp
//	WRITE_BLOCK streaming recovery,     WRITE, the new stamp (latest_gs): the
//	            append                  namenode issued it to the lease holder
//	WRITE_BLOCK TRANSFER_RBW/FINALIZED  COPY,  the block's stamp: these may
//	                                    replace a stale finalized replica
//	TRANSFER_BLOCK                      COPY,  the block's stamp
//
// and every address the op makes this node dial must be among the token's
// targets, so a client cannot point a datanode at an arbitrary host.

// writeWant is what a WRITE_BLOCK op needs its token to allow.
func writeWant(op *dfspb.WriteBlockOp) blocktoken.Want {
	b := op.GetBlock()
	w := blocktoken.Want{BlockID: b.GetBlockId(), GS: b.GetGenerationStamp(), Mode: blocktoken.Write}
	switch op.GetStage() {
	case dfspb.WriteStage_PIPELINE_SETUP_STREAMING_RECOVERY, dfspb.WriteStage_PIPELINE_SETUP_APPEND:
		w.GS = op.GetLatestGs()
	case dfspb.WriteStage_TRANSFER_RBW, dfspb.WriteStage_TRANSFER_FINALIZED:
		w.Mode = blocktoken.Copy
	}
	for _, t := range op.GetTargets() {
		w.Dials = append(w.Dials, dataAddr(t))
	}
	return w
}

func readWant(op *dfspb.ReadBlockOp) blocktoken.Want {
	b := op.GetBlock()
	return blocktoken.Want{BlockID: b.GetBlockId(), GS: b.GetGenerationStamp(), Mode: blocktoken.Read}
}

func transferWant(op *dfspb.TransferBlockOp) blocktoken.Want {
	b := op.GetBlock()
	w := blocktoken.Want{BlockID: b.GetBlockId(), GS: b.GetGenerationStamp(), Mode: blocktoken.Copy}
	if len(op.GetTargets()) > 0 {
		w.Dials = []string{dataAddr(op.GetTargets()[0])} // the only one transferBlockOp dials
	}
	return w
}

// checkAccess returns nil when tok allows want, else the refusal to send,
// and counts and logs the refusal.
func (d *DataNode) checkAccess(op string, tok *dfspb.BlockToken, want blocktoken.Want, remote string) *dfspb.OpResponse {
	if _, err := d.tokens.Check(tok, want, time.Now()); err != nil {
		d.metrics.tokenRefusals.Inc()
		d.log.Warn("access token refused", "op", op, "block", want.BlockID, "remote", remote, "err", err)
		return errResponse(dfspb.OpStatus_OP_STATUS_ERROR_ACCESS_TOKEN, err.Error())
	}
	return nil
}
