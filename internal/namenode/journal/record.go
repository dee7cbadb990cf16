package journal

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Record framing: uint32 payload length | uint32 CRC32C of (txid, payload)
// | uint64 txid | payload. All big-endian. A zero length is never written,
// so zero-filled space reads as the end of the log.
const headerLen = 16

// MaxRecord bounds one payload; anything larger is corruption.
const MaxRecord = 64 << 20

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func appendRecord(buf []byte, txid uint64, payload []byte) []byte {
	var h [headerLen]byte
	binary.BigEndian.PutUint32(h[0:], uint32(len(payload)))
	binary.BigEndian.PutUint64(h[8:], txid)
	crc := crc32.Update(0, crcTable, h[8:16])
	crc = crc32.Update(crc, crcTable, payload)
	binary.BigEndian.PutUint32(h[4:], crc)
	return append(append(buf, h[:]...), payload...)
}

// errTorn marks a record that is incomplete or fails its checksum.
var errTorn = errors.New("torn or corrupt record")

// readRecords calls fn for each record of r in order. It returns the byte
// offset just past the last good record; on a bad record the error wraps
// errTorn. An error from fn is returned as is.
func readRecords(r io.Reader, fn func(txid uint64, payload []byte) error) (int64, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var off int64
	var h [headerLen]byte
	for {
		n, err := io.ReadFull(br, h[:])
		if err == io.EOF {
			return off, nil
		}
		if err != nil {
			return off, fmt.Errorf("record at offset %d: header cut short after %d bytes: %w", off, n, errTorn)
		}
		size := binary.BigEndian.Uint32(h[0:])
		if size == 0 {
			return off, checkZeros(br, off)
		}
		if size > MaxRecord {
			return off, fmt.Errorf("record at offset %d: length %d exceeds %d: %w", off, size, MaxRecord, errTorn)
		}
		payload := make([]byte, size)
		if _, err := io.ReadFull(br, payload); err != nil {
			return off, fmt.Errorf("record at offset %d: payload cut short: %w", off, errTorn)
		}
		crc := crc32.Update(0, crcTable, h[8:16])
		crc = crc32.Update(crc, crcTable, payload)
		if crc != binary.BigEndian.Uint32(h[4:]) {
			return off, fmt.Errorf("record at offset %d: checksum mismatch: %w", off, errTorn)
		}
		if err := fn(binary.BigEndian.Uint64(h[8:]), payload); err != nil {
			return off, err
		}
		off += headerLen + int64(size)
	}
}

// checkZeros accepts a zero-filled tail (preallocated space) as the end.
func checkZeros(br *bufio.Reader, off int64) error {
	for {
		b, err := br.ReadByte()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if b != 0 {
			return fmt.Errorf("record at offset %d: zero length followed by data: %w", off, errTorn)
		}
	}
}
