package apps

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"sync"

	"smarth/internal/mapreduce"
)

// TeraGen's rows, as in Hadoop's original TeraGen: 100 bytes each,
//
//	key    10 bytes  printable ASCII (' '..'~'), pseudo-random
//	rowid  10 bytes  the row number, decimal, zero-padded
//	filler 78 bytes  runs of one capital letter, derived from the row number
//	       "\r\n"
//
// Every row is a function of its row number only (a counter-based
// generator), so any map can produce any range of rows and the same --rows
// always give the same data, whatever the number of maps.
const (
	teraRowLen   = 100
	teraKeyLen   = 10
	teraValueLen = teraRowLen - teraKeyLen
	teraMaxRows  = 9_999_999_999 // the rowid field holds 10 digits
)

// splitmix64 is a strong 64-bit mixing function (Steele et al., "Fast
// splittable pseudorandom number generators"); fed a counter it is a
// counter-based generator.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// makeTeraRow writes row number row into dst[:100].
func makeTeraRow(dst []byte, row uint64) {
	_ = dst[teraRowLen-1]
	// Key: 5 characters from each of two 64-bit draws; multiplying by 95
	// and taking the high word extracts one base-95 digit at a time.
	for h := 0; h < 2; h++ {
		x := splitmix64(2*row + uint64(h))
		for i := 0; i < 5; i++ {
			var d uint64
			d, x = bits.Mul64(x, 95)
			dst[5*h+i] = byte(' ' + d)
		}
	}
	r := row
	for i := 19; i >= 10; i-- {
		dst[i] = byte('0' + r%10)
		r /= 10
	}
	copy(dst[20:98], teraFillers()[(row*8)%26][:])
	dst[98], dst[99] = '\r', '\n'
}

// teraFillers holds the 26 possible fillers: the one starting with
// letter b has runs of ten b, b+1, ... (mod 26), the last run eight long.
var teraFillers = sync.OnceValue(func() *[26][78]byte {
	var f [26][78]byte
	for b := range f {
		for i := range f[b] {
			f[b][i] = byte('A' + (b+i/10)%26)
		}
	}
	return &f
})

// rowChecksum is TeraValidate's per-row checksum: the CRC32 (IEEE) of the
// whole 100-byte row; a data set's checksum is the sum over its rows, so
// it does not depend on the order of rows or how they are split in files.
func rowChecksum(row []byte) uint64 { return uint64(crc32.ChecksumIEEE(row)) }

// teraInput reads 100-byte rows from files, as Hadoop's TeraInputFormat:
// one split per block, rows belong to the split their first byte lies in
// (rows are aligned on multiples of 100 from the start of the file). Key
// is the row's first 10 bytes, value the other 90. wholeFiles makes one
// split per file (TeraValidate).
type teraInput struct{ wholeFiles bool }

var _ mapreduce.InputFormat = teraInput{}

func (t teraInput) Splits(ctx context.Context, fs mapreduce.FS, job *mapreduce.Job) ([]mapreduce.Split, error) {
	files, err := mapreduce.InputFiles(ctx, fs, job.Input)
	if err != nil {
		return nil, err
	}
	if !t.wholeFiles {
		return mapreduce.FileSplits(ctx, fs, files)
	}
	splits := make([]mapreduce.Split, 0, len(files))
	for _, f := range files {
		s := mapreduce.Split{Index: len(splits), Path: f.Path, Length: f.Size}
		if f.Size > 0 {
			if locs, err := fs.BlockLocations(ctx, f.Path, 0, 1); err == nil && len(locs) > 0 {
				s.Hosts = locs[0].Hosts
			}
		}
		splits = append(splits, s)
	}
	return splits, nil
}

func (teraInput) Open(ctx context.Context, fs mapreduce.FS, _ *mapreduce.Job, s mapreduce.Split) (mapreduce.RecordReader, error) {
	f, err := fs.Open(ctx, s.Path)
	if err != nil {
		return nil, err
	}
	first := (s.Offset + teraRowLen - 1) / teraRowLen * teraRowLen
	end := (s.Offset + s.Length + teraRowLen - 1) / teraRowLen * teraRowLen
	end = min(end, f.Size())
	if first >= end {
		first = end
	}
	// Seek and stream rather than ReadAt: on the DFS a positional read
	// sets up a block read per call, a stream one per block.
	if _, err := f.Seek(first, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("seek %s: %w", s.Path, err)
	}
	return &teraReader{f: f, path: s.Path, r: f, left: end - first, buf: make([]byte, 10486*teraRowLen)}, nil
}

// teraReader returns rows as slices of a 1 MiB buffer.
type teraReader struct {
	f       mapreduce.File
	path    string
	r       io.Reader
	left    int64 // bytes of this split not yet in buf
	buf     []byte
	n, next int // valid bytes in buf, offset of the next row
	read    int64
}

func (t *teraReader) Next() ([]byte, []byte, error) {
	if t.next >= t.n {
		if t.left == 0 {
			return nil, nil, io.EOF
		}
		want := int(min(int64(len(t.buf)), t.left))
		n, err := io.ReadFull(t.r, t.buf[:want])
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", t.path, err)
		}
		if n%teraRowLen != 0 {
			return nil, nil, fmt.Errorf("%s: size is not a multiple of %d bytes (not TeraGen data?)", t.path, teraRowLen)
		}
		t.left -= int64(n)
		t.n, t.next = n, 0
	}
	row := t.buf[t.next : t.next+teraRowLen]
	t.next += teraRowLen
	t.read += teraRowLen
	return row[:teraKeyLen], row[teraKeyLen:], nil
}

func (t *teraReader) BytesRead() int64 { return t.read }
func (t *teraReader) Close() error     { return t.f.Close() }

// teraRowsInput generates TeraGen's row numbers: split i covers a range of
// rows and yields one record per row (key: the row number, 8 bytes).
type teraRowsInput struct {
	rows int64
	maps int
}

func (g teraRowsInput) Splits(context.Context, mapreduce.FS, *mapreduce.Job) ([]mapreduce.Split, error) {
	return generatedSplits(g.rows, g.maps), nil
}

func (teraRowsInput) Open(_ context.Context, _ mapreduce.FS, _ *mapreduce.Job, s mapreduce.Split) (mapreduce.RecordReader, error) {
	first, count, err := decodeRange(s.Meta)
	if err != nil {
		return nil, err
	}
	return &rowCounter{next: first, end: first + count}, nil
}

type rowCounter struct {
	next, end int64
	key       [8]byte
}

func (r *rowCounter) Next() ([]byte, []byte, error) {
	if r.next >= r.end {
		return nil, nil, io.EOF
	}
	binary.BigEndian.PutUint64(r.key[:], uint64(r.next))
	r.next++
	return r.key[:], nil, nil
}
func (r *rowCounter) BytesRead() int64 { return 0 }
func (r *rowCounter) Close() error     { return nil }

// rawOutput writes key and value back to back (TeraGen and TeraSort rows).
type rawOutput struct{}

func (rawOutput) Create(ctx context.Context, fs mapreduce.FS, job *mapreduce.Job, path string) (mapreduce.RecordWriter, error) {
	f, err := fs.Create(ctx, path, mapreduce.CreateOptions{Replication: job.OutputReplication})
	if err != nil {
		return nil, err
	}
	return &rawWriter{f: f, buf: make([]byte, 0, 1<<20)}, nil
}

// rawWriter buffers rows itself (rather than through bufio) so a Write is
// two appends.
type rawWriter struct {
	f   io.WriteCloser
	buf []byte
	err error
}

func (w *rawWriter) Write(k, v []byte) error {
	if len(w.buf)+len(k)+len(v) > cap(w.buf) {
		w.flush()
	}
	w.buf = append(append(w.buf, k...), v...)
	return w.err
}

func (w *rawWriter) flush() {
	if len(w.buf) > 0 && w.err == nil {
		_, w.err = w.f.Write(w.buf)
	}
	w.buf = w.buf[:0]
}

func (w *rawWriter) Close() error {
	w.flush()
	if err := w.f.Close(); w.err == nil {
		w.err = err
	}
	return w.err
}
