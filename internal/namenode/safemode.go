package namenode

import (
	"fmt"
	"math"
	"time"

	"smarth/internal/namenode/blockmap"
)

// safeMode is the read-only start-up state (HDFS SafeModeInfo): the
// namenode knows its files but not yet where their blocks are, so it
// neither accepts mutations nor deletes or copies replicas until enough
// datanodes have reported. Guarded by NameNode.mu.
type safeMode struct {
	on      bool
	manual  bool      // entered by an administrator: only an administrator leaves
	reached time.Time // when the threshold was reached (zero: not reached)
	total   int       // complete blocks
	safe    int       // of them, with at least min_replication reported
}

func (s safeMode) needed(cfg Config) int {
	return int(math.Ceil(cfg.SafeModeThreshold * float64(s.total)))
}

// reason explains the state in the words errors and the admin tool use.
func (s safeMode) reason(cfg Config) string {
	switch {
	case !s.on:
		return "safe mode is off"
	case s.manual:
		return "namenode is in safe mode: entered manually; leave it with `smarth admin safemode leave`"
	case !s.reached.IsZero():
		return fmt.Sprintf("namenode is in safe mode: %d of %d blocks reported; leaving after the %v extension", s.safe, s.total, cfg.SafeModeExtension)
	}
	return fmt.Sprintf("namenode is in safe mode: %d of %d blocks reported (need %d, threshold %.4g); waiting for datanodes",
		s.safe, s.total, s.needed(cfg), cfg.SafeModeThreshold)
}

// initSafeMode starts in safe mode unless there is nothing to wait for.
func (nn *NameNode) initSafeMode(now time.Time) {
	nn.safe = safeMode{on: true}
	nn.countSafeLocked()
	if nn.safe.total == 0 {
		nn.safe.on = false
		return
	}
	nn.checkSafeMode(now)
}

func (nn *NameNode) countSafeLocked() {
	total, safe := 0, 0
	// A count needs no order: Range spares sorting every block id.
	nn.state.Blocks().Range(func(b *blockmap.Block) bool {
		// A committed block (a file's block before its last, replayed from
		// the edit log while the file is open) is counted as HDFS counts
		// it after forcing such blocks complete on load: otherwise a
		// namenode restarted under a writer leaves safe mode with no
		// datanode yet registered and fails the writer's next block.
		if b.State == blockmap.Complete || b.State == blockmap.Committed {
			total++
			if b.Count(nn.isLive).Live >= nn.cfg.MinReplication {
				safe++
			}
		}
		return true
	})
	nn.safe.total, nn.safe.safe = total, safe
}

// checkSafeMode leaves automatic safe mode once the threshold has held
// for the extension. Callers hold nn.mu.
func (nn *NameNode) checkSafeMode(now time.Time) {
	if !nn.safe.on || nn.safe.manual {
		return
	}
	nn.countSafeLocked()
	if nn.safe.safe < nn.safe.needed(nn.cfg) {
		nn.safe.reached = time.Time{}
		return
	}
	if nn.safe.reached.IsZero() {
		nn.safe.reached = now
	}
	if now.Sub(nn.safe.reached) >= nn.cfg.SafeModeExtension {
		nn.leaveSafeModeLocked(now, fmt.Sprintf("%d of %d blocks reported", nn.safe.safe, nn.safe.total))
	}
}

func (nn *NameNode) enterSafeModeLocked(now time.Time) {
	if !nn.safe.on {
		nn.logger.Warn("entering safe mode manually")
	}
	nn.safe.on, nn.safe.manual, nn.safe.reached = true, true, time.Time{}
	nn.countSafeLocked()
}

func (nn *NameNode) leaveSafeModeLocked(now time.Time, why string) {
	if !nn.safe.on {
		return
	}
	nn.safe.on, nn.safe.manual, nn.safe.reached = false, false, time.Time{}
	nn.logger.Info("left safe mode", "why", why, "postponed_deletions", len(nn.postponed))
	for _, o := range nn.postponed {
		nn.invalidateLocked(o.Node, o.Block)
	}
	nn.postponed = nil
	// Leases ran on while nobody could renew them through a mutation;
	// give writers a fresh start.
	for _, l := range nn.leases.byHolder {
		l.renewed = now
	}
	nn.dirty = true
}
