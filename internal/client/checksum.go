package client

import (
	"bufio"
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// FileChecksum is HDFS's MD5MD5CRC32C file checksum
// (MD5MD5CRC32CastagnoliFileChecksum): the MD5 of the concatenated
// per-block MD5s of each block's CRC32C chunk checksums. The same bytes
// written with the same block size and bytes per checksum give the same
// value on HDFS and here.
type FileChecksum struct {
	BytesPerCRC int
	// CRCPerBlock is the first block's chunk count when the file has more
	// than one block, else 0 (as HDFS's client sets it).
	CRCPerBlock int64
	MD5         [md5.Size]byte
	// CRCType is "CRC32C"; an empty file reports "CRC32", as HDFS does
	// for a file with no blocks.
	CRCType string
}

// Algorithm is the name HDFS gives the checksum, e.g.
// "MD5-of-2048MD5-of-512CRC32C".
func (c FileChecksum) Algorithm() string {
	return fmt.Sprintf("MD5-of-%dMD5-of-%d%s", c.CRCPerBlock, c.BytesPerCRC, c.CRCType)
}

// Bytes is the checksum's serialised form (MD5MD5CRC32FileChecksum.getBytes:
// int bytesPerCRC, long crcPerBlock, the MD5; big-endian).
func (c FileChecksum) Bytes() []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(c.BytesPerCRC))
	b = binary.BigEndian.AppendUint64(b, uint64(c.CRCPerBlock))
	return append(b, c.MD5[:]...)
}

// String is Bytes in hex, as hdfs dfs -checksum prints it.
func (c FileChecksum) String() string { return hex.EncodeToString(c.Bytes()) }

// FileChecksum computes the checksum of the file at p from the checksums
// the datanodes stored when the blocks were written: each block's MD5 comes
// from one of its replicas (the next one on failure); no data is read.
// Blocks still being written are not covered, as in HDFS.
func (f *FileSystem) FileChecksum(ctx context.Context, p string) (FileChecksum, error) {
	p, err := cleanPath(p)
	if err != nil {
		return FileChecksum{}, err
	}
	lbs, err := f.locations(ctx, "checksum", p, 0, 0)
	if err != nil {
		return FileChecksum{}, err
	}
	var blocks []*dfspb.LocatedBlock
	for _, lb := range lbs.GetBlocks() {
		if lb.GetOffset() < lbs.GetFileLength() {
			blocks = append(blocks, lb)
		}
	}
	if len(blocks) == 0 {
		return FileChecksum{MD5: md5.Sum(hdfsDigestInput(nil)), CRCType: "CRC32"}, nil
	}
	sum := FileChecksum{CRCType: "CRC32C"}
	md5s := make([]byte, 0, md5.Size*len(blocks))
	for i, lb := range blocks {
		bs, err := f.blockChecksum(ctx, lb)
		if err != nil {
			return FileChecksum{}, &PathError{Op: "checksum", Path: p, Kind: ErrCorrupt,
				Msg: fmt.Sprintf("fail to get the MD5 of block %d (offset %d): %v", lb.GetBlock().GetBlockId(), lb.GetOffset(), err)}
		}
		switch {
		case i == 0:
			sum.BytesPerCRC = int(bs.GetBytesPerCrc())
		case int(bs.GetBytesPerCrc()) != sum.BytesPerCRC:
			return FileChecksum{}, &PathError{Op: "checksum", Path: p, Kind: fs.ErrInvalid,
				Msg: fmt.Sprintf("bytes per checksum not matched: block %d has %d, the first block %d", lb.GetBlock().GetBlockId(), bs.GetBytesPerCrc(), sum.BytesPerCRC)}
		}
		if i == 0 && len(blocks) > 1 {
			sum.CRCPerBlock = int64(bs.GetCrcPerBlock())
		}
		md5s = append(md5s, bs.GetMd5()...)
	}
	sum.MD5 = md5.Sum(hdfsDigestInput(md5s))
	return sum, nil
}

// hdfsDigestInput is what HDFS's client feeds the file MD5 given the
// block MD5s: it digests its DataOutputBuffer's whole backing array
// (getData(), not the written length), a java.io.ByteArrayOutputStream
// that starts at 32 bytes and doubles, so the block MD5s are followed by
// zeros up to that capacity (32 zero bytes for an empty file, HDFS's
// well-known empty checksum). Matching it is what makes the checksums
// equal.
func hdfsDigestInput(md5s []byte) []byte {
	capacity := 32
	for capacity < len(md5s) {
		capacity *= 2
	}
	return append(md5s, make([]byte, capacity-len(md5s))...)
}

// blockChecksum asks the block's replicas in turn for its checksum.
func (f *FileSystem) blockChecksum(ctx context.Context, lb *dfspb.LocatedBlock) (*dfspb.BlockChecksum, error) {
	var errs []error
	for _, d := range lb.GetLocations() {
		bs, err := f.blockChecksumFrom(ctx, lb, d)
		if err == nil {
			return bs, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", dataAddr(d), err))
	}
	if len(errs) == 0 {
		return nil, errors.New("no datanode holds the block")
	}
	return nil, errors.Join(errs...)
}

func (f *FileSystem) blockChecksumFrom(ctx context.Context, lb *dfspb.LocatedBlock, d *dfspb.DatanodeInfo) (*dfspb.BlockChecksum, error) {
	dctx, cancel := context.WithTimeout(ctx, f.cfg.DialTimeout)
	defer cancel()
	conn, err := f.cfg.Dial(dctx, dataAddr(d))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(f.cfg.IOTimeout))
	if err := datatransfer.WriteOp(conn, &dfspb.BlockChecksumOp{Block: lb.GetBlock(), Token: lb.GetToken(), ClientName: f.cfg.ClientName}); err != nil {
		return nil, err
	}
	resp, err := datatransfer.ReadResponse(bufio.NewReader(conn))
	if err != nil {
		return nil, err
	}
	if err := datatransfer.ResponseError(resp); err != nil {
		return nil, err
	}
	bs := resp.GetChecksum()
	if bs == nil || len(bs.GetMd5()) != md5.Size || bs.GetBytesPerCrc() == 0 {
		return nil, fmt.Errorf("%w: malformed block checksum answer", datatransfer.ErrProtocol)
	}
	return bs, nil
}
