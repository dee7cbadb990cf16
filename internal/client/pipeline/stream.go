package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// Config is what a Stream needs to write one file.
type Config struct {
	Namenode    dfspb.ClientProtocolClient
	Path        string
	FileID      uint64
	ClientName  string
	ClientHost  string
	Replication int
	Strategy    Strategy
	// BlockSize is the file's block size: each new block's datanodes are
	// told it (expected_bytes) and refuse the block without room for it.
	BlockSize int64
	// BlockPackets is how many data packets fill a block (for Window).
	BlockPackets int
	// ClassicWindow is the in-flight window when multi-pipeline mode can
	// only open one pipeline and writes like Classic (see Effective).
	ClassicWindow    int
	BytesPerChecksum int
	Dial             func(ctx context.Context, addr string) (net.Conn, error)
	IOTimeout        time.Duration // a datanode socket idle this long has failed
	RPCTimeout       time.Duration
	Replace          ReplacePolicy
	Speeds           *SpeedBook // may be nil
	// Datanodes lists the live datanodes (the namenode's report): how
	// many for Strategy.MaxOpen, their racks for an Admitter; nil means
	// one pipeline at a time.
	Datanodes func(ctx context.Context) ([]*dfspb.DatanodeInfo, error)
	// SetupRetries is how many times a new block's pipeline is tried,
	// excluding the failed node each time (HDFS: 3).
	SetupRetries int
	Logger       *slog.Logger
	// Append is the partial last block of a file reopened for append (its
	// stamp, length and the datanodes holding it): the first packets
	// continue it (see startAppend). Previous is instead the file's full
	// last block, which the first new block names as its previous one.
	Append   *dfspb.LocatedBlock
	Previous *dfspb.ExtendedBlock
}

// queueLen is the data queue between the writer and the streamer: enough
// to overlap checksumming with sending, small enough to bound memory.
const queueLen = 16

// Stream sends a file's packets through block pipelines. The writer calls
// Send for each packet in order (a block ends with a packet flagged last)
// and Finish at the end. Stream is used by one writer goroutine.
type Stream struct {
	cfg    Config
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	queue  chan *datatransfer.Packet
	wake   chan struct{} // responders poke the streamer when a pipe changes state
	done   chan struct{} // closed when the streamer has stopped

	mu      sync.Mutex
	cond    *sync.Cond // signalled on every change of a pipe's state; uses mu
	pipes   []*pipe    // guarded by mu: open pipelines, oldest first
	err     error      // guarded by mu: why the stream failed
	aborted bool       // guarded by mu
	// inSend are the packets whose Write has not returned (one per
	// pipeline sender at most), guarded by mu; true says it was
	// acknowledged (or abandoned) meanwhile and is released when the Write
	// returns (see releaseLocked).
	inSend map[*datatransfer.Packet]bool
	// stopping is set once the streamer has stopped, guarded by mu: the
	// pipelines' senders (Queued handoff) exit.
	stopping bool

	// Owned by the streamer goroutine.
	cur      *pipe
	blocks   []*dfspb.ExtendedBlock // every block of the file so far, in order
	excluded map[string]bool        // datanode ids that failed for this file
	maxOpen  int
	// live are the live datanodes when the stream began, and writerRack
	// the rack the namenode placed this client in at its latest addBlock
	// ("" when none): the Admitter's prior for datanodes never measured.
	live       []*dfspb.DatanodeInfo
	writerRack string
	lastSend   time.Time
	appendTo   *dfspb.LocatedBlock // the partial last block to continue first, until its pipeline is up
}

// Start begins a stream; its goroutines stop when Finish or Abort return.
func Start(cfg Config) *Stream {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.IOTimeout <= 0 {
		cfg.IOTimeout = 60 * time.Second
	}
	if cfg.RPCTimeout <= 0 {
		cfg.RPCTimeout = 60 * time.Second
	}
	if cfg.SetupRetries <= 0 {
		cfg.SetupRetries = 3
	}
	if cfg.BytesPerChecksum <= 0 {
		cfg.BytesPerChecksum = datatransfer.DefaultBytesPerChecksum
	}
	if cfg.Replace == "" {
		cfg.Replace = ReplaceDefault
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Stream{
		cfg: cfg, log: cfg.Logger.With("path", cfg.Path), ctx: ctx, cancel: cancel,
		queue: make(chan *datatransfer.Packet, queueLen), wake: make(chan struct{}, 1),
		done: make(chan struct{}), excluded: map[string]bool{}, inSend: map[*datatransfer.Packet]bool{},
	}
	s.cond = sync.NewCond(&s.mu)
	s.startAfter(cfg.Append, cfg.Previous)
	go s.run()
	return s
}

// Send hands a sealed packet to the stream, which owns it from then on.
// It blocks while the data queue is full and fails once the stream has.
func (s *Stream) Send(p *datatransfer.Packet) error {
	select {
	case <-s.done:
		p.Release()
		return s.Err()
	default:
	}
	select {
	case s.queue <- p:
		return nil
	case <-s.done:
		p.Release()
		return s.Err()
	}
}

// Finish waits until every packet is acknowledged by every pipeline and
// returns the file's blocks with their final lengths and generation
// stamps, in file order.
func (s *Stream) Finish() ([]*dfspb.ExtendedBlock, error) {
	close(s.queue)
	<-s.done
	if err := s.Err(); err != nil {
		return nil, err
	}
	return s.blocks, nil
}

// Abort stops the stream, closing every pipeline without waiting.
func (s *Stream) Abort() {
	s.cancel()
	s.mu.Lock()
	s.aborted = true
	if s.err == nil {
		s.err = errors.New("write aborted")
	}
	for _, p := range s.pipes {
		p.close()
	}
	s.cond.Broadcast()
	s.mu.Unlock()
	<-s.done
}

// Err is the stream's failure, if any.
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *Stream) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Stream) run() {
	defer close(s.done)
	err := s.loop()
	if err == nil {
		err = s.drain()
	}
	s.mu.Lock()
	if err != nil && s.err == nil {
		s.err = err
	}
	pipes := s.pipes
	s.pipes = nil
	s.stopping = true
	s.cond.Broadcast()
	s.mu.Unlock()
	for _, p := range pipes {
		p.close()
		<-p.responderDone
		p.waitSender()
		s.mu.Lock()
		s.releaseAllLocked(p)
		s.mu.Unlock()
	}
	s.cur = nil
	for {
		select {
		case p, ok := <-s.queue:
			if !ok {
				return
			}
			p.Release()
		default:
			return
		}
	}
}

func (s *Stream) loop() error {
	if s.cfg.Strategy.Handoff() != AllAcked && s.cfg.Datanodes != nil {
		ctx, cancel := context.WithTimeout(s.ctx, s.cfg.RPCTimeout)
		dns, err := s.cfg.Datanodes(ctx)
		cancel()
		if err != nil {
			s.log.Warn("cannot count live datanodes; one pipeline at a time", "err", err)
			dns = nil
		}
		s.live = dns
		live := len(dns)
		s.maxOpen = s.cfg.Strategy.MaxOpen(live, s.cfg.Replication)
		s.cfg.Strategy = Effective(s.cfg.Strategy, s.maxOpen, s.cfg.ClassicWindow)
		s.log.Debug("multi-pipeline write", "live", live, "max_open", s.maxOpen, "strategy", fmt.Sprintf("%T", s.cfg.Strategy))
	} else {
		s.maxOpen = s.cfg.Strategy.MaxOpen(0, s.cfg.Replication)
	}
	for {
		pkt, err := s.nextPacket()
		if err != nil || pkt == nil {
			return err
		}
		if s.cur == nil {
			start := s.startBlock
			if s.appendTo != nil {
				start = s.startAppend
			}
			if err := start(); err != nil {
				pkt.Release()
				return err
			}
		}
		if err := s.send(pkt); err != nil {
			return err
		}
		if s.cur.lastQueued {
			if err := s.handoff(); err != nil {
				return err
			}
		}
	}
}

// nextPacket waits for the writer's next packet, recovering failed
// pipelines and keeping an idle current pipeline alive with heartbeats.
// It returns nil at the end of the data.
func (s *Stream) nextPacket() (*datatransfer.Packet, error) {
	select { // fast path while the writer keeps up: no timer
	case p, ok := <-s.queue:
		if !ok {
			return nil, nil
		}
		return p, nil
	default:
	}
	hb := time.NewTimer(s.cfg.IOTimeout / 2)
	defer hb.Stop()
	for {
		select {
		case p, ok := <-s.queue:
			if !ok {
				return nil, nil
			}
			return p, nil
		case <-s.wake:
			if err := s.recoverFailed(); err != nil {
				return nil, err
			}
			s.reap()
		case <-hb.C:
			if s.cur != nil {
				s.heartbeat(s.cur)
			}
			hb.Reset(s.cfg.IOTimeout / 2)
		case <-s.ctx.Done():
			return nil, s.Err()
		}
	}
}

// heartbeat sends a keep-alive packet on an idle pipeline. A failure
// shows up in the responder.
func (s *Stream) heartbeat(p *pipe) {
	if time.Since(s.lastSend) < s.cfg.IOTimeout/2 {
		return
	}
	hb := datatransfer.NewPacket(0, s.cfg.BytesPerChecksum)
	hb.Seal(p.sent, datatransfer.HeartbeatSeqno, datatransfer.FlagHeartbeat)
	_ = p.write(hb.Wire(), s.cfg.IOTimeout)
	hb.Release()
	s.lastSend = time.Now()
}

// send puts pkt on the current pipeline, waiting for window space.
func (s *Stream) send(pkt *datatransfer.Packet) error {
	p := s.cur
	window := s.cfg.Strategy.Window(s.cfg.BlockPackets)
	for {
		s.mu.Lock()
		for !s.anyFailedLocked() && len(p.unacked) >= window && !s.aborted {
			s.cond.Wait()
		}
		failed, aborted := s.anyFailedLocked(), s.aborted
		s.mu.Unlock()
		if aborted {
			pkt.Release()
			return s.Err()
		}
		if !failed {
			break
		}
		if err := s.recoverFailed(); err != nil {
			pkt.Release()
			return err
		}
	}
	s.mu.Lock()
	pkt.Header.Seqno = p.nextSeq
	p.nextSeq++
	pkt.Header.Put(pkt.Wire()[:datatransfer.PacketHeaderLen])
	p.unacked = append(p.unacked, pkt)
	if p.firstSent.IsZero() {
		p.firstSent = time.Now()
	}
	end := pkt.Header.Offset + int64(pkt.Header.DataLen)
	if end > p.sent {
		p.sent = end
	}
	if pkt.Header.Last() {
		p.lastQueued = true
		p.block.NumBytes = p.sent
	}
	queued := s.cfg.Strategy.Handoff() == Queued
	if queued {
		s.cond.Broadcast() // the pipeline's sender writes it
	}
	s.mu.Unlock()
	if queued {
		return nil
	}
	s.lastSend = time.Now()
	if err := s.writePacket(p, pkt); err != nil {
		s.writeFailed(p, err)
		return s.recoverFailed() // pkt is in the ack queue: recovery resends it
	}
	return nil
}

// writeFailed marks p failed after a send error. The responder may still
// read an ack naming the node that really failed downstream, so it gets a
// moment to finish before the connection is closed.
func (s *Stream) writeFailed(p *pipe, err error) {
	select {
	case <-p.responderDone:
	case <-time.After(min(s.cfg.IOTimeout, 5*time.Second)):
	}
	p.close()
	<-p.responderDone
	s.mu.Lock()
	if p.failed == nil && !p.done {
		p.failed, p.bad = fmt.Errorf("sending to %s: %w", p.nodes[0].label(), err), -1
	}
	s.mu.Unlock()
}

// handoff waits, after the last packet of the current block, for the
// strategy's handoff event.
func (s *Stream) handoff() error {
	p := s.cur
	want := s.cfg.Strategy.Handoff()
	var fnfa, done bool // as seen under the lock: the responder writes them
	for {
		s.mu.Lock()
		for !p.done && !(want == FirstNodeFinished && p.fnfa) && want != Queued && !s.anyFailedLocked() && !s.aborted {
			s.cond.Wait()
		}
		fnfa, done = p.fnfa, p.done
		ready := done || (want == FirstNodeFinished && fnfa) || want == Queued
		failed, aborted := s.anyFailedLocked(), s.aborted
		s.mu.Unlock()
		if aborted {
			return s.Err()
		}
		if failed {
			if err := s.recoverFailed(); err != nil {
				return err
			}
			continue
		}
		if ready {
			break
		}
	}
	s.log.Debug("block handed off", "block", p.block.GetBlockId(), "bytes", p.sent, "fnfa", fnfa, "done", done)
	s.cur = nil
	s.reap()
	return nil
}

// drain waits until every open pipeline has been acknowledged in full.
func (s *Stream) drain() error {
	for {
		s.mu.Lock()
		for !s.allDoneLocked() && !s.anyFailedLocked() && !s.aborted {
			s.cond.Wait()
		}
		all, failed, aborted := s.allDoneLocked(), s.anyFailedLocked(), s.aborted
		s.mu.Unlock()
		switch {
		case aborted:
			return s.Err()
		case failed:
			if err := s.recoverFailed(); err != nil {
				return err
			}
		case all:
			s.reap()
			return nil
		}
	}
}

func (s *Stream) anyFailedLocked() bool {
	for _, p := range s.pipes {
		if p.failed != nil {
			return true
		}
	}
	return false
}

func (s *Stream) allDoneLocked() bool {
	for _, p := range s.pipes {
		if !p.done {
			return false
		}
	}
	return true
}

// reap closes and forgets pipelines that are acknowledged in full.
func (s *Stream) reap() {
	s.mu.Lock()
	keep := s.pipes[:0]
	var closed []*pipe
	for _, p := range s.pipes {
		if p.done && p != s.cur {
			closed = append(closed, p)
			continue
		}
		keep = append(keep, p)
	}
	for i := len(keep); i < len(s.pipes); i++ {
		s.pipes[i] = nil
	}
	s.pipes = keep
	s.mu.Unlock()
	for _, p := range closed {
		p.close()
		<-p.responderDone
		p.waitSender()
	}
}

// busyLocked lists the datanode ids in open pipelines, which a new block
// must not use (a datanode is in at most one open pipeline of a client).
func (s *Stream) busyLocked() []string {
	var ids []string
	for _, p := range s.pipes {
		if p.done {
			continue
		}
		for _, n := range p.nodes {
			ids = append(ids, n.GetId())
		}
	}
	return ids
}

// waitSlot waits until fewer than maxOpen pipelines are open, recovering
// failures meanwhile.
func (s *Stream) waitSlot() error {
	for {
		s.mu.Lock()
		open := func() int {
			n := 0
			for _, p := range s.pipes {
				if !p.done {
					n++
				}
			}
			return n
		}
		for !(open() < s.maxOpen && s.admitLocked()) && !s.anyFailedLocked() && !s.aborted {
			s.cond.Wait()
		}
		failed, aborted, free := s.anyFailedLocked(), s.aborted, open() < s.maxOpen && s.admitLocked()
		s.mu.Unlock()
		switch {
		case aborted:
			return s.Err()
		case failed:
			if err := s.recoverFailed(); err != nil {
				return err
			}
		case free:
			s.reap()
			return nil
		}
	}
}

// admitLocked asks an Admitter strategy whether the next block may start
// now (true for the others).
func (s *Stream) admitLocked() bool {
	a, ok := s.cfg.Strategy.(Admitter)
	if !ok {
		return true
	}
	return a.Admit(s.admissionLocked())
}

// holdBackLocked says whether p's sender, its window of packets the whole
// pipeline has not acknowledged full, should wait for acks instead of
// writing on (a Pacer strategy's HoldBack). A pipeline held once makes no
// speed record: its first hop went at its downstream's pace.
func (s *Stream) holdBackLocked(p *pipe) bool {
	pc, ok := s.cfg.Strategy.(Pacer)
	if !ok || p.fnfa || p.written < (&Classic{window: s.cfg.ClassicWindow}).Window(0) || !s.otherFirstHopLocked(p) {
		return false
	}
	if !pc.HoldBack(p.nodes[0].DatanodeInfo, s.admissionLocked()) {
		return false
	}
	p.paced = true
	return true
}

// otherFirstHopLocked says whether a pipeline other than p has its first
// hop in progress: without one there is nothing to hold p back for, and
// the sender, which asks for every packet past the window, builds no
// Admission.
func (s *Stream) otherFirstHopLocked(p *pipe) bool {
	for _, q := range s.pipes {
		if q != p && !q.done && !q.fnfa && q.mode != dfspb.WriteMode_CLASSIC {
			return true
		}
	}
	return false
}

// admissionLocked is what an Admitter or a Pacer decides on: the first
// hops in progress, the datanodes in use, the records and racks.
func (s *Stream) admissionLocked() Admission {
	in := Admission{Busy: map[string]bool{}, WriterRack: s.writerRack, Datanodes: s.live}
	for id := range s.excluded {
		in.Busy[id] = true
	}
	for _, p := range s.pipes {
		if p.done {
			continue
		}
		if !p.fnfa && p.mode != dfspb.WriteMode_CLASSIC {
			in.InFlight = append(in.InFlight, p.nodes[0].DatanodeInfo)
		}
		for _, n := range p.nodes {
			in.Busy[n.GetId()] = true
		}
	}
	if s.cfg.Speeds != nil {
		in.Speeds = s.cfg.Speeds
	}
	return in
}

func nodeLabel(d *dfspb.DatanodeInfo) string {
	addr := net.JoinHostPort(d.GetIpAddr(), strconv.Itoa(int(d.GetDataPort())))
	if d.GetHostname() != "" && d.GetHostname() != d.GetIpAddr() {
		return d.GetHostname() + " (" + addr + ")"
	}
	return addr
}
