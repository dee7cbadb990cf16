package namenode

import (
	"time"

	"smarth/internal/namenode/blockmap"
)

// deletions are the replicas of live blocks this namenode has asked
// datanodes to delete (a closed file's unfinished remnant, an excess or
// corrupt copy, a balancer move's source) and not yet heard deleted.
//
// The replication monitor places no new copy of such a block on such a
// node meanwhile. A deletion names the block by id and generation stamp,
// as a fresh copy would be named, so a copy that reached the node before
// the deletion did would be deleted with it: the node reports it received,
// then deleted, and the block is under-replicated again (or, if the two
// reports cross, counted on a disk that no longer holds it). A CI run of
// TestUnfinishedReplicaOfClosedFileIsReplaced waited 60 s on that.
//
// An entry ends when the node reports the replica deleted, when a full
// report leaves it out, when the node re-registers or dies, or after ttl
// (a datanode that had already lost the replica says nothing).
// Guarded by NameNode.mu.
type deletions map[uint64]map[string]time.Time // block id → node → when asked

func (d deletions) add(node string, id uint64, now time.Time) {
	m := d[id]
	if m == nil {
		m = map[string]time.Time{}
		d[id] = m
	}
	m[node] = now
}

func (d deletions) done(node string, id uint64) {
	if m := d[id]; m != nil {
		delete(m, node)
		if len(m) == 0 {
			delete(d, id)
		}
	}
}

// exclude adds to ex the nodes still deleting a replica of block id.
func (d deletions) exclude(ex map[string]bool, id uint64, now time.Time, ttl time.Duration) {
	for node, at := range d[id] {
		if now.Sub(at) < ttl {
			ex[node] = true
		}
	}
}

// forgetNode drops every entry of node (it re-registered or died: what it
// holds comes with its next full report).
func (d deletions) forgetNode(node string) {
	for id := range d {
		d.done(node, id)
	}
}

// reported ends node's entries for the blocks its full report left out.
// It looks only for node's own entries (usually none or a few) in the
// report, so a report of a million replicas costs one pass, no set.
func (d deletions) reported(node string, reps []blockmap.Reported) {
	mine := map[uint64]bool{}
	for id, m := range d {
		if _, ok := m[node]; ok {
			mine[id] = false
		}
	}
	if len(mine) == 0 {
		return
	}
	for _, r := range reps {
		if _, ok := mine[r.ID]; ok {
			mine[r.ID] = true
		}
	}
	for id, kept := range mine {
		if !kept {
			d.done(node, id)
		}
	}
}

// sweep drops entries older than ttl.
func (d deletions) sweep(now time.Time, ttl time.Duration) {
	for id, m := range d {
		for node, at := range m {
			if now.Sub(at) >= ttl {
				d.done(node, id)
			}
		}
	}
}
