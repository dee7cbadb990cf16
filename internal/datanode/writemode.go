package datanode

import (
	"sync"

	"smarth/internal/datatransfer"
)

// writeMode is what the client's write mode (pipeline.Strategy.Mode, sent
// in WriteBlockOp.mode) changes in how this node moves a block: when a
// packet goes downstream — as it arrives, or once it is stored — and
// whether the client hears FIRST_NODE_FINISH_ACK. The receiver's stages
// call it at fixed points; everything else (verifying, storing, acking)
// is the same in every mode. Only a pipeline's first node runs the
// multi-pipeline mode: the nodes after it forward classically.
type writeMode interface {
	// ackQueueLen is the capacity of the responder's queue.
	ackQueueLen() int
	// start runs the mode's own goroutines under wg, before the first
	// packet is read.
	start(wg *sync.WaitGroup)
	// received is the receive stage's call with each packet as it arrives,
	// before the disk stage has it. An error (forwarding failed) ends the
	// receive after the packet went to the disk stage.
	received(p *datatransfer.Packet) error
	// stored is the disk stage's call once p is stored (or is a
	// heartbeat); the mode owns p from here.
	stored(p *datatransfer.Packet) error
	// blockStored is the disk stage's call once the block's last packet is
	// stored, before that packet's ack is queued for the responder.
	blockStored(seqno int64)
	// end follows the disk stage's end: no more stored calls.
	end()
}

// newWriteMode is the mode for r's request: SMARTH's multi-pipeline mode
// on the first node of a multi-pipeline write (multi), else HDFS's
// classic pipeline.
func newWriteMode(r *receiver, multi bool) writeMode {
	if multi {
		return &multiPipelineMode{r: r}
	}
	return classicMode{r: r}
}

// classicMode is HDFS's pipeline: each packet is forwarded downstream as
// soon as it arrives, so forwarding never waits for the local disk.
type classicMode struct{ r *receiver }

func (classicMode) ackQueueLen() int      { return ackQueueSize }
func (classicMode) start(*sync.WaitGroup) {}
func (classicMode) blockStored(int64)     {}
func (classicMode) end()                  {}
func (m classicMode) received(p *datatransfer.Packet) error {
	if m.r.down == nil {
		return nil
	}
	// A failed forward is reported by the responder, which finds the
	// downstream connection closed when it waits for this packet's ack;
	// the packet itself is still stored.
	return m.r.writeDown(p.Wire())
}
func (classicMode) stored(p *datatransfer.Packet) error {
	p.Release()
	return nil
}

// multiPipelineMode is SMARTH's first node (seed 000, section III):
// packets are stored first, then queued for a forwarder goroutine within
// the client's buffer budget (per_client_buffer), and the client gets a
// FIRST_NODE_FINISH_ACK once the whole block is stored here, so it can
// start its next block while this node still drains the queue.
type multiPipelineMode struct {
	r   *receiver
	fwd chan *datatransfer.Packet // stored packets waiting to be forwarded; nil without a downstream
}

// ackQueueLen: this node runs up to a whole per-client buffer ahead of its
// downstream, and every packet it stored waits in the ack queue for the
// downstream's ack: a queue shorter than the buffer would cap the lead
// instead (256 packets = 16 MiB: with 64 MiB blocks the client got FNFA
// only when 3/4 of the block had drained).
func (m *multiPipelineMode) ackQueueLen() int {
	if m.r.down == nil {
		return ackQueueSize
	}
	return max(ackQueueSize, int(m.r.d.cfg.PerClientBuffer/datatransfer.DefaultPacketDataLen)+16)
}

func (m *multiPipelineMode) start(wg *sync.WaitGroup) {
	if m.r.down == nil {
		return
	}
	m.fwd = make(chan *datatransfer.Packet, m.r.d.cfg.PerClientBuffer/datatransfer.DefaultPacketDataLen+16)
	wg.Add(1)
	go func() { defer wg.Done(); m.forward() }()
}

func (*multiPipelineMode) received(*datatransfer.Packet) error { return nil }

// stored hands a stored packet to the forwarder, waiting while the
// client's buffer is full (the disk stage, and behind it the receive
// stage, then stops reading the client's socket: TCP back-pressure).
func (m *multiPipelineMode) stored(p *datatransfer.Packet) error {
	if m.fwd == nil {
		p.Release()
		return nil
	}
	r := m.r
	n := int64(len(p.Wire()))
	if !r.client.budget.acquire(n, r.stopped) {
		p.Release()
		return errStopped
	}
	select {
	case m.fwd <- p:
		return nil
	case <-r.stopped:
		r.client.budget.release(n)
		p.Release()
		return errStopped
	}
}

// blockStored sends the FNFA before the last packet goes to the
// responder, so the FNFA always precedes the final pipeline ack.
func (m *multiPipelineMode) blockStored(seqno int64) { m.r.sendFNFA(seqno) }

func (m *multiPipelineMode) end() {
	if m.fwd != nil {
		close(m.fwd)
	}
}

// forward writes queued packets downstream. After a failed write it only
// releases what is still queued; the responder reports the failure.
func (m *multiPipelineMode) forward() {
	r := m.r
	broken := false
	for p := range m.fwd {
		n := int64(len(p.Wire()))
		if !broken {
			if err := r.writeDown(p.Wire()); err != nil {
				broken = true
			}
		}
		r.client.budget.release(n)
		p.Release()
	}
}
