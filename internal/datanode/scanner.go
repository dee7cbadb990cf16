package datanode

import (
	"cmp"
	"errors"
	"sync"
	"syscall"
	"time"

	"smarth/internal/datanode/store"
	"smarth/internal/rpc/dfspb"
)

// scanner is the block scanner: every scan_interval it verifies every
// finalized replica against its checksums, reading at most scan_bandwidth
// bytes per second, and it verifies at once any replica a read or transfer
// found suspect. A corrupt replica is marked (never served again) and
// reported to the namenode, which deletes it and re-replicates the block.
type scanner struct {
	d        *DataNode
	suspects chan store.Replica

	mu       sync.Mutex
	reported map[uint64]uint64 // guarded by mu: block id → generation stamp reported corrupt
}

func newScanner(d *DataNode) *scanner {
	return &scanner{d: d, suspects: make(chan store.Replica, 64), reported: map[uint64]uint64{}}
}

func (s *scanner) run() {
	timer := time.NewTimer(s.d.cfg.ScanInterval)
	defer timer.Stop()
	for {
		select {
		case <-s.d.ctx.Done():
			return
		case r := <-s.suspects:
			s.verify(r, nil)
		case <-timer.C:
			s.pass()
			timer.Reset(s.d.cfg.ScanInterval)
		}
	}
}

// suspect queues a replica for immediate verification.
func (s *scanner) suspect(r store.Replica) {
	select {
	case s.suspects <- r:
	default: // the queue is full of suspects already; the next pass gets it
	}
}

// pass verifies every finalized replica once.
func (s *scanner) pass() {
	start := time.Now()
	var bytes int64
	throttle := func(n int) {
		bytes += int64(n)
		if bw := s.d.cfg.ScanBandwidth; bw > 0 {
			ahead := time.Duration(float64(bytes)/float64(bw)*float64(time.Second)) - time.Since(start)
			if ahead > 0 {
				s.d.sleep(ahead)
			}
		}
	}
	n := 0
	for _, r := range s.d.store.Replicas() {
		if s.d.ctx.Err() != nil {
			return
		}
		if r.Corrupt {
			s.reportBad(r) // again, if reporting it failed before
			continue
		}
		if r.State != store.Finalized {
			continue
		}
		s.verify(r, throttle)
		n++
	}
	s.d.log.Debug("block scan pass done", "replicas", n, "bytes", bytes, "duration", time.Since(start).Seconds())
}

func (s *scanner) verify(r store.Replica, throttle func(int)) {
	err := s.d.store.Verify(r.BlockID, r.GS, -1, throttle)
	switch {
	case err == nil:
		s.d.metrics.blocksVerified.Inc()
	case errors.Is(err, store.ErrCorrupt):
		s.d.metrics.checksumFailures.Inc()
		s.corrupt(r, err)
	case errors.Is(err, store.ErrNotFound):
		// deleted or replaced meanwhile
	case errors.Is(err, syscall.EIO):
		// The disk cannot give the bytes back: the replica is as lost
		// as a corrupt one, and the namenode must copy it from another.
		s.corrupt(r, err)
	default:
		s.d.log.Warn("block scan: cannot read replica", "block", r.Name(), "err", err)
	}
}

// corrupt marks a replica bad and reports it, once per generation stamp.
func (s *scanner) corrupt(r store.Replica, cause error) {
	s.d.store.MarkCorrupt(r.BlockID, r.GS)
	s.d.log.Warn("corrupt replica", "block", r.Name(), "err", cause)
	s.reportBad(r)
}

func (s *scanner) reportBad(r store.Replica) {
	if s.d.killed.Load() || len(s.d.actors) == 0 {
		return
	}
	s.mu.Lock()
	if s.reported[r.BlockID] == r.GS {
		s.mu.Unlock()
		return
	}
	s.reported[r.BlockID] = r.GS
	s.mu.Unlock()
	ctx, cancel := s.d.rpcContext(rpcTimeout)
	defer cancel()
	// Every namenode hears of it, as of every replica (HDFS's
	// BPOfferService.reportBadBlocks): the next active must not pick it.
	var err error
	for _, a := range s.d.actors {
		_, e := a.nn.ReportBadBlocks(ctx, &dfspb.DatanodeReportBadBlocksRequest{DatanodeId: s.d.ID(), Blocks: []*dfspb.ExtendedBlock{extended(r)}})
		err = cmp.Or(err, e)
	}
	if err != nil {
		s.d.log.Warn("cannot report corrupt replica; the next scan retries", "block", r.Name(), "err", rpcError("report bad blocks", err))
		s.mu.Lock()
		delete(s.reported, r.BlockID)
		s.mu.Unlock()
	}
}
