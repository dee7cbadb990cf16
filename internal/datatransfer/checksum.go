package datatransfer

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// ChecksumSize is the size of one chunk checksum (CRC32C) on the wire and in
// a datanode's meta file.
const ChecksumSize = 4

// castagnoli is built once: hash/crc32 uses the CPU's CRC32C instruction for
// this table, which keeps checksumming far below the cost of the copies.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ChunkCount is the number of bpc-byte chunks (the last one possibly partial)
// in n bytes.
func ChunkCount(n, bpc int) int {
	return (n + bpc - 1) / bpc
}

// CRC32C returns the Castagnoli CRC of b.
func CRC32C(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// PutChecksums writes the CRC32C of every bpc-byte chunk of data into sums,
// which must hold ChunkCount(len(data), bpc)*ChecksumSize bytes.
func PutChecksums(sums, data []byte, bpc int) {
	for i := 0; len(data) > 0; i++ {
		n := min(bpc, len(data))
		binary.BigEndian.PutUint32(sums[i*ChecksumSize:], crc32.Checksum(data[:n], castagnoli))
		data = data[n:]
	}
}

// VerifyChecksums checks data against sums chunk by chunk and returns the
// index of the first mismatching chunk, or -1 if all match. sums must hold
// at least ChunkCount(len(data), bpc) checksums.
func VerifyChecksums(sums, data []byte, bpc int) int {
	for i := 0; len(data) > 0; i++ {
		n := min(bpc, len(data))
		if binary.BigEndian.Uint32(sums[i*ChecksumSize:]) != crc32.Checksum(data[:n], castagnoli) {
			return i
		}
		data = data[n:]
	}
	return -1
}

// ChecksumError reports data whose CRC32C does not match its checksum.
type ChecksumError struct {
	Offset int64 // offset in the block of the first byte of the bad chunk
	Want   uint32
	Got    uint32
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("checksum mismatch in chunk at block offset %d: stored %08x, data has %08x", e.Offset, e.Want, e.Got)
}
