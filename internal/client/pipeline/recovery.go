package pipeline

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// recoverFailed is Algorithm 4: the streamer has stopped sending the
// current block; every pipeline in the error set is recovered in turn
// (Algorithm 3), then the caller resumes.
func (s *Stream) recoverFailed() error {
	for {
		s.mu.Lock()
		if s.aborted {
			s.mu.Unlock()
			return s.Err()
		}
		var p *pipe
		for _, q := range s.pipes {
			if q.failed != nil {
				p = q
				break
			}
		}
		s.mu.Unlock()
		if p == nil {
			return nil
		}
		if err := s.recoverPipe(p); err != nil {
			return err
		}
	}
}

// maxRecoveryRounds bounds the rebuild attempts of one failure beyond one
// per node, so a flapping node cannot loop forever.
const maxRecoveryRounds = 2

// recoverPipe is Algorithm 3 for one pipeline: close its streams, drop the
// node to blame, optionally add a replacement holding the acknowledged
// prefix, bump the generation stamp, rebuild the pipeline in
// PIPELINE_SETUP_STREAMING_RECOVERY and resend the unacknowledged packets.
func (s *Stream) recoverPipe(p *pipe) error {
	p.close()
	<-p.responderDone
	p.waitSender()
	s.mu.Lock()
	cause, bad := p.failed, p.bad
	p.recovered = true
	acked := p.acked
	s.mu.Unlock()
	if bad < 0 {
		// A broken connection without a status: rebuild with every node
		// first, so pipeline setup names the dead one (first_bad_link, or
		// a failed connect to the first). Without progress since the last
		// such attempt, blame the first node as HDFS does.
		if p.unexplainedAt == acked {
			bad = 0
		}
		p.unexplainedAt = acked
	}
	block := p.block
	rounds := len(p.nodes) + maxRecoveryRounds
	for round := 0; ; round++ {
		if bad >= 0 && bad < len(p.nodes) {
			n := p.nodes[bad]
			s.log.Warn("datanode failed in pipeline; recovering", "block", block.GetBlockId(), "node", n.label(), "err", cause)
			p.gone = append(p.gone, n)
			s.excluded[n.GetId()] = true
			p.nodes = append(p.nodes[:bad:bad], p.nodes[bad+1:]...)
		}
		if len(p.nodes) == 0 {
			return fmt.Errorf("block %d: every datanode of its pipeline failed (%s): %w", block.GetBlockId(), labels(p.gone), cause)
		}
		if round >= rounds {
			return fmt.Errorf("block %d: pipeline recovery gave up after %d attempts: %w", block.GetBlockId(), round, cause)
		}
		if s.cfg.Replace.NeedReplacement(s.cfg.Replication, len(p.nodes)) {
			s.addReplacement(p, acked)
		}
		newGS, token, err := s.bumpGS(block, p.nodes)
		if err != nil {
			return err
		}
		old := proto.Clone(block).(*dfspb.ExtendedBlock)
		old.NumBytes = acked
		conn, err := s.connect(p.nodes, &dfspb.WriteBlockOp{
			Block: old, Stage: dfspb.WriteStage_PIPELINE_SETUP_STREAMING_RECOVERY, Token: token, LatestGs: newGS, Mode: p.mode,
		})
		if err != nil {
			if p.lastQueued && alreadyFinalized(err) {
				// The first survivor holds the block finalized and will not
				// take it back (datanodes reopen a finalized replica for
				// recovery only when it has at least the acknowledged
				// bytes under an older stamp, so this is a stamp race).
				// Nothing to rebuild: the namenode counts the finalized
				// replicas and re-replicates the rest.
				s.log.Info("block already finalized on the surviving datanodes; no pipeline recovery needed",
					"block", block.GetBlockId(), "nodes", labels(p.nodes), "err", err)
				s.mu.Lock()
				p.done, p.failed = true, nil
				s.releaseAllLocked(p)
				s.cond.Broadcast()
				s.mu.Unlock()
				return nil
			}
			var se *setupError
			bad, cause = 0, err
			if errors.As(err, &se) {
				bad = se.bad
			}
			continue
		}
		if err := s.updatePipeline(block, newGS, p.nodes); err != nil {
			conn.Close()
			return err
		}
		block.GenerationStamp = newGS
		p.token = token
		s.attach(p, conn)
		return s.resend(p)
	}
}

// alreadyFinalized recognises a datanode refusing a recovery because its
// replica is finalized: the node holds the complete block.
func alreadyFinalized(err error) bool {
	var st *datatransfer.StatusError
	if !errors.As(err, &st) {
		return false
	}
	return st.Status == dfspb.OpStatus_OP_STATUS_ERROR_EXISTS
}

// resend writes the unacknowledged packets again, numbered from 0 on the
// new connection.
func (s *Stream) resend(p *pipe) error {
	s.mu.Lock()
	pkts := append([]*datatransfer.Packet(nil), p.unacked...)
	for _, pkt := range pkts {
		pkt.Header.Seqno = p.nextSeq
		p.nextSeq++
		pkt.Header.Put(pkt.Wire()[:datatransfer.PacketHeaderLen])
	}
	s.mu.Unlock()
	s.log.Info("pipeline recovered", "block", p.block.GetBlockId(), "gs", p.block.GetGenerationStamp(),
		"nodes", labels(p.nodes), "resend_packets", len(pkts))
	if s.cfg.Strategy.Handoff() == Queued {
		s.startSender(p) // it writes the ack queue from its start
		return nil
	}
	for _, pkt := range pkts {
		if err := s.writePacket(p, pkt); err != nil {
			s.writeFailed(p, err)
			return nil // the next recoverFailed round handles it
		}
	}
	s.lastSend = time.Now()
	return nil
}

// bumpGS gets a new generation stamp for block and a token for the
// recovered pipeline of nodes (datanodes dial only the nodes it names).
func (s *Stream) bumpGS(block *dfspb.ExtendedBlock, nodes []node) (uint64, *dfspb.BlockToken, error) {
	ctx, cancel := s.rpcCtx()
	defer cancel()
	resp, err := s.cfg.Namenode.UpdateBlockForPipeline(ctx, &dfspb.UpdateBlockForPipelineRequest{Block: block, ClientName: s.cfg.ClientName, Nodes: ids(nodes)})
	if err != nil {
		return 0, nil, &NamenodeError{Op: "updateBlockForPipeline", Err: err}
	}
	gs := resp.GetBlock().GetBlock().GetGenerationStamp()
	if gs <= block.GetGenerationStamp() {
		return 0, nil, &NamenodeError{Op: "updateBlockForPipeline", Err: fmt.Errorf("new generation stamp %d is not above %d", gs, block.GetGenerationStamp())}
	}
	return gs, resp.GetBlock().GetToken(), nil
}

func (s *Stream) updatePipeline(block *dfspb.ExtendedBlock, newGS uint64, nodes []node) error {
	nb := proto.Clone(block).(*dfspb.ExtendedBlock)
	nb.GenerationStamp = newGS
	ctx, cancel := s.rpcCtx()
	defer cancel()
	_, err := s.cfg.Namenode.UpdatePipeline(ctx, &dfspb.UpdatePipelineRequest{
		ClientName: s.cfg.ClientName, OldBlock: block, NewBlock: nb, NewNodes: ids(nodes),
	})
	if err != nil {
		return &NamenodeError{Op: "updatePipeline", Err: err}
	}
	return nil
}

// addReplacement asks the namenode for one more datanode and copies the
// acknowledged prefix to it from a survivor (TRANSFER_BLOCK). On any
// failure the pipeline continues without it: the namenode re-replicates
// the block once it is complete.
func (s *Stream) addReplacement(p *pipe, acked int64) {
	exclude := ids(p.gone)
	s.mu.Lock()
	for _, q := range s.pipes {
		if q != p && !q.done {
			exclude = append(exclude, ids(q.nodes)...)
		}
	}
	s.mu.Unlock()
	for id := range s.excluded {
		exclude = append(exclude, id)
	}
	blk := proto.Clone(p.block).(*dfspb.ExtendedBlock)
	blk.NumBytes = acked
	ctx, cancel := s.rpcCtx()
	resp, err := s.cfg.Namenode.GetAdditionalDatanode(ctx, &dfspb.GetAdditionalDatanodeRequest{
		Path: s.cfg.Path, Block: blk, Existing: ids(p.nodes), Exclude: exclude, NumAdditional: 1,
		ClientName: s.cfg.ClientName, FileId: s.cfg.FileID,
	})
	cancel()
	if err != nil {
		s.log.Warn("no replacement datanode; continuing on the survivors", "block", blk.GetBlockId(), "err", err)
		return
	}
	have := map[string]bool{}
	for _, n := range p.nodes {
		have[n.GetId()] = true
	}
	var extra *dfspb.DatanodeInfo
	for _, d := range resp.GetBlock().GetLocations() {
		if !have[d.GetId()] {
			extra = d
			break
		}
	}
	if extra == nil {
		s.log.Warn("namenode offered no new datanode; continuing on the survivors", "block", blk.GetBlockId())
		return
	}
	// The copy needs the namenode's token for it: COPY access naming the
	// new node, which the pipeline's write token does not.
	token := resp.GetBlock().GetToken()
	for _, src := range p.nodes {
		if err := s.transfer(src, extra, blk, token); err != nil {
			s.log.Warn("copying the block prefix to the replacement failed", "block", blk.GetBlockId(), "from", src.label(), "to", nodeLabel(extra), "err", err)
			continue
		}
		p.nodes = append(p.nodes, node{extra})
		s.log.Info("replacement datanode added", "block", blk.GetBlockId(), "node", nodeLabel(extra), "bytes", acked)
		return
	}
}

// transfer asks src to copy its prefix of blk to dst (TRANSFER_BLOCK).
func (s *Stream) transfer(src node, dst *dfspb.DatanodeInfo, blk *dfspb.ExtendedBlock, token *dfspb.BlockToken) error {
	ctx, cancel := s.rpcCtx()
	defer cancel()
	conn, err := s.cfg.Dial(ctx, src.addr())
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(s.cfg.RPCTimeout))
	if err := datatransfer.WriteOp(conn, &dfspb.TransferBlockOp{Block: blk, Targets: []*dfspb.DatanodeInfo{dst}, ClientName: s.cfg.ClientName, Token: token}); err != nil {
		return err
	}
	resp, err := datatransfer.ReadResponse(conn)
	if err != nil {
		return err
	}
	return datatransfer.ResponseError(resp)
}
