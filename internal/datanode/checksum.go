package datanode

import (
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net"

	"smarth/internal/blocktoken"
	"smarth/internal/datanode/store"
	"smarth/internal/rpc/dfspb"
)

// checksumBatch is how many stored chunk checksums are read at a time.
const checksumBatch = 16 << 10

// blockChecksumOp answers BLOCK_CHECKSUM: the MD5 of the replica's stored
// CRC32C chunk checksums over the first block.num_bytes bytes, as HDFS's
// datanode computes it for MD5MD5CRC32C file checksums. Only the meta file
// is read (plus the data of a partial last chunk when the replica is
// longer than asked, whose stored checksum covers more bytes).
func (d *DataNode) blockChecksumOp(c net.Conn, op *dfspb.BlockChecksumOp) {
	b := op.GetBlock()
	sum, err := d.blockChecksum(b.GetBlockId(), b.GetGenerationStamp(), b.GetNumBytes())
	if err != nil {
		st := dfspb.OpStatus_OP_STATUS_ERROR
		if errors.Is(err, store.ErrCorrupt) {
			st = dfspb.OpStatus_OP_STATUS_ERROR_CHECKSUM
		}
		d.log.Warn("block checksum failed", "block", store.BlockName(b.GetBlockId(), b.GetGenerationStamp()), "err", err)
		_ = d.writeResponse(c, errResponse(st, err.Error()))
		return
	}
	_ = d.writeResponse(c, &dfspb.OpResponse{Status: dfspb.OpStatus_OP_STATUS_SUCCESS, Checksum: sum})
}

func (d *DataNode) blockChecksum(id, gs uint64, n int64) (*dfspb.BlockChecksum, error) {
	h, err := d.store.Open(id, gs)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if n < 0 || n > h.Visible {
		return nil, fmt.Errorf("%s: checksum of %d bytes asked, replica has %d", h.Name(), n, h.Visible)
	}
	bpc := int64(h.BytesPerChecksum)
	chunks := (n + bpc - 1) / bpc
	stored := chunks // chunks whose stored checksum is the answer
	var last []byte
	if partial := n % bpc; partial != 0 && h.Length > n {
		// The stored checksum of the last chunk covers bytes beyond n
		// (a replica longer than the block asked for): use the checksum
		// of the bytes asked for instead.
		crc, err := partialChunkCRC(h, n-partial, partial)
		if err != nil {
			return nil, err
		}
		stored, last = chunks-1, binary.BigEndian.AppendUint32(nil, crc)
	}
	md := md5.New()
	buf := make([]byte, 4*min(max(stored, 1), checksumBatch))
	for first := int64(0); first < stored; first += checksumBatch {
		k := min(stored-first, checksumBatch)
		if err := h.ReadChecksums(buf[:4*k], first); err != nil {
			return nil, err
		}
		md.Write(buf[:4*k])
	}
	md.Write(last)
	return &dfspb.BlockChecksum{BytesPerCrc: uint32(bpc), CrcPerBlock: uint64(chunks), Md5: md.Sum(nil)}, nil
}

func partialChunkCRC(h *store.Handle, off, n int64) (uint32, error) {
	data := make([]byte, n)
	if _, err := h.Data.ReadAt(data, off); err != nil {
		return 0, fmt.Errorf("%s: reading the last chunk: %w", h.Name(), err)
	}
	return crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)), nil
}

// checksumWant is what a block checksum needs of the access token: read
// access to the block.
func checksumWant(op *dfspb.BlockChecksumOp) blocktoken.Want {
	b := op.GetBlock()
	return blocktoken.Want{BlockID: b.GetBlockId(), GS: b.GetGenerationStamp(), Mode: blocktoken.Read}
}
