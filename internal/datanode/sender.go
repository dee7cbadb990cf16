package datanode

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"smarth/internal/datanode/store"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// packetSource cuts a replica's byte range into packets with the checksums
// stored in its meta file, as HDFS's BlockSender does.
type packetSource struct {
	h     *store.Handle
	pos   int64 // next byte to send (chunk aligned)
	end   int64
	bpc   int
	seqno int64
	sums  *bufio.Reader // the meta file from the first chunk sent
	buf   []byte        // packet under construction: header, checksums, data
	// recomputeLast: the replica may still grow, so a partial last chunk's
	// stored checksum can cover more bytes than we send; compute it.
	recomputeLast bool
}

func newPacketSource(h *store.Handle, start, end int64) (*packetSource, error) {
	bpc := h.BytesPerChecksum
	if _, err := h.Data.Seek(start, io.SeekStart); err != nil {
		return nil, err
	}
	metaOff := int64(store.MetaHeaderLen) + start/int64(bpc)*datatransfer.ChecksumSize
	sumsLen := int64(datatransfer.ChunkCount(int(end-start), bpc) * datatransfer.ChecksumSize)
	dataMax := datatransfer.DefaultPacketDataLen / bpc * bpc
	if dataMax == 0 {
		dataMax = bpc
	}
	return &packetSource{
		h: h, pos: start, end: end, bpc: bpc,
		sums:          bufio.NewReaderSize(io.NewSectionReader(h.Meta, metaOff, sumsLen), 64<<10),
		buf:           make([]byte, datatransfer.PacketHeaderLen+datatransfer.ChunkCount(dataMax, bpc)*datatransfer.ChecksumSize+dataMax),
		recomputeLast: h.State != store.Finalized,
	}, nil
}

// packetLen is the data length of the next packet (0 when done).
func (s *packetSource) packetLen() int {
	max := (len(s.buf) - datatransfer.PacketHeaderLen) / (s.bpc + datatransfer.ChecksumSize) * s.bpc
	return int(min(int64(max), s.end-s.pos))
}

// lastSeqno is the seqno the last packet will carry, counted from now.
func (s *packetSource) lastSeqno() int64 {
	max := int64((len(s.buf) - datatransfer.PacketHeaderLen) / (s.bpc + datatransfer.ChecksumSize) * s.bpc)
	return s.seqno + (s.end-s.pos+max-1)/max
}

// header fills the header and checksums of the next n-byte packet and
// returns them; the data is to be sent from the block file's current
// position (sendfile).
func (s *packetSource) header(n int) ([]byte, error) {
	nsums := datatransfer.ChunkCount(n, s.bpc) * datatransfer.ChecksumSize
	b := s.buf[:datatransfer.PacketHeaderLen+nsums]
	datatransfer.PacketHeader{DataLen: uint32(n), Offset: s.pos, Seqno: s.seqno, BytesPerChecksum: uint32(s.bpc)}.Put(b)
	if _, err := io.ReadFull(s.sums, b[datatransfer.PacketHeaderLen:]); err != nil {
		return nil, fmt.Errorf("%w: %s: reading checksums at offset %d: %v", store.ErrCorrupt, s.h.Name(), s.pos, err)
	}
	s.seqno++
	s.pos += int64(n)
	return b, nil
}

// full builds the next whole packet in memory (header, checksums, data).
// With verify, a chunk whose data does not match its stored checksum is
// returned as a *datatransfer.ChecksumError together with the packet, so
// the caller may still send it (the reader then sees the mismatch itself).
func (s *packetSource) full(n int, verify bool) ([]byte, error) {
	off := s.pos
	hdr, err := s.header(n)
	if err != nil {
		return nil, err
	}
	b := s.buf[:len(hdr)+n]
	if _, err := io.ReadFull(s.h.Data, b[len(hdr):]); err != nil {
		return nil, fmt.Errorf("%w: %s: reading data at offset %d: %v", store.ErrCorrupt, s.h.Name(), off, err)
	}
	sums, data := b[datatransfer.PacketHeaderLen:len(hdr)], b[len(hdr):]
	if last := n % s.bpc; s.recomputeLast && last != 0 && s.pos == s.end {
		binary.BigEndian.PutUint32(sums[len(sums)-4:], datatransfer.CRC32C(data[len(data)-last:]))
	}
	if verify {
		if i := datatransfer.VerifyChecksums(sums, data, s.bpc); i >= 0 {
			return b, &datatransfer.ChecksumError{Offset: off + int64(i*s.bpc),
				Want: binary.BigEndian.Uint32(sums[i*4:]), Got: datatransfer.CRC32C(data[i*s.bpc : min((i+1)*s.bpc, n)])}
		}
	}
	return b, nil
}

// lastPacket is the empty packet that ends a block or a read.
func (s *packetSource) lastPacket() []byte {
	b := s.buf[:datatransfer.PacketHeaderLen]
	datatransfer.PacketHeader{Offset: s.pos, Seqno: s.seqno, Flags: datatransfer.FlagLast, BytesPerChecksum: uint32(s.bpc)}.Put(b)
	s.seqno++
	return b
}

// readSource is where a READ_BLOCK's bytes come from: a replica's files
// (diskSource) or the memory cache (memorySource).
type readSource interface {
	// replica is the replica served, for range checks, logs and the
	// scanner.
	replica() store.Replica
	// prepare readies [start, end) (chunk aligned) before the response goes out.
	prepare(start, end int64) error
	// stream sends the packets of the prepared range and the last packet,
	// returning the data bytes sent.
	stream(c net.Conn) (int64, error)
	// readerFoundCorruption is called when the reader reports a checksum
	// mismatch.
	readerFoundCorruption()
	// finish runs once the reader is done (it sent its status or hung
	// up), so every byte sent has left the socket buffers.
	finish()
}

// sendBlock serves READ_BLOCK: the requested range, widened to whole
// chunks, in packets, then an empty last packet. A replica in the memory
// cache is served from memory without touching the disk. Otherwise
// finalized replicas go out with sendfile unless verify_reads is set, and
// replicas being written are served up to the bytes acknowledged so far.
func (d *DataNode) sendBlock(c net.Conn, op *dfspb.ReadBlockOp) {
	b := op.GetBlock()
	if blk := d.cachedReplica(b); blk != nil {
		defer blk.Release()
		d.metrics.cacheHits.Inc()
		d.serveRead(c, op, &memorySource{d: d, blk: blk})
		return
	}
	h, err := d.store.Open(b.GetBlockId(), b.GetGenerationStamp())
	if err != nil {
		d.readFailed(b.GetBlockId(), err)
		_ = d.writeResponse(c, errResponse(storeStatus(err), err.Error()))
		return
	}
	defer h.Close()
	if h.State == store.Finalized {
		d.metrics.cacheMisses.Inc()
	}
	d.serveRead(c, op, &diskSource{d: d, h: h})
}

// serveRead checks the requested range against the replica, answers the
// op, streams the packets and accounts for the result.
func (d *DataNode) serveRead(c net.Conn, op *dfspb.ReadBlockOp, src readSource) {
	r := src.replica()
	off, n := op.GetOffset(), op.GetLength()
	if off < 0 || n < 0 || off+n > r.Visible {
		_ = d.writeResponse(c, errResponse(dfspb.OpStatus_OP_STATUS_ERROR_INVALID,
			fmt.Sprintf("read of [%d, %d) is outside %s, which has %d readable bytes", off, off+n, r.Name(), r.Visible)))
		return
	}
	bpc := int64(r.BytesPerChecksum)
	start := off - off%bpc
	end := min((off+n+bpc-1)/bpc*bpc, r.Visible)
	if err := src.prepare(start, end); err != nil {
		_ = d.writeResponse(c, errResponse(statusError, err.Error()))
		return
	}
	if err := d.writeResponse(c, &dfspb.OpResponse{ChunkOffset: start}); err != nil {
		return
	}
	// The client may send a read status at any time; a checksum error
	// makes the scanner verify the replica now. The goroutine ends when
	// the connection closes.
	_ = c.SetReadDeadline(time.Time{})
	statusDone := make(chan struct{})
	go func() {
		defer close(statusDone)
		var b [1]byte
		if n, _ := c.Read(b[:]); n == 1 && dfspb.OpStatus(b[0]) == dfspb.OpStatus_OP_STATUS_ERROR_CHECKSUM {
			d.log.Warn("reader found a checksum mismatch; verifying the replica", "block", r.Name(), "client", op.GetClientName())
			src.readerFoundCorruption()
		}
	}()
	defer func() {
		// Give the reader a moment to send its status or hang up.
		_ = c.SetReadDeadline(time.Now().Add(min(lingerTimeout, d.cfg.IOTimeout)))
		<-statusDone
		src.finish()
	}()
	began := time.Now()
	sent, err := src.stream(c)
	if err != nil {
		var ce *datatransfer.ChecksumError
		if !errors.As(err, &ce) {
			// The reader waits for packets that will not come (a bad
			// packet, by contrast, went out and it sees the mismatch
			// itself): hang up, so it fails over now rather than when
			// the linger below runs out.
			_ = c.Close()
		}
		if errors.As(err, &ce) || errors.Is(err, store.ErrCorrupt) {
			d.metrics.checksumFailures.Inc()
			d.scanner.corrupt(r, err)
		} else if errors.Is(err, syscall.EIO) {
			// The disk failed part way through (sendfile or a read of
			// the block file): the reader fails over on its own, but
			// the replica must be verified and, if the disk still
			// cannot give it back, reported, as at open.
			d.readFailed(r.BlockID, err)
		} else if !isClosed(err) {
			d.log.Debug("read ended early", "block", r.Name(), "client", op.GetClientName(), "sent", sent, "err", err)
		}
		return
	}
	d.metrics.blocksRead.Inc()
	if secs := time.Since(began).Seconds(); secs > 0 && sent > 0 {
		d.metrics.readThroughput.Observe(float64(sent) / secs)
	}
}

// diskSource serves a read from the replica's files.
type diskSource struct {
	d          *DataNode
	h          *store.Handle
	src        *packetSource
	start, end int64
}

func (s *diskSource) replica() store.Replica { return s.h.Replica }

func (s *diskSource) prepare(start, end int64) (err error) {
	s.start, s.end = start, end
	s.src, err = newPacketSource(s.h, start, end)
	return err
}

func (s *diskSource) stream(c net.Conn) (int64, error) {
	return s.d.streamPackets(c, s.src, s.d.cfg.VerifyReads)
}

// finish is HDFS's drop-behind: the next read of these bytes must come
// from the disk again, not from a page cache that would otherwise keep
// every block of a machine with plenty of memory.
func (s *diskSource) finish() {
	if !s.d.cfg.DropCacheBehindReads || s.end <= s.start {
		return
	}
	if s.d.cfg.PageCacheBudget > 0 {
		// The pages stay while the block is among the most recently read
		// (page_cache_budget); the window drops the oldest beyond it.
		s.d.reads.read(s.h.BlockID, s.h.GS, s.start, s.end)
		return
	}
	s.d.dropRead(s.h, s.start, s.end)
	// The kernel skips pages still in use, and sendfile's pages stay
	// referenced by the socket until the reader's ACK arrives, which a
	// delayed ACK holds back up to 200 ms: drop once more after that.
	r, start, end := s.h.Replica, s.start, s.end
	s.d.goRun(func() {
		s.d.sleep(dropRetryDelay)
		s.d.dropReplicaRange(r.BlockID, r.GS, start, end)
	})
}

// dropReplicaRange drops [start, end) of a replica's files from the page
// cache, if the replica is still there at that stamp.
func (d *DataNode) dropReplicaRange(blockID, gs uint64, start, end int64) {
	if h, err := d.store.Open(blockID, gs); err == nil {
		d.dropRead(h, start, end)
		h.Close()
	}
}

// dropRetryDelay is how long after a read its pages are dropped again:
// longer than Linux's largest delayed-ACK timeout (200 ms).
const dropRetryDelay = 300 * time.Millisecond

// dropRead drops the pages of [start, end) of a replica's block file and
// of the matching checksums in its meta file.
func (d *DataNode) dropRead(h *store.Handle, start, end int64) {
	bpc := int64(h.BytesPerChecksum)
	dropCache(h.Data, start, end-start)
	dropCache(h.Meta, int64(store.MetaHeaderLen)+start/bpc*datatransfer.ChecksumSize,
		int64(datatransfer.ChunkCount(int(end-start), int(bpc))*datatransfer.ChecksumSize))
}

func (s *diskSource) readerFoundCorruption() { s.d.scanner.suspect(s.h.Replica) }

// streamPackets sends src's packets and the last packet on c, with
// sendfile for the data when possible. It returns the data bytes sent.
func (d *DataNode) streamPackets(c net.Conn, src *packetSource, verify bool) (int64, error) {
	tc, sendfile := c.(*net.TCPConn)
	sendfile = sendfile && !verify && !src.recomputeLast
	var sent int64
	deadline := newLazyDeadline(c.SetWriteDeadline, d.cfg.IOTimeout)
	for n := src.packetLen(); n > 0; n = src.packetLen() {
		deadline.refresh()
		if sendfile {
			hdr, err := src.header(n)
			if err != nil {
				return sent, err
			}
			if _, err := c.Write(hdr); err != nil {
				return sent, err
			}
			m, err := tc.ReadFrom(io.LimitReader(src.h.Data, int64(n)))
			sent += m
			d.metrics.bytesRead.Add(float64(m))
			d.metrics.bytesReadDisk.Add(float64(m))
			if err == nil && m < int64(n) {
				err = fmt.Errorf("%w: %s: block file ends at %d", store.ErrCorrupt, src.h.Name(), src.pos-int64(n)+m)
			}
			if err != nil {
				return sent, err
			}
			continue
		}
		pkt, perr := src.full(n, verify)
		if pkt == nil {
			return sent, perr
		}
		if _, err := c.Write(pkt); err != nil {
			return sent, err
		}
		sent += int64(n)
		d.metrics.bytesRead.Add(float64(n))
		d.metrics.bytesReadDisk.Add(float64(n))
		if perr != nil {
			return sent, perr
		}
	}
	_ = c.SetWriteDeadline(time.Now().Add(d.cfg.IOTimeout))
	_, err := c.Write(src.lastPacket())
	return sent, err
}
