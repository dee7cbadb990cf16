package namenode

import (
	"context"

	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
)

// setTimes sets a path's modification and/or access time (HDFS setTimes;
// -1 keeps one). With access times off (access_time_precision 0) an
// access time is refused, as HDFS refuses it.
func (nn *NameNode) setTimes(ctx context.Context, req *dfspb.SetTimesRequest) error {
	p, err := cleanPath("setTimes", req.GetPath())
	if err != nil {
		return err
	}
	if req.GetAtimeMs() != namespace.KeepTime && nn.cfg.AccessTimePrecision <= 0 {
		return errInvalid("setTimes %s: access time for the file system is not configured; set access_time_precision on the namenode", p)
	}
	c := callerOf(ctx)
	op := &fsstate.SetTimes{Path: p, MTime: req.GetMtimeMs(), ATime: req.GetAtimeMs()}
	_, err = nn.mutate("setTimes", p, c, op, nil, nil)
	return err
}

// recordAccess sets the access time of a file just opened for reading when
// it is due (namespace.AccessTimeDue), as HDFS's getBlockLocations does. It
// is the namenode's own bookkeeping: logged like setTimes but applied as
// trusted (a reader need not be able to write the file), skipped quietly
// in safe mode, and never fails the read.
func (nn *NameNode) recordAccess(path string, atime int64) {
	precision := nn.cfg.AccessTimePrecision.Milliseconds()
	nn.mu.Lock()
	now := nn.nowMs()
	f, err := nn.state.Tree().Lookup(path)
	if err != nil || f.IsDir() || !namespace.AccessTimeDue(f.ATime, now, precision) || f.ATime != atime ||
		nn.writableLocked("open", path) != nil {
		// Gone, already updated by a concurrent reader, or no edits now.
		nn.mu.Unlock()
		return
	}
	op := &fsstate.SetTimes{Path: path, MTime: namespace.KeepTime, ATime: now}
	if _, err := nn.state.Apply(op, namespace.Caller{Trusted: true}); err != nil {
		nn.mu.Unlock()
		return
	}
	tx := nn.logOp(op)
	nn.mu.Unlock()
	_ = nn.sync(tx)
}
