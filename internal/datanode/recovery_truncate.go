package datanode

import (
	"smarth/internal/datanode/store"
	"smarth/internal/rpc/dfspb"
)

// recoverTruncate runs truncate recovery as the primary datanode (HDFS's
// BlockRecoveryWorker with a new length from the namenode): every replica
// holder that has at least the new length under the block's stamp or a
// later one (an earlier, unfinished attempt of the same truncate) cuts its
// replica to that length and finalizes it under the new stamp; then the
// result is committed. Unlike lease recovery it never chooses a length and
// never deletes the block: the bytes before the new end are the file's.
// With no usable replica it gives up and the namenode tries again later.
//
// Copy-on-truncate (cmd.new_block_id set; a snapshot holds the block):
// each holder copies the first new_length bytes of its replica of the
// block, which must be at the block's own stamp, into a new finalized
// replica of block new_block_id at the new stamp, and leaves the old
// replica as it is; the commit names the new block.
func (d *DataNode) recoverTruncate(cmd *dfspb.RecoverBlockCommand) {
	b, newGS, newLen, newID := cmd.GetBlock(), cmd.GetNewGs(), cmd.GetNewLength(), cmd.GetNewBlockId()
	name := store.BlockName(b.GetBlockId(), b.GetGenerationStamp())
	var synced []string
	for _, dn := range cmd.GetReplicas() {
		resp, err := d.callInit(dn, &dfspb.InitReplicaRecoveryRequest{Block: b, RecoveryId: newGS})
		switch {
		case err != nil:
			d.log.Warn("truncate recovery: replica unavailable", "block", name, "datanode", dn.GetId(), "err", err)
			continue
		case !resp.GetExists():
			continue
		case resp.GetBlock().GetGenerationStamp() < b.GetGenerationStamp() || resp.GetBlock().GetNumBytes() < newLen,
			newID != 0 && resp.GetBlock().GetGenerationStamp() != b.GetGenerationStamp():
			d.log.Warn("truncate recovery: replica is stale or too short; skipped", "block", name, "datanode", dn.GetId(),
				"gs", resp.GetBlock().GetGenerationStamp(), "bytes", resp.GetBlock().GetNumBytes(), "new_length", newLen)
			continue
		}
		_, err = d.callUpdate(dn, &dfspb.UpdateReplicaUnderRecoveryRequest{Block: resp.GetBlock(), RecoveryId: newGS, NewLength: newLen, Truncate: true, NewBlockId: newID})
		if err != nil {
			d.log.Warn("truncate recovery: cannot cut replica", "block", name, "datanode", dn.GetId(), "err", err)
			continue
		}
		synced = append(synced, dn.GetId())
	}
	if len(synced) == 0 {
		d.log.Error("truncate recovery failed: no replica could be cut; the namenode will retry", "block", name, "asked", len(cmd.GetReplicas()))
		return
	}
	if newID != 0 {
		// The commit names the new block (the namenode looks it up by
		// id); the stamp sent is the one the prefix was copied from.
		b = &dfspb.ExtendedBlock{BlockId: newID, GenerationStamp: b.GetGenerationStamp(), NumBytes: newLen}
		d.log.Info("copy-on-truncate: prefix copied into a new block", "from", name, "block", store.BlockName(newID, newGS), "length", newLen, "replicas", len(synced))
	}
	d.commitRecovery(&dfspb.CommitBlockSynchronizationRequest{Block: b, NewGs: newGS, NewLength: newLen, CloseFile: true, NewTargets: synced})
}
