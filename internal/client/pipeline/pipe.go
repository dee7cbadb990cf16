package pipeline

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// pipe is one block's pipeline: a connection to its first datanode, the
// packets sent but not yet acknowledged by every node, and a responder
// goroutine reading acks. Fields marked "mu" are guarded by Stream.mu;
// the rest belong to the streamer goroutine.
type pipe struct {
	block *dfspb.ExtendedBlock // streamer: id, gs as established, final length once known
	token *dfspb.BlockToken
	nodes []node // streamer: the pipeline, first datanode first
	gone  []node // streamer: nodes dropped by recovery

	conn          net.Conn
	closeOnce     *sync.Once
	responderDone chan struct{} // closed when the current connection's responder exits
	// senderDone is closed when the current connection's sender exits; nil
	// unless the strategy hands off on Queued (see sendLoop).
	senderDone chan struct{}
	wmu        sync.Mutex // one Write at a time on conn: a sender's packets, the streamer's heartbeats

	sent       int64 // streamer: bytes queued on this block so far
	lastQueued bool  // streamer: the last-flag packet is queued
	recovered  bool  // streamer: the pipeline was rebuilt (speed sample skipped)
	paced      bool  // guarded by Stream.mu: the sender was held back (holdBackLocked; speed sample skipped)
	// mode is the write mode the datanodes are told, when not the
	// strategy's: an append's pipeline of a partial last block is classic.
	mode dfspb.WriteMode

	// guarded by Stream.mu
	unacked   []*datatransfer.Packet // sent, not acknowledged by every node, in seqno order
	written   int                    // Queued handoff: how many of unacked the sender has written on conn
	nextSeq   int64                  // next seqno on the current connection
	acked     int64                  // bytes acknowledged by every node
	firstSent time.Time
	fnfa      bool  // the first datanode has the whole block
	done      bool  // every node acked the last packet
	failed    error // why the pipeline failed, nil while healthy
	bad       int   // index in nodes of the node that failed, -1 unknown
	// unexplainedAt is the acked length at the last recovery from a failure
	// no status explained, -1 if none: a second one without progress
	// blames the first node.
	unexplainedAt int64
	gen           int // connection generation; older responders stand down
}

// node is a pipeline member.
type node struct{ *dfspb.DatanodeInfo }

func (n node) addr() string {
	return net.JoinHostPort(n.GetIpAddr(), strconv.Itoa(int(n.GetDataPort())))
}

func (n node) label() string { return nodeLabel(n.DatanodeInfo) }

func nodesOf(ds []*dfspb.DatanodeInfo) []node {
	out := make([]node, len(ds))
	for i, d := range ds {
		out[i] = node{d}
	}
	return out
}

func infos(ns []node) []*dfspb.DatanodeInfo {
	out := make([]*dfspb.DatanodeInfo, len(ns))
	for i, n := range ns {
		out[i] = n.DatanodeInfo
	}
	return out
}

func ids(ns []node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.GetId()
	}
	return out
}

func labels(ns []node) string {
	l := make([]string, len(ns))
	for i, n := range ns {
		l[i] = n.label()
	}
	return strings.Join(l, ", ")
}

func (p *pipe) write(b []byte, timeout time.Duration) error {
	return p.writeTo(p.conn, b, timeout)
}

func (p *pipe) writeTo(conn net.Conn, b []byte, timeout time.Duration) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_ = conn.SetWriteDeadline(time.Now().Add(timeout))
	_, err := conn.Write(b)
	return err
}

// waitSender waits for the current connection's sender, if any, to exit.
func (p *pipe) waitSender() {
	if p.senderDone != nil {
		<-p.senderDone
	}
}

func (p *pipe) close() {
	if p.conn != nil {
		p.closeOnce.Do(func() { p.conn.Close() })
	}
}

// releaseAllLocked returns the unacknowledged packets to the pool once the pipe
// is abandoned (stream failed or aborted, or the block turned out
// finalized). Called with s.mu held.
func (s *Stream) releaseAllLocked(p *pipe) {
	for _, pkt := range p.unacked {
		s.releaseLocked(pkt)
	}
	p.unacked = nil
}

// releaseLocked gives a packet that is done with (acknowledged by every
// node, or abandoned) back to the pool, unless the streamer's Write of it
// has not returned yet: then writePacket releases it once it has.
//
// The ack for a packet can be read before the Write that sent it returns:
// once the kernel has copied the bytes, the datanodes can store and ack
// them while the sending goroutine has not been scheduled again. A Write
// may read its buffer until it returns (the race detector marks the read
// after the write(2) call, and a wrapping net.Conn may read it later
// still), and nothing on the network orders that read before the
// responder's ack read. Reusing the buffer then would let the writer seal
// a new packet into bytes a send still reads.
func (s *Stream) releaseLocked(pkt *datatransfer.Packet) {
	if _, ok := s.inSend[pkt]; ok {
		s.inSend[pkt] = true
		return
	}
	pkt.Release()
}

// writePacket writes pkt, which is in p's ack queue, on p's connection.
// Until the Write returns the packet is marked in flight, so an ack (or an
// abandon) in the meantime leaves its release to this function.
func (s *Stream) writePacket(p *pipe, pkt *datatransfer.Packet) error {
	s.mu.Lock()
	wire := pkt.Wire()
	s.inSend[pkt] = false
	s.mu.Unlock()
	err := p.write(wire, s.cfg.IOTimeout)
	s.finishWriteOf(pkt)
	return err
}

// finishWriteOf releases pkt if it was acknowledged or abandoned while its
// Write ran.
func (s *Stream) finishWriteOf(pkt *datatransfer.Packet) {
	s.mu.Lock()
	if s.inSend[pkt] {
		pkt.Release()
	}
	delete(s.inSend, pkt)
	s.mu.Unlock()
}

// startSender starts the goroutine that writes p's queued packets on its
// current connection (Queued handoff): the streamer only queues them, so
// it can go on to the next block while this one's first hop is slow.
func (s *Stream) startSender(p *pipe) {
	s.mu.Lock()
	gen, conn, rd := p.gen, p.conn, p.responderDone
	done := make(chan struct{})
	p.senderDone = done
	s.mu.Unlock()
	go s.sendLoop(p, gen, conn, rd, done)
}

// sendLoop writes p's packets in order as the streamer queues them, until
// the block is acknowledged, the pipeline fails or is rebuilt (a new
// connection gets a new sender), or the stream stops. A write error fails
// the pipeline as the streamer's own writes do (see writeFailed).
func (s *Stream) sendLoop(p *pipe, gen int, conn net.Conn, responderDone, done chan struct{}) {
	defer close(done)
	for {
		s.mu.Lock()
		for p.gen == gen && !p.done && p.failed == nil && !s.aborted && !s.stopping && (p.written >= len(p.unacked) || s.holdBackLocked(p)) {
			s.cond.Wait()
		}
		if p.gen != gen || p.done || p.failed != nil || s.aborted || s.stopping {
			s.mu.Unlock()
			return
		}
		pkt := p.unacked[p.written]
		p.written++
		s.inSend[pkt] = false
		wire := pkt.Wire()
		s.mu.Unlock()
		err := p.writeTo(conn, wire, s.cfg.IOTimeout)
		s.finishWriteOf(pkt)
		if err == nil {
			continue
		}
		// The responder may still read an ack naming the node that really
		// failed downstream: give it a moment before closing.
		select {
		case <-responderDone:
		case <-time.After(min(s.cfg.IOTimeout, 5*time.Second)):
		}
		conn.Close()
		<-responderDone
		s.mu.Lock()
		if p.gen == gen && p.failed == nil && !p.done {
			p.failed, p.bad = fmt.Errorf("sending to %s: %w", p.nodes[0].label(), err), -1
		}
		s.cond.Broadcast()
		s.mu.Unlock()
		s.poke()
		return
	}
}

// setupError is a pipeline that could not be built; bad is the index of
// the node to blame.
type setupError struct {
	bad int
	err error
}

func (e *setupError) Error() string { return e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }

// connect builds the pipeline nodes[0] → nodes[1] → ... for op and returns
// the connection to nodes[0] once every node has accepted it.
func (s *Stream) connect(nodes []node, op *dfspb.WriteBlockOp) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.IOTimeout)
	defer cancel()
	conn, err := s.cfg.Dial(ctx, nodes[0].addr())
	if err != nil {
		return nil, &setupError{bad: 0, err: fmt.Errorf("connecting to %s: %w", nodes[0].label(), err)}
	}
	op.Targets = infos(nodes[1:])
	op.ClientName = s.cfg.ClientName
	if op.Mode == dfspb.WriteMode_WRITE_MODE_UNSPECIFIED {
		op.Mode = s.cfg.Strategy.Mode()
	}
	op.BytesPerChecksum = uint32(s.cfg.BytesPerChecksum)
	_ = conn.SetDeadline(time.Now().Add(s.cfg.IOTimeout))
	if err := datatransfer.WriteOp(conn, op); err != nil {
		conn.Close()
		return nil, &setupError{bad: 0, err: fmt.Errorf("sending write request to %s: %w", nodes[0].label(), err)}
	}
	resp, err := datatransfer.ReadResponse(conn)
	if err != nil {
		conn.Close()
		return nil, &setupError{bad: 0, err: fmt.Errorf("reading write response from %s: %w", nodes[0].label(), err)}
	}
	if err := datatransfer.ResponseError(resp); err != nil {
		conn.Close()
		bad := 0
		if l := resp.GetFirstBadLink(); l != "" {
			for i, n := range nodes {
				if n.addr() == l {
					bad = i
				}
			}
		}
		return nil, &setupError{bad: bad, err: fmt.Errorf("pipeline %s refused block %d: %w", labels(nodes), op.GetBlock().GetBlockId(), err)}
	}
	_ = conn.SetDeadline(time.Time{})
	return conn, nil
}

// attach makes conn p's connection and starts its responder.
func (s *Stream) attach(p *pipe, conn net.Conn) {
	s.mu.Lock()
	p.gen++
	gen := p.gen
	p.conn = conn
	p.closeOnce = new(sync.Once)
	p.responderDone = make(chan struct{})
	p.nextSeq = 0
	p.written = 0
	p.senderDone = nil
	p.failed, p.bad = nil, -1
	first := p.nodes[0].GetId()
	s.mu.Unlock()
	go s.respond(p, conn, gen, p.responderDone, first)
}

// respond reads acks for one connection of p until the block is fully
// acknowledged or the connection fails.
func (s *Stream) respond(p *pipe, conn net.Conn, gen int, done chan struct{}, firstID string) {
	defer close(done)
	defer s.poke()
	r := bufio.NewReaderSize(conn, 4096)
	for {
		_ = conn.SetReadDeadline(time.Now().Add(s.cfg.IOTimeout))
		ack, err := datatransfer.ReadAck(r)
		s.mu.Lock()
		if p.gen != gen || p.done {
			s.mu.Unlock()
			return
		}
		stop := s.applyAckLocked(p, ack, err, firstID)
		s.cond.Broadcast()
		s.mu.Unlock()
		s.poke()
		if stop {
			return
		}
	}
}

// applyAckLocked updates p for one ack (or read error) and says whether
// the responder is finished.
func (s *Stream) applyAckLocked(p *pipe, ack datatransfer.Ack, err error, firstID string) bool {
	if err != nil {
		if p.failed == nil {
			// No status says which node failed: a datanode that sends an
			// error ack and closes may have its ack destroyed by the
			// reset. Recovery finds out (see recoverPipe).
			p.failed, p.bad = fmt.Errorf("reading acks: %w", err), -1
		}
		return true
	}
	if i := ack.FirstFailed(); i >= 0 {
		p.failed = fmt.Errorf("datanode #%d of the pipeline reported %s for packet %d", i+1, datatransfer.StatusText(ack.Statuses[i]), ack.Seqno)
		p.bad = i
		return true
	}
	switch {
	case ack.Kind == datatransfer.AckFirstNodeFinish:
		if !p.fnfa {
			p.fnfa = true
			s.recordSpeedLocked(p, firstID)
		}
		return false
	case ack.Seqno == datatransfer.HeartbeatSeqno:
		return false
	}
	if len(p.unacked) == 0 || p.unacked[0].Header.Seqno != ack.Seqno {
		want := int64(-2)
		if len(p.unacked) > 0 {
			want = p.unacked[0].Header.Seqno
		}
		p.failed, p.bad = fmt.Errorf("ack for packet %d, expected %d", ack.Seqno, want), 0
		return true
	}
	pkt := p.unacked[0]
	p.unacked[0] = nil
	p.unacked = p.unacked[1:]
	if p.written > 0 {
		p.written--
	}
	p.acked = pkt.Header.Offset + int64(pkt.Header.DataLen)
	last := pkt.Header.Last()
	s.releaseLocked(pkt)
	if last {
		p.done = true
		if !p.fnfa {
			s.recordSpeedLocked(p, firstID)
		}
		return true
	}
	return false
}

// recordSpeedLocked notes the block's transfer time to its first datanode
// (SMARTH speed record), unless recovery disturbed it.
func (s *Stream) recordSpeedLocked(p *pipe, firstID string) {
	if p.recovered || p.paced || p.firstSent.IsZero() {
		return
	}
	now := time.Now()
	s.cfg.Speeds.Record(firstID, p.block.GetNumBytes(), now.Sub(p.firstSent), now)
}
