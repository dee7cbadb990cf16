package namenode

import (
	"fmt"
	"syscall"
)

// checkEditsSpace is HDFS's NameNodeResourceChecker: it measures the free
// space of meta_dir's file system and, below resource_du_reserved, makes
// the namenode refuse mutations (writableLocked) until space is freed.
// Refusing before the edit log runs out of room keeps a full disk from
// ever reaching the log: a refused operation is not applied at all,
// whereas one whose record finds no room is applied in memory and held
// (journal.NoSpace) with an ambiguous answer to its caller. HDFS enters
// safe mode for good here and waits for an operator; this resumes by
// itself once the space is back. It also writes records the journal held
// back for want of space, once there is room for them.
func (nn *NameNode) checkEditsSpace() {
	reserved := nn.cfg.ResourceDuReserved
	if reserved <= 0 {
		return
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(nn.cfg.MetaDir, &st); err != nil {
		return // an in-memory journal in tests; a real meta_dir fails louder elsewhere
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	var low error
	if free < reserved {
		low = fmt.Errorf("the namenode is low on disk space: meta_dir %s has %d bytes free, below resource_du_reserved (%d bytes); mutations are refused until space is freed",
			nn.cfg.MetaDir, free, reserved)
	}
	nn.mu.Lock()
	was := nn.lowSpace
	nn.lowSpace = low
	nn.mu.Unlock()
	switch {
	case low != nil && was == nil:
		nn.logger.Error("meta_dir is low on disk space; refusing mutations", "meta_dir", nn.cfg.MetaDir, "free", free, "resource_du_reserved", reserved)
	case low == nil && was != nil:
		nn.logger.Info("meta_dir has disk space again; accepting mutations", "meta_dir", nn.cfg.MetaDir, "free", free)
	}
	if low == nil && nn.journal.NoSpace() != nil {
		if err := nn.journal.Sync(nn.journal.LastTxID()); err != nil {
			nn.logger.Error("edit log records held for want of space still cannot be written", "error", err)
		}
	}
}

// spaceForEditsLocked refuses a mutation while meta_dir is low on space
// or the edit log holds records it found no room for.
func (nn *NameNode) spaceForEditsLocked(op, path string) error {
	if nn.lowSpace != nil {
		return errUnavailable("%s %s: %v", op, path, nn.lowSpace)
	}
	if err := nn.journal.NoSpace(); err != nil {
		return errUnavailable("%s %s: the namenode's edit log is out of space (%v)", op, path, err)
	}
	return nil
}
