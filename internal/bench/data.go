package bench

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
)

// Data is the content of a benchmark file, generated in memory: byte i of
// the file is pattern[i mod len(pattern)], a seeded pseudo-random pattern
// whose length is not a power of two, so no two blocks of a file are the
// same and nothing compresses. Writing it costs a memcpy per byte, which
// keeps data generation out of the measurement.
type Data struct {
	pattern []byte
}

// patternLen is 1 MiB + 7: odd, so that block and packet boundaries never
// line up with the pattern's period.
const patternLen = 1<<20 + 7

// NewData returns the content for seed.
func NewData(seed uint64) *Data {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	p := make([]byte, patternLen)
	for i := 0; i+8 <= len(p); i += 8 {
		v := r.Uint64()
		for j := range 8 {
			p[i+j] = byte(v >> (8 * j))
		}
	}
	for i := len(p) &^ 7; i < len(p); i++ {
		p[i] = byte(r.Uint32())
	}
	return &Data{pattern: p}
}

// Fill writes the file's bytes [off, off+len(p)) into p.
func (d *Data) Fill(p []byte, off int64) {
	i := int(off % int64(len(d.pattern)))
	for len(p) > 0 {
		n := copy(p, d.pattern[i:])
		p = p[n:]
		i = 0
	}
}

// Check compares p with the file's bytes at off and describes the first
// difference.
func (d *Data) Check(p []byte, off int64) error {
	i := int(off % int64(len(d.pattern)))
	done := 0
	for done < len(p) {
		seg := d.pattern[i:]
		n := min(len(seg), len(p)-done)
		if !bytes.Equal(p[done:done+n], seg[:n]) {
			for k := range n {
				if p[done+k] != seg[k] {
					return fmt.Errorf("content differs at byte %d: got %#02x, want %#02x", off+int64(done+k), p[done+k], seg[k])
				}
			}
		}
		done += n
		i = 0
	}
	return nil
}

// Reader returns an io.Reader over the first size bytes of the content.
func (d *Data) Reader(size int64) *DataReader { return &DataReader{d: d, size: size} }

// DataReader reads a Data from offset 0 to its size.
type DataReader struct {
	d    *Data
	off  int64
	size int64
}

func (r *DataReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.size-r.off)]
	r.d.Fill(p, r.off)
	r.off += int64(len(p))
	return len(p), nil
}
