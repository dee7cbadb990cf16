package pipeline

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// ErrNamenode wraps namenode refusals met while writing, so the client can
// map them to its path errors.
type NamenodeError struct {
	Op  string
	Err error
}

func (e *NamenodeError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *NamenodeError) Unwrap() error { return e.Err }

func (s *Stream) rpcCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.ctx, s.cfg.RPCTimeout)
}

// startBlock asks the namenode for the next block and builds its pipeline.
// A pipeline that cannot be set up is abandoned and the block asked for
// again without the node to blame, up to SetupRetries times (HDFS).
func (s *Stream) startBlock() error {
	if err := s.waitSlot(); err != nil {
		return err
	}
	var lastErr error
	busyOnce := map[string]bool{} // refused as busy: skip for this block only
	for attempt := 0; attempt < s.cfg.SetupRetries; attempt++ {
		lb, err := s.addBlock(busyOnce)
		if err != nil {
			return err
		}
		targets := s.cfg.Strategy.Order(lb.GetLocations(), s.cfg.Speeds)
		if len(targets) == 0 {
			s.abandon(lb.GetBlock())
			return &NamenodeError{Op: "addBlock", Err: status.Error(codes.ResourceExhausted, "the namenode returned a block without datanodes")}
		}
		nodes := nodesOf(targets)
		blk := proto.Clone(lb.GetBlock()).(*dfspb.ExtendedBlock)
		blk.NumBytes = 0
		conn, err := s.connect(nodes, &dfspb.WriteBlockOp{
			Block: blk, Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE, Token: lb.GetToken(),
			ExpectedBytes: uint64(max(s.cfg.BlockSize, 0)),
		})
		if err == nil {
			p := &pipe{block: blk, token: lb.GetToken(), nodes: nodes, unexplainedAt: -1}
			s.attach(p, conn)
			s.mu.Lock()
			s.pipes = append(s.pipes, p)
			s.mu.Unlock()
			if s.cfg.Strategy.Handoff() == Queued {
				s.startSender(p)
			}
			s.blocks = append(s.blocks, blk)
			s.cur = p
			s.log.Debug("pipeline open", "block", blk.GetBlockId(), "nodes", labels(nodes))
			return nil
		}
		lastErr = err
		s.abandon(lb.GetBlock())
		var se *setupError
		bad := 0
		if errors.As(err, &se) {
			bad = se.bad
		}
		var st *datatransfer.StatusError
		if errors.As(err, &st) && st.Status == dfspb.OpStatus_OP_STATUS_ERROR_BUSY {
			busyOnce[nodes[bad].GetId()] = true
		} else {
			s.excluded[nodes[bad].GetId()] = true
		}
		s.log.Warn("pipeline setup failed; abandoning the block and retrying without the node",
			"block", blk.GetBlockId(), "node", nodes[bad].label(), "attempt", attempt+1, "err", err)
	}
	return fmt.Errorf("could not set up a pipeline for a new block after %d attempts: %w", s.cfg.SetupRetries, lastErr)
}

func (s *Stream) addBlock(busyOnce map[string]bool) (*dfspb.LocatedBlock, error) {
	req := &dfspb.AddBlockRequest{Path: s.cfg.Path, ClientName: s.cfg.ClientName, FileId: s.cfg.FileID, ClientHost: s.cfg.ClientHost}
	if n := len(s.blocks); n > 0 {
		req.Previous = proto.Clone(s.blocks[n-1]).(*dfspb.ExtendedBlock)
	}
	for id := range s.excluded {
		req.ExcludeNodes = append(req.ExcludeNodes, id)
	}
	for id := range busyOnce {
		req.ExcludeNodes = append(req.ExcludeNodes, id)
	}
	s.mu.Lock()
	req.BusyNodes = s.busyLocked()
	s.mu.Unlock()
	ctx, cancel := s.rpcCtx()
	defer cancel()
	resp, err := s.cfg.Namenode.AddBlock(ctx, req)
	if err != nil {
		return nil, &NamenodeError{Op: "addBlock", Err: err}
	}
	if resp.GetBlock() == nil || resp.GetBlock().GetBlock() == nil {
		return nil, &NamenodeError{Op: "addBlock", Err: errors.New("the namenode returned no block")}
	}
	s.writerRack = resp.GetWriterRack()
	return resp.GetBlock(), nil
}

func (s *Stream) abandon(b *dfspb.ExtendedBlock) {
	ctx, cancel := s.rpcCtx()
	defer cancel()
	_, err := s.cfg.Namenode.AbandonBlock(ctx, &dfspb.AbandonBlockRequest{Block: b, Path: s.cfg.Path, ClientName: s.cfg.ClientName, FileId: s.cfg.FileID})
	if err != nil {
		s.log.Warn("abandon block failed", "block", b.GetBlockId(), "err", err)
	}
}
