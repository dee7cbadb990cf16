package store

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"smarth/internal/datanode/store/vfs"
)

const (
	metaVersion   = 1
	checksumCRC32 = 1 // CRC32C (Castagnoli)
	// MetaHeaderLen is the size of a meta file's header; chunk i's checksum
	// is at MetaHeaderLen + 4*i.
	MetaHeaderLen = 7
	checksumSize  = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func encodeMetaHeader(bpc int) []byte {
	b := make([]byte, MetaHeaderLen)
	binary.BigEndian.PutUint16(b[0:], metaVersion)
	b[2] = checksumCRC32
	binary.BigEndian.PutUint32(b[3:], uint32(bpc))
	return b
}

// readMetaHeader returns the bytes per checksum of a meta file.
func readMetaHeader(f vfs.File) (int, error) {
	var b [MetaHeaderLen]byte
	if _, err := f.ReadAt(b[:], 0); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, fmt.Errorf("meta file %s: header: %w", f.Name(), err)
	}
	if v := binary.BigEndian.Uint16(b[0:]); v != metaVersion {
		return 0, fmt.Errorf("meta file %s: version %d, expected %d", f.Name(), v, metaVersion)
	}
	if b[2] != checksumCRC32 {
		return 0, fmt.Errorf("meta file %s: checksum type %d, expected CRC32C", f.Name(), b[2])
	}
	bpc := int(binary.BigEndian.Uint32(b[3:]))
	if bpc <= 0 || bpc > 64<<10 {
		return 0, fmt.Errorf("meta file %s: bytes per checksum %d", f.Name(), bpc)
	}
	return bpc, nil
}

func chunkCount(n int64, bpc int) int64 { return (n + int64(bpc) - 1) / int64(bpc) }

// metaLen is the meta file size for a block of n bytes.
func metaLen(n int64, bpc int) int64 { return MetaHeaderLen + chunkCount(n, bpc)*checksumSize }

// truncateReplica cuts the block file to n bytes and the meta file to match,
// recomputing the checksum of a partial last chunk from the data.
func truncateReplica(fs vfs.FS, dataPath, metaPath string, n int64, bpc int) error {
	if err := fs.Truncate(dataPath, n); err != nil {
		return err
	}
	if err := fs.Truncate(metaPath, metaLen(n, bpc)); err != nil {
		return err
	}
	partial := n % int64(bpc)
	if partial == 0 {
		return nil
	}
	data, err := fs.Open(dataPath)
	if err != nil {
		return err
	}
	defer data.Close()
	buf := make([]byte, partial)
	if _, err := data.ReadAt(buf, n-partial); err != nil {
		return fmt.Errorf("reading last chunk of %s: %w", dataPath, err)
	}
	meta, err := fs.OpenFile(metaPath, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	var sum [checksumSize]byte
	binary.BigEndian.PutUint32(sum[:], crc32.Checksum(buf, castagnoli))
	_, err = meta.WriteAt(sum[:], MetaHeaderLen+(chunkCount(n, bpc)-1)*checksumSize)
	if cerr := meta.Close(); err == nil {
		err = cerr
	}
	return err
}
