package mapreduce

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Intermediate data (spills, a map's final output, fetched segments) is a
// sequence of records, each uvarint(len key) uvarint(len value) key value,
// with no framing beyond that: a segment's length comes from its index
// entry. Nothing is compressed, so a segment can be sent with sendfile.

// SegmentIndex locates one partition inside a map output or spill file.
type SegmentIndex struct {
	Offset  int64
	Length  int64
	Records int64
	// CRC is the CRC32C (Castagnoli) of the segment's bytes, computed as
	// the map writes them and checked by the reduce that fetches them, so
	// a segment damaged on disk, in memory or on the wire is a fetch
	// failure (the map runs again), never wrong output.
	CRC uint32
}

// castagnoli is the CRC32C table (hardware-accelerated where the CPU has
// it; MakeTable returns the package's one instance).
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// SegmentCRC is the CRC32C of a segment's bytes.
func SegmentCRC(b []byte) uint32 { return crc32.Checksum(b, castagnoli()) }

// CheckedSegment wraps a segment's reader: it sums what is read, and
// Verify (after the last byte) compares the sum with want.
func CheckedSegment(rc io.ReadCloser, want uint32) io.ReadCloser {
	return &checkedSegment{ReadCloser: rc, want: want}
}

type checkedSegment struct {
	io.ReadCloser
	want, crc uint32
}

func (c *checkedSegment) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.crc = crc32.Update(c.crc, castagnoli(), p[:n])
	return n, err
}

// Verify reports a segment whose bytes do not match its checksum.
func (c *checkedSegment) Verify() error { return checkCRC(c.crc, c.want) }

func checkCRC(got, want uint32) error {
	if got != want {
		return fmt.Errorf("%w: CRC32C %08x, the map wrote %08x", ErrCorruptSegment, got, want)
	}
	return nil
}

// verifySegment checks a fetched segment's reader when it can be checked
// (every fetcher of the runtime's own returns one that can).
func verifySegment(rc io.Reader) error {
	if v, ok := rc.(interface{ Verify() error }); ok {
		return v.Verify()
	}
	return nil
}

// ErrCorruptSegment reports intermediate bytes that do not parse.
var ErrCorruptSegment = errors.New("corrupt intermediate segment")

// appendRecord encodes one record onto buf.
func appendRecord(buf, key, value []byte) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(key)))
	buf = binary.AppendUvarint(buf, uint64(len(value)))
	buf = append(buf, key...)
	return append(buf, value...)
}

// segmentWriter writes records to a file through its own buffer,
// tracking the offset. A record is framed and copied into the buffer in
// one go (no per-field Write calls), which matters when the records come
// from scattered places in a sort arena.
type segmentWriter struct {
	w    io.Writer
	buf  []byte
	off  int64
	recs int64
	err  error
	// inMemory: buf is the destination itself; it grows instead of being
	// flushed.
	inMemory bool
	// crc is the current segment's CRC32C over the bytes before
	// buf[summed:] (summed in bulk at each flush and segment end, not per
	// record).
	crc    uint32
	summed int
}

// sum folds the bytes buffered since the last sum into the CRC.
func (w *segmentWriter) sum() {
	w.crc = crc32.Update(w.crc, castagnoli(), w.buf[w.summed:])
	w.summed = len(w.buf)
}

// endSegment returns the CRC32C of the segment written since the last
// call and starts the next one.
func (w *segmentWriter) endSegment() uint32 {
	w.sum()
	c := w.crc
	w.crc = 0
	return c
}

func newSegmentWriter(w io.Writer) *segmentWriter {
	return &segmentWriter{w: w, buf: make([]byte, 0, 1<<20)}
}

func (w *segmentWriter) write(key, value []byte) error {
	n := len(key) + len(value) + 2*binary.MaxVarintLen32
	if w.inMemory {
		w.buf = binary.AppendUvarint(w.buf, uint64(len(key)))
		w.buf = binary.AppendUvarint(w.buf, uint64(len(value)))
		w.buf = append(append(w.buf, key...), value...)
		w.off = int64(len(w.buf))
		w.recs++
		return nil
	}
	if len(w.buf)+n > cap(w.buf) {
		w.flush()
	}
	w.buf = binary.AppendUvarint(w.buf, uint64(len(key)))
	w.buf = binary.AppendUvarint(w.buf, uint64(len(value)))
	w.off += int64(len(key) + len(value) + uvarintLen(len(key)) + uvarintLen(len(value)))
	w.recs++
	if n > cap(w.buf) { // larger than the buffer: straight through
		w.flush()
		w.writeThrough(key)
		w.writeThrough(value)
		return w.err
	}
	w.buf = append(w.buf, key...)
	w.buf = append(w.buf, value...)
	return w.err
}

// writeKV writes a record whose key and value lie back to back in kv.
func (w *segmentWriter) writeKV(kv []byte, keyLen int) error {
	return w.write(kv[:keyLen], kv[keyLen:])
}

// writeThrough writes bytes that bypass the buffer (the buffer was
// flushed, and so summed, first).
func (w *segmentWriter) writeThrough(b []byte) {
	w.crc = crc32.Update(w.crc, castagnoli(), b)
	w.write0(b)
}

func (w *segmentWriter) write0(b []byte) {
	if w.err == nil {
		_, w.err = w.w.Write(b)
	}
}

func (w *segmentWriter) flush() error {
	if len(w.buf) > 0 && !w.inMemory {
		w.sum()
		w.write0(w.buf)
		w.buf, w.summed = w.buf[:0], 0
	}
	return w.err
}

func uvarintLen(n int) int {
	l := 1
	for n >= 0x80 {
		n >>= 7
		l++
	}
	return l
}

// recordStream yields records in order. Returned slices are valid until
// the next call to next.
type recordStream interface {
	next() (key, value []byte, err error) // io.EOF at the end
}

// memSegment parses records from a byte slice without copying.
type memSegment struct {
	b   []byte
	pos int
}

func (m *memSegment) next() ([]byte, []byte, error) {
	if m.pos >= len(m.b) {
		return nil, nil, io.EOF
	}
	kl, n1 := binary.Uvarint(m.b[m.pos:])
	if n1 <= 0 {
		return nil, nil, ErrCorruptSegment
	}
	vl, n2 := binary.Uvarint(m.b[m.pos+n1:])
	if n2 <= 0 {
		return nil, nil, ErrCorruptSegment
	}
	p := m.pos + n1 + n2
	if kl > uint64(len(m.b)-p) || vl > uint64(len(m.b)-p)-kl {
		return nil, nil, ErrCorruptSegment
	}
	k := m.b[p : p+int(kl)]
	v := m.b[p+int(kl) : p+int(kl)+int(vl)]
	m.pos = p + int(kl) + int(vl)
	return k, v, nil
}

// readerSegment parses records from a stream, reusing one buffer.
type readerSegment struct {
	br        *bufio.Reader
	remaining int64 // bytes left in the segment
	buf       []byte
}

func newReaderSegment(r io.Reader, length int64) *readerSegment {
	return &readerSegment{br: bufio.NewReaderSize(r, 128<<10), remaining: length}
}

func (s *readerSegment) next() ([]byte, []byte, error) {
	if s.remaining <= 0 {
		return nil, nil, io.EOF
	}
	kl, n1, err := s.uvarint()
	if err != nil {
		return nil, nil, err
	}
	vl, n2, err := s.uvarint()
	if err != nil {
		return nil, nil, err
	}
	s.remaining -= int64(n1 + n2)
	total := kl + vl
	if kl > uint64(s.remaining) || total > uint64(s.remaining) {
		return nil, nil, ErrCorruptSegment
	}
	if uint64(cap(s.buf)) < total {
		s.buf = make([]byte, total, total+total/4)
	}
	s.buf = s.buf[:total]
	if _, err := io.ReadFull(s.br, s.buf); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrCorruptSegment, err)
	}
	s.remaining -= int64(total)
	return s.buf[:kl], s.buf[kl:], nil
}

// uvarint reads one uvarint within the segment, returning its length.
func (s *readerSegment) uvarint() (uint64, int, error) {
	var x uint64
	var shift uint
	for i := 0; i < binary.MaxVarintLen64; i++ {
		if int64(i) >= s.remaining {
			return 0, 0, ErrCorruptSegment
		}
		b, err := s.br.ReadByte()
		if err != nil {
			return 0, 0, fmt.Errorf("%w: %v", ErrCorruptSegment, err)
		}
		if b < 0x80 {
			if i == binary.MaxVarintLen64-1 && b > 1 {
				return 0, 0, ErrCorruptSegment
			}
			return x | uint64(b)<<shift, i + 1, nil
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
	return 0, 0, ErrCorruptSegment
}
