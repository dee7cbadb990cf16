package namenode

import (
	"path"
	"time"

	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/namespace"
	"smarth/internal/trash"
)

// The trash emptier is HDFS's Trash.Emptier, which runs in the namenode
// when fs.trash.interval is set: every checkpoint interval it deletes each
// user's trash checkpoints older than the trash interval and makes
// .Trash/Current a new checkpoint. Clients move deletes into the trash
// (client.MoveToTrash); without this, trash would only empty when users
// run expunge.

// trashEmptierInterval is how often the emptier runs: trash_checkpoint_interval,
// or the trash interval itself when that is 0 or larger (as HDFS); 0 when
// the cluster has no trash.
func (nn *NameNode) trashEmptierInterval() time.Duration {
	every := nn.cfg.TrashCheckpointInterval
	if every <= 0 || every > nn.cfg.TrashInterval {
		every = nn.cfg.TrashInterval
	}
	return every
}

// emptyTrashTick runs one emptier round over every /user/<name>/.Trash.
func (nn *NameNode) emptyTrashTick() {
	now := nn.clock()
	nn.mu.Lock()
	if nn.writableLocked("trash", "/user") != nil {
		nn.mu.Unlock()
		return
	}
	var ops []fsstate.Timed
	home, err := nn.state.Tree().Lookup("/user")
	if err == nil && home.IsDir() {
		for _, u := range home.Children() {
			ops = append(ops, nn.trashOpsLocked(path.Join(u.Path(), trash.Dir), now)...)
		}
	}
	last := uint64(0)
	for _, op := range ops {
		op.SetNow(now.UnixMilli())
		res, err := nn.state.Apply(op, namespace.Caller{Trusted: true})
		switch op := op.(type) {
		case *fsstate.Delete:
			if err == nil {
				nn.logger.Info("deleted trash checkpoint", "path", op.Path)
			} else {
				nn.logger.Warn("trash emptier", "op", op.Kind(), "path", op.Path, "error", err)
			}
		case *fsstate.Rename:
			if err == nil {
				nn.logger.Info("created trash checkpoint", "path", op.Dst)
			} else {
				nn.logger.Warn("trash emptier", "op", op.Kind(), "path", op.Path, "error", err)
			}
		}
		if err != nil {
			continue
		}
		last = nn.logOp(op)
		nn.afterApplyLocked(res)
	}
	nn.mu.Unlock()
	if last != 0 {
		_ = nn.sync(last)
	}
}

// trashOpsLocked plans one trash's round: delete the expired checkpoints,
// then rename Current to a checkpoint with a free name.
func (nn *NameNode) trashOpsLocked(root string, now time.Time) []fsstate.Timed {
	dir, err := nn.state.Tree().Lookup(root)
	if err != nil || !dir.IsDir() {
		return nil
	}
	var ops []fsstate.Timed
	hasCurrent := false
	taken := map[string]bool{}
	for _, c := range dir.Children() {
		taken[c.Name] = true
		if c.Name == trash.Current {
			hasCurrent = c.IsDir()
			continue
		}
		if at, ok := trash.CheckpointTime(c.Name); ok && c.IsDir() && trash.Expired(at, now, nn.cfg.TrashInterval) {
			ops = append(ops, &fsstate.Delete{Path: c.Path(), Recursive: true})
			taken[c.Name] = false
		}
	}
	if !hasCurrent {
		return ops
	}
	for n := 0; n <= trash.MaxCheckpointTries; n++ {
		if name := trash.CheckpointName(now, n); !taken[name] {
			return append(ops, &fsstate.Rename{Path: path.Join(root, trash.Current), Dst: path.Join(root, name)})
		}
	}
	return ops
}
