package namenode

import (
	"slices"
	"time"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/fsstate"
)

// Replicas reported to a standby before the edit that makes them
// sensible (HDFS's PendingDataNodeMessages). A datanode sends its
// incremental reports to every member of the group at once, but a
// follower applies an entry only after the leader has told it the entry
// is committed, which can be a commit round after the client already
// holds the block and has written it. A report of a block the standby
// does not know yet, or at a generation stamp from its future, is kept
// here and applied when the edit that creates or restamps the block is
// (haFSM.Apply), instead of being refused as an orphan: refused, the
// replica stayed unknown to the standby until the datanode's next full
// report, and a standby that took over meanwhile answered reads of the
// newest blocks with "no live replica" (a 30-minute chaos run: 79 failed
// reads, each within seconds of a failover). On taking over, what is
// still held is applied or, for blocks the group never made, invalidated
// as the active does with any orphan.

// maxEarlyReports bounds what a standby holds (a replica is a few dozen
// bytes); past it a report is dropped as before, and the datanode's next
// full report, which the new active asks for when it takes over, finds
// the replica.
const maxEarlyReports = 1 << 16

// earlyMaxAge: a report held this long waits for an edit that is not
// coming (its block was deleted before the standby heard of it); it is
// swept when the table is full.
const earlyMaxAge = time.Minute

type earlyReport struct {
	node string
	rep  blockmap.Reported
	at   time.Time
}

type earlyReports struct {
	by map[uint64][]earlyReport // block id → one report per datanode, the latest
	n  int
}

// holdEarlyLocked keeps a standby's report of rep from node when the block
// map cannot take it yet: the block is unknown, or the report's stamp is
// newer than the block's. It says whether it did; an active holds nothing.
func (nn *NameNode) holdEarlyLocked(node string, rep blockmap.Reported) bool {
	if nn.ha == nil || nn.isActive() {
		return false
	}
	if b := nn.state.Blocks().Get(rep.ID); b != nil && rep.GS <= b.GS {
		return false
	}
	e := &nn.early
	if e.by == nil {
		e.by = map[uint64][]earlyReport{}
	}
	now := nn.clock()
	held := e.by[rep.ID]
	for i := range held {
		if held[i].node == node {
			held[i] = earlyReport{node: node, rep: rep, at: now}
			return true
		}
	}
	if e.n >= maxEarlyReports {
		e.sweep(now)
		if e.n >= maxEarlyReports {
			nn.metrics.earlyDropped.Inc()
			return false
		}
	}
	e.by[rep.ID] = append(held, earlyReport{node: node, rep: rep, at: now})
	e.n++
	return true
}

// dropEarlyLocked forgets node's held report of block id (the datanode
// deleted the replica since).
func (nn *NameNode) dropEarlyLocked(node string, id uint64) {
	e := &nn.early
	held := e.by[id]
	if len(held) == 0 {
		return
	}
	n := len(held)
	e.keep(id, n, slices.DeleteFunc(held, func(r earlyReport) bool { return r.node == node }))
}

// sweep drops the reports held longer than earlyMaxAge.
func (e *earlyReports) sweep(now time.Time) {
	for id, held := range e.by {
		n := len(held)
		e.keep(id, n, slices.DeleteFunc(held, func(r earlyReport) bool { return now.Sub(r.at) >= earlyMaxAge }))
	}
}

// keep makes kept the reports held for block id, of which there were n,
// and counts the difference.
func (e *earlyReports) keep(id uint64, n int, kept []earlyReport) {
	e.n -= n - len(kept)
	if len(kept) == 0 {
		delete(e.by, id)
	} else {
		e.by[id] = kept
	}
}

// applyEarlyLocked applies the held reports of the given blocks that the
// block map can take now (an edit just made or restamped them).
func (nn *NameNode) applyEarlyLocked(ids []uint64) {
	e := &nn.early
	if e.n == 0 {
		return
	}
	for _, id := range ids {
		held := e.by[id]
		if len(held) == 0 {
			continue
		}
		b := nn.state.Blocks().Get(id)
		if b == nil {
			continue
		}
		n := len(held)
		e.keep(id, n, slices.DeleteFunc(held, func(r earlyReport) bool {
			if r.rep.GS > b.GS {
				return false // still ahead: a later edit restamps the block
			}
			nn.addReportedLocked(r.node, r.rep)
			return true
		}))
	}
}

// takeEarlyLocked, on taking over, applies every held report the block
// map can take; the others name blocks the group never made (or made
// and deleted), which the active invalidates like any orphan.
func (nn *NameNode) takeEarlyLocked() {
	e := &nn.early
	held := e.by
	nn.early = earlyReports{}
	for id, reps := range held {
		b := nn.state.Blocks().Get(id)
		for _, r := range reps {
			if b != nil && r.rep.GS <= b.GS {
				nn.addReportedLocked(r.node, r.rep)
			} else if b == nil {
				nn.invalidateLocked(r.node, fsstate.BlockRef{ID: id, GS: r.rep.GS, Len: r.rep.NumBytes})
			}
			// A stamp newer than the block's that the group never
			// recorded: the full report asked for on takeover judges it.
		}
	}
}

// addReportedLocked records a replica a datanode reported, as an
// incremental report does.
func (nn *NameNode) addReportedLocked(node string, rep blockmap.Reported) {
	switch nn.state.Blocks().AddReplica(node, rep) {
	case blockmap.Unknown:
		nn.invalidateLocked(node, fsstate.BlockRef{ID: rep.ID, GS: rep.GS, Len: rep.NumBytes})
	case blockmap.Accepted:
		if rep.State == blockmap.Finalized {
			nn.replicaAddedLocked(node, nn.state.Blocks().Get(rep.ID))
		}
	}
}
