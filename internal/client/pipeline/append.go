package pipeline

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"smarth/internal/rpc/dfspb"
)

// startAfter sets the stream up to write after what a file already holds
// (an append): the partial last block to continue, or the full last block
// the first new block follows. Both count among the file's blocks, so that
// Finish reports them with their final stamp and length.
func (s *Stream) startAfter(last *dfspb.LocatedBlock, previous *dfspb.ExtendedBlock) {
	switch {
	case last != nil && last.GetBlock() != nil:
		s.appendTo = last
		s.blocks = []*dfspb.ExtendedBlock{proto.Clone(last.GetBlock()).(*dfspb.ExtendedBlock)}
	case previous != nil && previous.GetBlockId() != 0:
		s.blocks = []*dfspb.ExtendedBlock{proto.Clone(previous).(*dfspb.ExtendedBlock)}
	}
}

// startAppend builds the pipeline that continues a file's partial last
// block (HDFS's PIPELINE_SETUP_APPEND): a new generation stamp from the
// namenode, then the datanodes holding the block reopen their finalized
// replicas under it at the block's length, and the namenode records the
// pipeline. A node that refuses or cannot be reached is dropped and the
// pipeline built again from the rest (each attempt with a new stamp); the
// namenode re-replicates the block once the file is closed.
//
// The block has one pipeline whatever the write mode: its bytes must
// follow the ones already stored on exactly these nodes. It runs classic
// on the wire (no FIRST_NODE_FINISH_ACK, no pipeline claim), and the next
// block starts once every node acknowledged it; blocks after it follow the
// strategy.
func (s *Stream) startAppend() error {
	lb := s.appendTo
	s.appendTo = nil
	blk := s.blocks[0]
	nodes := nodesOf(lb.GetLocations())
	if len(nodes) == 0 {
		return fmt.Errorf("block %d (the file's last, %d bytes) has no live datanode holding it: cannot append to it", blk.GetBlockId(), blk.GetNumBytes())
	}
	var lastErr error
	for len(nodes) > 0 {
		newGS, token, err := s.bumpGS(blk, nodes)
		if err != nil {
			return err
		}
		conn, err := s.connect(nodes, &dfspb.WriteBlockOp{
			Block: proto.Clone(blk).(*dfspb.ExtendedBlock), Stage: dfspb.WriteStage_PIPELINE_SETUP_APPEND,
			Token: token, LatestGs: newGS, Mode: dfspb.WriteMode_CLASSIC,
		})
		if err != nil {
			lastErr = err
			bad := 0
			if se, ok := err.(*setupError); ok {
				bad = se.bad
			}
			s.log.Warn("append pipeline setup failed; retrying without the node", "block", blk.GetBlockId(), "node", nodes[bad].label(), "err", err)
			s.excluded[nodes[bad].GetId()] = true
			nodes = append(nodes[:bad:bad], nodes[bad+1:]...)
			continue
		}
		if err := s.updatePipeline(blk, newGS, nodes); err != nil {
			conn.Close()
			return err
		}
		blk.GenerationStamp = newGS
		// recovered: the block's bytes are not all this write's, so its
		// time is no speed sample.
		p := &pipe{block: blk, token: token, nodes: nodes, unexplainedAt: -1, mode: dfspb.WriteMode_CLASSIC,
			sent: blk.GetNumBytes(), recovered: true}
		p.acked = blk.GetNumBytes()
		s.attach(p, conn)
		s.mu.Lock()
		s.pipes = append(s.pipes, p)
		s.mu.Unlock()
		if s.cfg.Strategy.Handoff() == Queued {
			s.startSender(p)
		}
		s.cur = p
		s.log.Debug("append pipeline open", "block", blk.GetBlockId(), "gs", newGS, "bytes", blk.GetNumBytes(), "nodes", labels(nodes))
		return nil
	}
	return fmt.Errorf("block %d: no datanode holding it could reopen it for append: %w", blk.GetBlockId(), lastErr)
}
