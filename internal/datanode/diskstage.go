package datanode

import (
	"fmt"
	"time"

	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// maxBatchBytes bounds the data the disk stage writes in one system call.
const maxBatchBytes = 1 << 20

// batchItem is a verified packet waiting in the disk stage's batch.
type batchItem struct {
	p       *datatransfer.Packet
	arrived time.Time
}

// diskBatch is the disk stage's state: verified packets not yet written.
type diskBatch struct {
	items []batchItem
	bytes int
	data  [][]byte // scratch for WriteBatch
	sums  [][]byte
}

// storePackets is the disk stage. While more packets are already queued
// (the disk stage is behind), verified packets gather in a batch of up to
// maxBatchBytes, written with one pwritev per file: page-cache writes of
// 64 KiB cost the datanode a system call, and the Go runtime a thread
// hand-off, per packet. A packet's ack is queued only once it is written,
// as before, and a packet with the sync or last flag, one ending inside a
// chunk, or an empty queue ends the batch, so no ack waits for packets
// that have not arrived. After a failure it only releases what still
// arrives.
func (r *receiver) storePackets() error {
	var failed error
	for it := range r.disk {
		switch {
		case failed != nil:
			if it.p != nil {
				it.p.Release()
			}
		case it.p == nil:
			if failed = r.flush(); failed == nil {
				r.push(ackItem{seqno: it.seqno, status: it.status})
				failed = it.err
			}
		default:
			failed = r.storePacket(it.p, it.arrived)
		}
	}
	if failed == nil {
		// The receive stage ended early (upstream gone, stopped): what
		// arrived intact is stored, as it would have been packet by packet.
		failed = r.flush()
	}
	r.releaseBatch(0)
	return failed
}

// storePacket verifies one packet and adds it to the batch, writing the
// batch when it must end here; it owns p.
func (r *receiver) storePacket(p *datatransfer.Packet, arrived time.Time) error {
	h := p.Header
	if h.Heartbeat() {
		// Acks go upstream in order: the batch's first.
		if err := r.flush(); err != nil {
			p.Release()
			return err
		}
		if err := r.mode.stored(p); err != nil {
			return err
		}
		if !r.push(ackItem{seqno: datatransfer.HeartbeatSeqno, received: arrived}) {
			return errStopped
		}
		return nil
	}
	// A packet that starts inside a chunk is verified everywhere: the
	// store recomputes its on-disk checksums from the data
	// (Writer.realign), so a corrupt chunk would be stored with a matching
	// checksum. It is written on its own.
	unaligned := h.Offset%int64(h.BytesPerChecksum) != 0
	if err := r.verifyPacket(p, unaligned); err != nil {
		p.Release()
		if ferr := r.flush(); ferr != nil {
			return ferr
		}
		r.checksumK = true
		r.d.metrics.checksumFailures.Inc()
		return r.localFailure(h.Seqno, dfspb.OpStatus_OP_STATUS_ERROR_CHECKSUM, fmt.Errorf("%s: %w", r.name, err))
	}
	if unaligned {
		if err := r.flush(); err != nil {
			p.Release()
			return err
		}
	}
	b := &r.batch
	b.items = append(b.items, batchItem{p: p, arrived: arrived})
	b.bytes += int(h.DataLen)
	if unaligned || h.Last() || h.Flags&datatransfer.FlagSync != 0 || h.DataLen%h.BytesPerChecksum != 0 ||
		b.bytes >= maxBatchBytes || len(r.disk) == 0 {
		return r.flush()
	}
	return nil
}

// flush writes the batch, then for each packet in order: syncs (the sync
// flag), completes the block (the last packet), hands it to the write mode
// and queues its ack.
func (r *receiver) flush() error {
	b := &r.batch
	if len(b.items) == 0 {
		return nil
	}
	first := b.items[0].p.Header
	b.data, b.sums = b.data[:0], b.sums[:0]
	for _, it := range b.items {
		b.data = append(b.data, it.p.Data())
		b.sums = append(b.sums, it.p.Checksums())
	}
	err := r.w.WriteBatch(first.Offset, b.data, b.sums)
	if b.bytes > 0 {
		r.diskWrites++
	}
	clear(b.data)
	clear(b.sums)
	if err != nil {
		r.releaseBatch(0)
		r.d.checkVolumesSoon() // the disk may be failing, not just this block
		return r.localFailure(first.Seqno, statusError, err)
	}
	for i, it := range b.items {
		p, h := it.p, it.p.Header
		if h.Flags&datatransfer.FlagSync != 0 {
			if err := r.w.Sync(); err != nil {
				r.releaseBatch(i)
				r.d.checkVolumesSoon()
				return r.localFailure(h.Seqno, statusError, err)
			}
		}
		r.bytes += int64(h.DataLen)
		if h.DataLen > 0 { // the empty last packet only ends the block
			r.packets++
			r.packetSize = max(r.packetSize, int64(h.DataLen))
		}
		r.d.metrics.bytesWritten.Add(float64(h.DataLen))
		if h.Last() {
			if err := r.complete(); err != nil {
				r.releaseBatch(i)
				return r.localFailure(h.Seqno, statusError, err)
			}
		}
		b.items[i].p = nil // the write mode owns it now
		if err := r.mode.stored(p); err != nil {
			r.releaseBatch(i + 1)
			return err
		}
		if h.Last() {
			r.mode.blockStored(h.Seqno)
		}
		if !r.push(ackItem{seqno: h.Seqno, end: h.Offset + int64(h.DataLen), last: h.Last(), received: it.arrived}) {
			r.releaseBatch(i + 1)
			return errStopped
		}
	}
	b.items, b.bytes = b.items[:0], 0
	return nil
}

// releaseBatch releases the batch's packets from index i on and empties it.
func (r *receiver) releaseBatch(i int) {
	b := &r.batch
	for _, it := range b.items[min(i, len(b.items)):] {
		if it.p != nil {
			it.p.Release()
		}
	}
	clear(b.items)
	b.items, b.bytes = b.items[:0], 0
}
