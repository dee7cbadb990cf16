package datanode

import (
	"net"

	"smarth/internal/datanode/memcache"
	"smarth/internal/datanode/store"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// cachedReplica returns the cached copy of the requested block, with a
// reference the caller releases, or nil when the read must go to the
// store. A copy is served only when the store still has the same
// finalized, uncorrupted replica: the store's Changed hook uncaches on
// every change, and this check keeps a missed or racing change from ever
// serving stale bytes. As for the files, a replica with a newer generation
// stamp than requested is served (the reader has not heard of a recovery).
func (d *DataNode) cachedReplica(b *dfspb.ExtendedBlock) *memcache.Block {
	blk := d.cache.Get(b.GetBlockId())
	if blk == nil {
		return nil
	}
	r, ok := d.store.Get(b.GetBlockId())
	if blk.GS < b.GetGenerationStamp() || !ok || r.GS != blk.GS || r.State != store.Finalized || r.Corrupt || r.Length != blk.Length {
		blk.Release()
		return nil
	}
	return blk
}

// memorySource serves a read from the memory cache: the packets are the
// cached data and the checksums read from the meta file when the block was
// cached and verified, written with writev straight from the mapping.
type memorySource struct {
	d          *DataNode
	blk        *memcache.Block
	start, end int64
}

func (s *memorySource) replica() store.Replica {
	b := s.blk
	return store.Replica{BlockID: b.ID, GS: b.GS, Length: b.Length, Visible: b.Length, State: store.Finalized, BytesPerChecksum: b.BytesPerChecksum}
}

func (s *memorySource) prepare(start, end int64) error {
	s.start, s.end = start, end
	return nil
}

func (s *memorySource) stream(c net.Conn) (int64, error) {
	bpc := int64(s.blk.BytesPerChecksum)
	dataMax := max(datatransfer.DefaultPacketDataLen/bpc*bpc, bpc)
	data, sums := s.blk.Data(), s.blk.Sums()
	var hdr [datatransfer.PacketHeaderLen]byte
	deadline := newLazyDeadline(c.SetWriteDeadline, s.d.cfg.IOTimeout)
	seqno, sent := int64(0), int64(0)
	for pos := s.start; pos < s.end; {
		n := min(dataMax, s.end-pos)
		first := pos / bpc * datatransfer.ChecksumSize
		nsums := int64(datatransfer.ChunkCount(int(n), int(bpc)) * datatransfer.ChecksumSize)
		datatransfer.PacketHeader{DataLen: uint32(n), Offset: pos, Seqno: seqno, BytesPerChecksum: uint32(bpc)}.Put(hdr[:])
		deadline.refresh()
		bufs := net.Buffers{hdr[:], sums[first : first+nsums], data[pos : pos+n]}
		if _, err := bufs.WriteTo(c); err != nil {
			return sent, err
		}
		seqno++
		pos += n
		sent += n
		s.d.metrics.bytesRead.Add(float64(n))
		s.d.metrics.bytesReadMemory.Add(float64(n))
	}
	datatransfer.PacketHeader{Offset: s.end, Seqno: seqno, Flags: datatransfer.FlagLast, BytesPerChecksum: uint32(bpc)}.Put(hdr[:])
	deadline.refresh()
	_, err := c.Write(hdr[:])
	return sent, err
}

func (s *memorySource) finish() {}

// readerFoundCorruption: the bytes in memory were verified when cached, so
// a mismatch the reader saw points at memory or the network. Drop the copy
// (later reads go to the disk) and let the scanner check the replica.
func (s *memorySource) readerFoundCorruption() {
	if s.d.cache.Uncache(s.blk.ID) {
		s.d.metrics.blocksUncached.Inc()
		s.d.log.Warn("block uncached: a reader found a checksum mismatch in bytes served from memory", "block", s.blk.ID)
	}
	s.d.scanner.suspect(s.replica())
}
