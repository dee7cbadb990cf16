package fakedfs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/proto"

	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// Datanode is a fake datanode on 127.0.0.1 speaking the data-transfer
// protocol. It keeps replicas in memory.
type Datanode struct {
	Info *dfspb.DatanodeInfo
	ln   net.Listener

	mu       sync.Mutex
	replicas map[uint64]*replica   // guarded by mu
	conns    map[net.Conn]struct{} // guarded by mu
	dead     bool                  // guarded by mu
	holdAcks chan struct{}         // guarded by mu: acks wait until closed, nil = no hold
	holdRecv chan struct{}         // guarded by mu: packets are not read until closed, nil = no hold
	corrupt  map[uint64]bool       // guarded by mu: reads of these blocks flip a byte
	wg       sync.WaitGroup

	killAfter atomic.Int64 // die once this many bytes were stored in total (0 = never)
	stored    atomic.Int64
}

type replica struct {
	gs        uint64
	data      []byte
	finalized bool
	writer    int // the current writer; a recovery supersedes older ones
}

// StartDatanode starts a fake datanode named id; t.Cleanup kills it.
func StartDatanode(t testing.TB, id string) *Datanode {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	d := &Datanode{
		Info: &dfspb.DatanodeInfo{Id: id, Hostname: id, IpAddr: "127.0.0.1", DataPort: uint32(port), Rack: "/r", State: dfspb.DatanodeState_LIVE},
		ln:   ln, replicas: map[uint64]*replica{}, conns: map[net.Conn]struct{}{}, corrupt: map[uint64]bool{},
	}
	d.wg.Add(1)
	go d.serve()
	t.Cleanup(func() { d.Kill(); d.wg.Wait() })
	return d
}

// Addr is the data address.
func (d *Datanode) Addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(int(d.Info.DataPort)))
}

// Kill closes the listener and every connection at once, like a crash.
func (d *Datanode) Kill() {
	d.mu.Lock()
	d.dead = true
	conns := d.conns
	d.conns = map[net.Conn]struct{}{}
	d.mu.Unlock()
	d.ln.Close()
	for c := range conns {
		c.Close()
	}
}

// KillAfter makes the node die once it has stored n more bytes.
func (d *Datanode) KillAfter(n int64) { d.killAfter.Store(d.stored.Load() + n) }

// HoldAcks makes the node withhold its pipeline acks until release is
// called (FNFA is not held).
func (d *Datanode) HoldAcks() (release func()) { return d.hold(&d.holdAcks) }

// hold sets *slot (guarded by mu) to a channel that release closes.
func (d *Datanode) hold(slot *chan struct{}) (release func()) {
	ch := make(chan struct{})
	d.mu.Lock()
	*slot = ch
	d.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// HoldReceive makes the node stop reading data packets (of new blocks
// and ones in progress) until release is called, as a first datanode
// behind a stalled link: the sender's socket fills and no FNFA comes.
func (d *Datanode) HoldReceive() (release func()) { return d.hold(&d.holdRecv) }

// Corrupt makes reads of block id return data that fails its checksum.
func (d *Datanode) Corrupt(id uint64) {
	d.mu.Lock()
	d.corrupt[id] = true
	d.mu.Unlock()
}

// Replica returns a copy of the replica of block id.
func (d *Datanode) Replica(id uint64) (data []byte, gs uint64, finalized, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.replicas[id]
	if r == nil {
		return nil, 0, false, false
	}
	return append([]byte(nil), r.data...), r.gs, r.finalized, true
}

func (d *Datanode) serve() {
	defer d.wg.Done()
	for {
		c, err := d.ln.Accept()
		if err != nil {
			return
		}
		if !d.track(c) {
			c.Close()
			return
		}
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			defer d.untrack(c)
			d.handle(c)
		}()
	}
}

func (d *Datanode) track(c net.Conn) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return false
	}
	d.conns[c] = struct{}{}
	return true
}

func (d *Datanode) untrack(c net.Conn) {
	c.Close()
	d.mu.Lock()
	delete(d.conns, c)
	d.mu.Unlock()
}

func (d *Datanode) dial(addr string) (net.Conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	if !d.track(c) {
		c.Close()
		return nil, errors.New("dead")
	}
	return c, nil
}

func (d *Datanode) handle(c net.Conn) {
	r := bufio.NewReaderSize(c, 64<<10)
	_, msg, err := datatransfer.ReadOp(r)
	if err != nil {
		return
	}
	switch op := msg.(type) {
	case *dfspb.WriteBlockOp:
		d.write(c, r, op)
	case *dfspb.ReadBlockOp:
		d.read(c, op)
	case *dfspb.TransferBlockOp:
		d.transfer(c, op)
	}
}

func respond(c net.Conn, st dfspb.OpStatus, msg, badLink string) {
	_ = datatransfer.WriteResponse(c, &dfspb.OpResponse{Status: st, Message: msg, FirstBadLink: badLink})
}

func addrOf(n *dfspb.DatanodeInfo) string {
	return net.JoinHostPort(n.GetIpAddr(), strconv.Itoa(int(n.GetDataPort())))
}

// write receives a block (any stage), forwarding to the downstream
// targets and acking upstream with one status per node.
func (d *Datanode) write(c net.Conn, r *bufio.Reader, op *dfspb.WriteBlockOp) {
	id := op.GetBlock().GetBlockId()
	d.mu.Lock()
	rep := d.replicas[id]
	switch op.GetStage() {
	case dfspb.WriteStage_PIPELINE_SETUP_STREAMING_RECOVERY:
		if rep == nil || int64(len(rep.data)) < op.GetBlock().GetNumBytes() {
			d.mu.Unlock()
			respond(c, dfspb.OpStatus_OP_STATUS_ERROR_NOT_FOUND, "no replica to recover", "")
			return
		}
		rep.data = rep.data[:op.GetBlock().GetNumBytes()]
		rep.gs, rep.finalized = op.GetLatestGs(), false
	default:
		rep = &replica{gs: op.GetBlock().GetGenerationStamp()}
		d.replicas[id] = rep
	}
	rep.writer++
	me := rep.writer
	d.mu.Unlock()
	first := op.GetSource() == nil
	down, downR, ok := d.connectDownstream(c, op)
	if !ok {
		return
	}
	if down != nil {
		defer down.Close()
	}
	respond(c, dfspb.OpStatus_OP_STATUS_SUCCESS, "", "")
	var upMu sync.Mutex // the receive loop (FNFA) and the responder both write upstream
	seqs := make(chan datatransfer.PacketHeader, 1024)
	respDone := make(chan struct{})
	go func() {
		defer close(respDone)
		d.respond(c, &upMu, downR, seqs)
	}()
	defer func() { close(seqs); <-respDone }()
	pr := datatransfer.NewPacketReader(r)
	for {
		d.mu.Lock()
		hold := d.holdRecv
		d.mu.Unlock()
		if hold != nil {
			<-hold
		}
		pkt, err := pr.Next()
		if err != nil {
			return
		}
		h := pkt.Header
		if !h.Heartbeat() {
			if err := pkt.Verify(); err != nil {
				pkt.Release()
				_ = d.sendAck(c, &upMu, datatransfer.Ack{Seqno: h.Seqno, Statuses: []dfspb.OpStatus{dfspb.OpStatus_OP_STATUS_ERROR_CHECKSUM}})
				return
			}
			d.mu.Lock()
			if h.Offset != int64(len(rep.data)) || rep.writer != me {
				d.mu.Unlock()
				pkt.Release()
				return
			}
			d.mu.Unlock()
		}
		if down != nil {
			if _, err := down.Write(pkt.Wire()); err != nil {
				pkt.Release()
				seqs <- datatransfer.PacketHeader{Seqno: h.Seqno, Flags: 0xff} // downstream failed
				return
			}
		}
		d.mu.Lock()
		if rep.writer != me {
			d.mu.Unlock()
			pkt.Release()
			return
		}
		rep.data = append(rep.data, pkt.Data()...)
		if h.Last() && op.GetStage() != dfspb.WriteStage_TRANSFER_RBW {
			rep.finalized = true
		}
		d.mu.Unlock()
		pkt.Release()
		if k := d.killAfter.Load(); k > 0 && d.stored.Add(int64(h.DataLen)) >= k {
			d.Kill()
			return
		}
		if h.Last() && first && op.GetMode() == dfspb.WriteMode_MULTI_PIPELINE {
			_ = d.sendAck(c, &upMu, datatransfer.Ack{Kind: datatransfer.AckFirstNodeFinish, Seqno: h.Seqno, Statuses: []dfspb.OpStatus{0}})
		}
		seqs <- h
	}
}

// connectDownstream sets up the rest of the pipeline; on failure it has
// answered the upstream with first_bad_link and returns ok false.
func (d *Datanode) connectDownstream(c net.Conn, op *dfspb.WriteBlockOp) (net.Conn, *bufio.Reader, bool) {
	t := op.GetTargets()
	if len(t) == 0 {
		return nil, nil, true
	}
	down, err := d.dial(addrOf(t[0]))
	if err != nil {
		respond(c, dfspb.OpStatus_OP_STATUS_ERROR, "connect downstream: "+err.Error(), addrOf(t[0]))
		return nil, nil, false
	}
	fwd := proto.Clone(op).(*dfspb.WriteBlockOp)
	fwd.Targets = t[1:]
	fwd.Source = d.Info
	if err := datatransfer.WriteOp(down, fwd); err != nil {
		down.Close()
		respond(c, dfspb.OpStatus_OP_STATUS_ERROR, err.Error(), addrOf(t[0]))
		return nil, nil, false
	}
	downR := bufio.NewReader(down)
	resp, err := datatransfer.ReadResponse(downR)
	if err != nil || resp.GetStatus() != dfspb.OpStatus_OP_STATUS_SUCCESS {
		down.Close()
		bad := addrOf(t[0])
		if resp.GetFirstBadLink() != "" {
			bad = resp.GetFirstBadLink()
		}
		respond(c, dfspb.OpStatus_OP_STATUS_ERROR, "downstream setup failed", bad)
		return nil, nil, false
	}
	return down, downR, true
}

// respond sends one ack upstream per received packet, after the
// downstream's ack for it when there is a downstream.
func (d *Datanode) respond(up net.Conn, upMu *sync.Mutex, downR *bufio.Reader, seqs chan datatransfer.PacketHeader) {
	for h := range seqs {
		d.mu.Lock()
		hold := d.holdAcks
		d.mu.Unlock()
		if hold != nil {
			<-hold
		}
		st := []dfspb.OpStatus{0}
		if downR != nil {
			if h.Flags == 0xff {
				st = append(st, dfspb.OpStatus_OP_STATUS_ERROR)
			} else {
				a, err := datatransfer.ReadAck(downR)
				for err == nil && a.Kind == datatransfer.AckFirstNodeFinish {
					a, err = datatransfer.ReadAck(downR)
				}
				if err != nil {
					st = append(st, dfspb.OpStatus_OP_STATUS_ERROR)
				} else {
					st = append(st, a.Statuses...)
				}
			}
		}
		err := d.sendAck(up, upMu, datatransfer.Ack{Seqno: h.Seqno, Statuses: st})
		if err != nil {
			return
		}
		if !allOK(st) {
			up.Close()
			return
		}
		if h.Last() {
			return
		}
	}
}

// sendAck writes an ack upstream unless the node is dead: a killed node
// says nothing more.
func (d *Datanode) sendAck(up net.Conn, upMu *sync.Mutex, a datatransfer.Ack) error {
	upMu.Lock()
	defer upMu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return errors.New("dead")
	}
	return datatransfer.WriteAck(up, a)
}

func allOK(st []dfspb.OpStatus) bool {
	for _, s := range st {
		if s != 0 {
			return false
		}
	}
	return true
}

// transfer copies the replica prefix to the target (TRANSFER_RBW).
func (d *Datanode) transfer(c net.Conn, op *dfspb.TransferBlockOp) {
	data, gs, _, ok := d.Replica(op.GetBlock().GetBlockId())
	n := op.GetBlock().GetNumBytes()
	if !ok || int64(len(data)) < n || len(op.GetTargets()) == 0 {
		respond(c, dfspb.OpStatus_OP_STATUS_ERROR_NOT_FOUND, "no replica", "")
		return
	}
	t, err := d.dial(addrOf(op.GetTargets()[0]))
	if err != nil {
		respond(c, dfspb.OpStatus_OP_STATUS_ERROR, err.Error(), addrOf(op.GetTargets()[0]))
		return
	}
	defer t.Close()
	blk := &dfspb.ExtendedBlock{BlockId: op.GetBlock().GetBlockId(), GenerationStamp: gs, NumBytes: n}
	if err := datatransfer.WriteOp(t, &dfspb.WriteBlockOp{Block: blk, Stage: dfspb.WriteStage_TRANSFER_RBW, Source: d.Info, BytesPerChecksum: 512}); err != nil {
		respond(c, dfspb.OpStatus_OP_STATUS_ERROR, err.Error(), "")
		return
	}
	tr := bufio.NewReader(t)
	if resp, err := datatransfer.ReadResponse(tr); err != nil || resp.GetStatus() != 0 {
		respond(c, dfspb.OpStatus_OP_STATUS_ERROR, fmt.Sprint("target refused: ", err, resp.GetMessage()), "")
		return
	}
	seq := sendPackets(t, data[:n], 0, 0)
	for {
		a, err := datatransfer.ReadAck(tr)
		if err != nil || !allOK(a.Statuses) {
			respond(c, dfspb.OpStatus_OP_STATUS_ERROR, fmt.Sprint("transfer ack: ", err), "")
			return
		}
		if a.Seqno == seq {
			break
		}
	}
	respond(c, dfspb.OpStatus_OP_STATUS_SUCCESS, "", "")
}

// sendPackets writes data as 64 KiB packets starting at block offset off
// and an empty last packet; it returns the last packet's seqno.
func sendPackets(w io.Writer, data []byte, off int64, seq int64) int64 {
	for len(data) > 0 {
		n := min(len(data), 64<<10)
		p := datatransfer.NewPacket(n, 512)
		p.Append(data[:n])
		p.Seal(off, seq, 0)
		_, _ = w.Write(p.Wire())
		p.Release()
		data, off, seq = data[n:], off+int64(n), seq+1
	}
	p := datatransfer.NewPacket(0, 512)
	p.Seal(off, seq, datatransfer.FlagLast)
	_, _ = w.Write(p.Wire())
	p.Release()
	return seq
}

// read serves [offset, offset+length) from chunk boundaries.
func (d *Datanode) read(c net.Conn, op *dfspb.ReadBlockOp) {
	data, gs, _, ok := d.Replica(op.GetBlock().GetBlockId())
	if !ok || gs < op.GetBlock().GetGenerationStamp() {
		respond(c, dfspb.OpStatus_OP_STATUS_ERROR_NOT_FOUND, "replica not found", "")
		return
	}
	d.mu.Lock()
	bad := d.corrupt[op.GetBlock().GetBlockId()]
	d.mu.Unlock()
	start := op.GetOffset() / 512 * 512
	end := min(int64(len(data)), op.GetOffset()+op.GetLength())
	if start > end {
		respond(c, dfspb.OpStatus_OP_STATUS_ERROR_INVALID, "offset beyond replica", "")
		return
	}
	_ = datatransfer.WriteResponse(c, &dfspb.OpResponse{ChunkOffset: start})
	w := bufio.NewWriterSize(c, 256<<10)
	if bad {
		// Checksums of the good data, then one byte flipped: a reader must
		// detect the mismatch.
		seg := data[start:end]
		for off := int64(0); off < int64(len(seg)); off += 64 << 10 {
			n := min(int64(len(seg))-off, 64<<10)
			p := datatransfer.NewPacket(int(n), 512)
			p.Append(seg[off : off+n])
			p.Seal(start+off, off/(64<<10), 0)
			p.Data()[0] ^= 0xff
			_, _ = w.Write(p.Wire())
			p.Release()
		}
	} else {
		sendPackets(w, data[start:end], start, 0)
	}
	_ = w.Flush()
	_, _ = io.Copy(io.Discard, c)
}
