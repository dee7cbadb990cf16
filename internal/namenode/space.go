package namenode

import "time"

// scheduledTimeout is how long a block placed on a datanode counts against
// its free space without being reported received: a pipeline that failed
// before its replica was finalized never reports it. HDFS rolls its
// blocks-scheduled counts over on the same ten-minute period.
const scheduledTimeout = 10 * time.Minute

// spaceEstimate corrects a datanode's last heartbeat for what happened
// since, as HDFS's DatanodeDescriptor counts blocks scheduled: without it
// a writer that outpaces heartbeats (a few milliseconds a block against
// seconds between heartbeats) gets one node placed again and again on the
// strength of space it already handed out, and the node's disk runs past
// its reserve into ENOSPC. Guarded by NameNode.mu.
type spaceEstimate struct {
	scheduled      map[uint64]scheduledBlock // blocks placed here, not yet reported received
	scheduledBytes int64                     // sum of scheduled's bytes
	// received is the bytes of replicas reported received since the last
	// heartbeat: no longer scheduled, but not yet in a measured remaining.
	received int64
}

type scheduledBlock struct {
	bytes int64
	at    time.Time
}

// schedule counts a block placed on the node against its space until the
// node reports it received.
func (s *spaceEstimate) schedule(block uint64, bytes int64, now time.Time) {
	if s.scheduled == nil {
		s.scheduled = map[uint64]scheduledBlock{}
	}
	if old, ok := s.scheduled[block]; ok {
		s.scheduledBytes -= old.bytes
	}
	s.scheduled[block] = scheduledBlock{bytes: bytes, at: now}
	s.scheduledBytes += bytes
}

// receivedReplica moves a finalized replica from scheduled to received.
func (s *spaceEstimate) receivedReplica(block uint64, bytes int64) {
	if old, ok := s.scheduled[block]; ok {
		delete(s.scheduled, block)
		s.scheduledBytes -= old.bytes
	}
	s.received += bytes
}

// heartbeat: the remaining space just reported was measured after every
// replica received so far; blocks scheduled long ago and never received
// are forgotten.
func (s *spaceEstimate) heartbeat(now time.Time) {
	s.received = 0
	for id, b := range s.scheduled {
		if now.Sub(b.at) > scheduledTimeout {
			delete(s.scheduled, id)
			s.scheduledBytes -= b.bytes
		}
	}
}

// remaining is the node's free space for placement: the last remaining it
// reported, less what it received since and what is scheduled on it.
func (s *spaceEstimate) remaining(reported int64) int64 {
	return reported - s.received - s.scheduledBytes
}

// scheduleSpaceLocked counts a block of the given size against each target's
// free space until the target reports the replica received.
func (nn *NameNode) scheduleSpaceLocked(targets []string, block uint64, bytes int64) {
	now := nn.clock()
	for _, id := range targets {
		if dn := nn.nodes[id]; dn != nil {
			dn.space.schedule(block, bytes, now)
		}
	}
}
