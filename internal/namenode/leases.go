package namenode

import (
	"fmt"
	"sort"
	"time"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
)

// recoveryHolder holds the leases of files the namenode is recovering
// (HDFS's "HDFS_NameNode" lease holder); the state machine makes it the
// writer of a file a truncate cuts.
const recoveryHolder = fsstate.RecoveryHolder

// lease is one client's right to write its open files.
type lease struct {
	holder  string
	renewed time.Time
	files   map[uint64]bool // inode ids
}

// leaseTable is guarded by NameNode.mu.
type leaseTable struct {
	byHolder map[string]*lease
	byFile   map[uint64]*lease
}

func newLeaseTable() *leaseTable {
	return &leaseTable{byHolder: map[string]*lease{}, byFile: map[uint64]*lease{}}
}

func (t *leaseTable) add(holder string, file uint64, now time.Time) {
	t.remove(file)
	l := t.byHolder[holder]
	if l == nil {
		l = &lease{holder: holder, files: map[uint64]bool{}}
		t.byHolder[holder] = l
	}
	l.renewed = now
	l.files[file] = true
	t.byFile[file] = l
}

func (t *leaseTable) remove(file uint64) {
	l := t.byFile[file]
	if l == nil {
		return
	}
	delete(l.files, file)
	delete(t.byFile, file)
	if len(l.files) == 0 {
		delete(t.byHolder, l.holder)
	}
}

func (t *leaseTable) renew(holder string, now time.Time) {
	if l := t.byHolder[holder]; l != nil && holder != recoveryHolder {
		l.renewed = now
	}
}

func (t *leaseTable) ofFile(file uint64) *lease { return t.byFile[file] }

func (t *leaseTable) files() int { return len(t.byFile) }

// recoveryTimeout is how long a lease recovery may take before the
// namenode tries again with another primary datanode.
func (nn *NameNode) recoveryTimeout() time.Duration {
	return max(10*nn.cfg.HeartbeatInterval, time.Second)
}

// checkLeases recovers the files of writers silent past the hard limit,
// and retries recoveries that took too long.
func (nn *NameNode) checkLeases(now time.Time) {
	nn.mu.Lock()
	if nn.safe.on {
		nn.mu.Unlock()
		return
	}
	defer func() {
		// Recovery stamps and closed files are logged here; make them
		// durable even if no client operation syncs soon.
		tx := nn.journal.LastTxID()
		nn.mu.Unlock()
		if err := nn.sync(tx); err != nil {
			nn.logger.Error("lease recovery not durable", "error", err)
		}
	}()
	var expired []uint64
	for holder, l := range nn.leases.byHolder {
		limit := nn.cfg.LeaseHardLimit
		if holder == recoveryHolder {
			limit = nn.recoveryTimeout()
		}
		if now.Sub(l.renewed) > limit {
			for f := range l.files {
				expired = append(expired, f)
			}
		}
	}
	sort.Slice(expired, func(i, j int) bool { return expired[i] < expired[j] })
	for _, id := range expired {
		if f := nn.state.Tree().ByID(id); f != nil && f.Writer() != nil {
			if l := nn.leases.ofFile(id); l != nil && l.holder != recoveryHolder {
				nn.logger.Warn("lease expired; recovering file", "path", f.Path(), "holder", l.holder, "silent", now.Sub(l.renewed).Round(time.Second).String())
			}
			nn.startRecoveryLocked(f, now)
		} else {
			nn.leases.remove(id)
		}
	}
}

// startRecoveryLocked takes an open file away from its writer and brings
// it to a closed state: blocks whose length is known and that have a
// replica are kept; each block still being written is recovered by a
// datanode holding it (RecoverBlockCommand; it answers with
// CommitBlockSynchronization); from the first block that no live datanode
// holds on, the file is cut. The file closes once nothing is in recovery.
func (nn *NameNode) startRecoveryLocked(f *namespace.INode, now time.Time) {
	nn.leases.add(recoveryHolder, f.ID, now)
	keep, waiting := len(f.Blocks), false
	for i, b := range f.Blocks {
		if nn.blockSettledLocked(b) {
			continue
		}
		holders := nn.recoveryHoldersLocked(nn.recoverySourceLocked(f, b))
		if len(holders) == 0 && nn.truncatingLocked(f) && i == len(f.Blocks)-1 {
			// A truncate never drops the block it cuts: the bytes before
			// the new end are the file's. Wait for a holder to come
			// (after a restart the datanodes may not have reported yet).
			waiting = true
			continue
		}
		if len(holders) == 0 {
			keep = i // nobody has it: the file ends before it
			break
		}
		waiting = true
		if sent, ok := nn.recovering[b.ID]; ok && now.Sub(sent) < nn.recoveryTimeout() {
			continue
		}
		nn.sendRecoveryLocked(f, b, holders, now)
	}
	if waiting {
		return
	}
	nn.closeRecoveredLocked(f, keep, now)
}

// blockSettledLocked: the block needs no recovery (complete, or committed
// with a finalized replica of that length on a live node).
func (nn *NameNode) blockSettledLocked(b *blockmap.Block) bool {
	switch b.State {
	case blockmap.Complete:
		return true
	case blockmap.Committed:
		return len(b.Good(nn.isLive)) > 0 && b.RecoveryID() == 0
	}
	return false
}

// recoveryHoldersLocked are the live datanodes that may hold a block being
// written: those that reported a replica and the pipeline's targets.
func (nn *NameNode) recoveryHoldersLocked(b *blockmap.Block) []string {
	seen := map[string]bool{}
	var out []string
	add := func(id string) {
		if !seen[id] && nn.isLive(id) {
			seen[id] = true
			out = append(out, id)
		}
	}
	for _, r := range b.ReplicaList() {
		if !r.Corrupt {
			add(r.Node)
		}
	}
	for _, id := range b.Targets() {
		add(id)
	}
	return out
}

// sendRecoveryLocked picks a primary among the holders (rotating on
// retries) and queues a RecoverBlockCommand with a new generation stamp,
// logged first so that the stamp is never handed out twice.
func (nn *NameNode) sendRecoveryLocked(f *namespace.INode, b *blockmap.Block, holders []string, now time.Time) {
	o := &fsstate.AllocGS{GS: nn.state.Blocks().NextGS()}
	nn.logOp(o) // heartbeat makes it durable before the command goes out
	attempt := 0
	if _, retried := nn.recovering[b.ID]; retried {
		attempt = int(o.GS)
	}
	primary := holders[attempt%len(holders)]
	b.SetRecoveryID(o.GS)
	nn.recovering[b.ID] = now
	cmd := &dfspb.RecoverBlockCommand{Block: ext(b), NewGs: o.GS, Replicas: nn.datanodeInfos(holders)}
	nn.truncateRecoveryLocked(f, b, cmd)
	nn.nodes[primary].recoveries = append(nn.nodes[primary].recoveries, cmd)
	nn.metrics.recoveries.Inc()
	nn.logger.Info("block recovery sent", "path", f.Path(), "block", b.ID, "new_gs", o.GS, "primary", primary, "replicas", len(holders))
}

// closeRecoveredLocked closes a recovered file, keeping its first keep
// blocks.
func (nn *NameNode) closeRecoveredLocked(f *namespace.INode, keep int, now time.Time) {
	o := &fsstate.CloseFile{FileID: f.ID, Keep: keep, Now: now.UnixMilli()}
	res, err := nn.state.Apply(o, namespace.Caller{Trusted: true})
	if err != nil {
		nn.logger.Error("closing a recovered file failed", "path", f.Path(), "error", err)
		return
	}
	nn.logOp(o)
	nn.afterApplyLocked(res)
	nn.leases.remove(f.ID)
	nn.dirty = true
	nn.logger.Info("file recovered and closed", "path", f.Path(), "blocks", keep, "dropped", len(res.Dropped), "length", f.Length())
}

func (nn *NameNode) commitBlockSync(req *dfspb.CommitBlockSynchronizationRequest) error {
	const op = "commitBlockSynchronization"
	nn.mu.Lock()
	b := nn.state.Blocks().Get(req.GetBlock().GetBlockId())
	if b == nil {
		nn.mu.Unlock()
		return errNotFound("%s: block %d no longer exists (its file was deleted or truncated)", op, req.GetBlock().GetBlockId())
	}
	f := nn.state.Tree().ByID(b.FileID)
	if f == nil || f.Writer() == nil {
		done := b.GS == req.GetNewGs() && (b.NumBytes == req.GetNewLength() || req.GetDeleteBlock())
		nn.mu.Unlock()
		if done {
			return nil // a repeated call
		}
		return errPrecondition("%s: block %d: its file is already closed", op, b.ID)
	}
	// A copy-on-truncate commits the new block; the block it was copied
	// from is the snapshot's and is never changed by a recovery.
	if src := nn.state.CopySource(f); src == b {
		nn.mu.Unlock()
		return errPrecondition("%s %s: block %d is the source of a copy-on-truncate (a snapshot holds it); the recovery commits the new block %d; refused",
			op, f.Path(), b.ID, f.Blocks[len(f.Blocks)-1].ID)
	}
	if b.RecoveryID() == 0 || b.RecoveryID() != req.GetNewGs() {
		nn.mu.Unlock()
		return errPrecondition("%s: block %d: recovery id %d is not the one in progress (%d)", op, b.ID, req.GetNewGs(), b.RecoveryID())
	}
	// Truncate recovery cuts the block to the length the truncate set
	// (its NumBytes); any other length, or dropping the block, would lose
	// bytes before the new end or keep bytes past it.
	if nn.truncatingLocked(f) && f.Blocks[len(f.Blocks)-1] == b {
		var why string
		switch {
		case req.GetDeleteBlock():
			why = "the recovery would delete it"
		case req.GetNewLength() != b.NumBytes:
			why = fmt.Sprintf("the recovery reported length %d", req.GetNewLength())
		}
		if why != "" {
			nn.mu.Unlock()
			return errPrecondition("%s %s: block %d is being truncated to %d bytes, but %s; refused", op, f.Path(), b.ID, b.NumBytes, why)
		}
	}
	if !req.GetDeleteBlock() {
		if err := checkBlockLength(op, f, b.ID, req.GetNewLength()); err != nil {
			nn.mu.Unlock()
			return err
		}
	}
	now := nn.clock()
	o := &fsstate.CommitSync{FileID: f.ID, Delete: req.GetDeleteBlock(), Now: now.UnixMilli(),
		Block: fsstate.BlockRef{ID: b.ID, GS: req.GetNewGs(), Len: req.GetNewLength()}}
	res, err := nn.state.Apply(o, namespace.Caller{Trusted: true})
	if err != nil {
		nn.mu.Unlock()
		return errPrecondition("%s: %v", op, err)
	}
	tx := nn.logOp(o)
	nn.afterApplyLocked(res)
	delete(nn.recovering, b.ID)
	if !req.GetDeleteBlock() {
		b.SetTargets(req.GetNewTargets())
		for _, id := range req.GetNewTargets() {
			nn.state.Blocks().AddReplica(id, blockmap.Reported{ID: b.ID, GS: b.GS, NumBytes: b.NumBytes, State: blockmap.Finalized})
		}
	}
	nn.logger.Info("block recovered", "path", f.Path(), "block", b.ID, "gs", req.GetNewGs(), "length", req.GetNewLength(), "deleted", req.GetDeleteBlock())
	// The file closes when none of its blocks is still in recovery.
	nn.startRecoveryLocked(f, now)
	tx = max(tx, nn.journal.LastTxID())
	nn.mu.Unlock()
	return nn.sync(tx)
}
