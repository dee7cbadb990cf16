package replog

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A batch is the payload of one raft log entry: every record that the
// leader's writers appended between two proposals (group commit), so that
// one entry, one fsync on each node and one round trip carry many
// namespace operations.
//
// Layout: version (1 byte), stint token (8 bytes, big endian; 0 for
// entries proposed by no leader stint, such as none today), first txid
// (uvarint), record count (uvarint), then each record as a uvarint length
// and its bytes. Nothing may follow the last record.
const batchVersion = 1

// MaxRecordSize bounds one record (a namespace operation's encoded edit):
// a decoder never allocates more than the entry it was handed, but a
// length this large in a record is corruption, not an operation.
const MaxRecordSize = 64 << 20

type batch struct {
	token uint64
	first uint64
	recs  [][]byte
}

// encodeBatch frames recs after the header.
func encodeBatch(token, first uint64, recs [][]byte) []byte {
	n := 1 + 8 + 2*binary.MaxVarintLen64
	for _, r := range recs {
		n += binary.MaxVarintLen64 + len(r)
	}
	b := make([]byte, 0, n)
	b = append(b, batchVersion)
	b = binary.BigEndian.AppendUint64(b, token)
	b = binary.AppendUvarint(b, first)
	b = binary.AppendUvarint(b, uint64(len(recs)))
	for _, r := range recs {
		b = binary.AppendUvarint(b, uint64(len(r)))
		b = append(b, r...)
	}
	return b
}

var errBatch = errors.New("replog: malformed batch")

// decodeBatch parses a batch. It trusts nothing in data: the count and
// every length are checked against the bytes that remain before anything
// is allocated, so a hostile or corrupt entry costs at most its own size.
// Records alias data.
func decodeBatch(data []byte) (batch, error) {
	var b batch
	if len(data) < 9 {
		return b, fmt.Errorf("%w: %d bytes, shorter than its header", errBatch, len(data))
	}
	if data[0] != batchVersion {
		return b, fmt.Errorf("%w: version %d, want %d", errBatch, data[0], batchVersion)
	}
	b.token = binary.BigEndian.Uint64(data[1:9])
	p := data[9:]
	first, n := binary.Uvarint(p)
	if n <= 0 {
		return b, fmt.Errorf("%w: bad first txid", errBatch)
	}
	p = p[n:]
	count, n := binary.Uvarint(p)
	if n <= 0 {
		return b, fmt.Errorf("%w: bad record count", errBatch)
	}
	p = p[n:]
	// Every record takes at least one byte (its length), so a count
	// beyond the bytes left is a lie; checking it first bounds the slice.
	if count > uint64(len(p)) {
		return b, fmt.Errorf("%w: %d records in %d bytes", errBatch, count, len(p))
	}
	if first == 0 || first+count < first {
		return b, fmt.Errorf("%w: txids %d+%d", errBatch, first, count)
	}
	b.first = first
	b.recs = make([][]byte, 0, count)
	for i := uint64(0); i < count; i++ {
		l, n := binary.Uvarint(p)
		if n <= 0 {
			return b, fmt.Errorf("%w: record %d: bad length", errBatch, i)
		}
		p = p[n:]
		if l > MaxRecordSize || l > uint64(len(p)) {
			return b, fmt.Errorf("%w: record %d: length %d, %d bytes left", errBatch, i, l, len(p))
		}
		b.recs = append(b.recs, p[:l:l])
		p = p[l:]
	}
	if len(p) != 0 {
		return b, fmt.Errorf("%w: %d bytes after the last record", errBatch, len(p))
	}
	return b, nil
}
