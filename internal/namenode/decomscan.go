package namenode

// defaultDecommissionBlocksPerInterval is HDFS's
// dfs.namenode.decommission.blocks.per.interval default.
const defaultDecommissionBlocksPerInterval = 500_000

// decomScan is one decommissioning datanode's progress, checked a bounded
// number of blocks per replication-monitor tick as HDFS's
// DatanodeAdminDefaultMonitor does (dfs.namenode.decommission.blocks.per.
// interval), so a node of millions of blocks does not hold the namespace
// lock for a whole scan every tick. A full pass over the node's blocks
// notes those not yet fully replicated without it; later passes recheck
// only those; when none is left, one more full pass confirms (a replica
// reported late is caught) before the node is DECOMMISSIONED.
type decomScan struct {
	todo []uint64 // blocks still to check in this pass
	next []uint64 // blocks this pass found short of replication
	full bool     // this pass covers every block of the node
}

// step checks at most budget blocks: all lists the node's blocks (for a
// full pass), short says whether a block is not yet fully replicated on
// in-service nodes. It returns the blocks checked and whether the node
// is done.
func (s *decomScan) step(budget int, all func() []uint64, short func(uint64) bool) (used int, done bool) {
	for {
		if len(s.todo) == 0 {
			switch {
			case s.full && len(s.next) == 0:
				return used, true // a full pass found nothing short
			case len(s.next) == 0:
				// The rechecks are through: confirm with a full pass.
				s.todo, s.full = all(), true
				if len(s.todo) == 0 {
					return used, true
				}
			default:
				s.todo, s.next, s.full = s.next, nil, false
			}
			if !s.full && used > 0 {
				// A recheck pass starts on the next tick: blocks short
				// now are rarely fixed within the same tick.
				return used, false
			}
		}
		for len(s.todo) > 0 && used < budget {
			b := s.todo[len(s.todo)-1]
			s.todo = s.todo[:len(s.todo)-1]
			used++
			if short(b) {
				s.next = append(s.next, b)
			}
		}
		if used >= budget {
			return used, false
		}
	}
}
