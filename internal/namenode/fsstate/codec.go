package fsstate

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// enc and dec are the binary encoding of edit-log and image records:
// uvarints, zigzag varints, length-prefixed strings. Small and
// allocation-light, because every namespace mutation encodes one record.
type enc struct{ b []byte }

func (e *enc) u(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) i(v int64)  { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) s(v string) { e.u(uint64(len(v))); e.b = append(e.b, v...) }
func (e *enc) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

type dec struct {
	b   []byte
	err error
}

var errShort = errors.New("record cut short")

// maxDecodedString bounds one string; a longer one is corruption.
const maxDecodedString = 1 << 20

func (d *dec) u() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) i() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) s() string {
	n := d.u()
	if d.err != nil {
		return ""
	}
	if n > maxDecodedString || n > uint64(len(d.b)) {
		d.err = fmt.Errorf("string of %d bytes: %w", n, errShort)
		return ""
	}
	v := string(d.b[:n])
	d.b = d.b[n:]
	return v
}

func (d *dec) bool() bool {
	if d.err != nil {
		return false
	}
	if len(d.b) == 0 {
		d.err = errShort
		return false
	}
	v := d.b[0]
	d.b = d.b[1:]
	if v > 1 {
		d.err = fmt.Errorf("bad boolean %d", v)
	}
	return v == 1
}

// count reads a list length, bounded by what the remaining bytes can hold
// (each element takes at least min bytes).
func (d *dec) count(min int) int {
	n := d.u()
	if d.err == nil && n > uint64(len(d.b)/min) {
		d.err = fmt.Errorf("list of %d elements in %d bytes: %w", n, len(d.b), errShort)
	}
	return int(n)
}

func (d *dec) done() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d trailing bytes", len(d.b))
	}
	return d.err
}
