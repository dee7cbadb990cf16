package apps

import (
	"bytes"
	"strconv"
	"unsafe"
)

// Byte-level parsing for map and reduce functions: no allocation, no fmt.

// parseInt reads a decimal integer (optional sign, no spaces).
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	neg := false
	switch b[0] {
	case '-':
		neg, b = true, b[1:]
	case '+':
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if v < 0 { // overflowed 19 digits
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseCents reads a decimal amount with up to two fraction digits
// ("12", "12.5", "12.34") as an integer number of hundredths, so sums of
// money are exact whatever the order of addition.
func parseCents(b []byte) (int64, bool) {
	dot := bytes.IndexByte(b, '.')
	if dot < 0 {
		v, ok := parseInt(b)
		return v * 100, ok
	}
	whole, ok := parseInt(b[:dot])
	if !ok && dot > 0 && !(dot == 1 && b[0] == '-') {
		return 0, false
	}
	neg := len(b) > 0 && b[0] == '-'
	frac := b[dot+1:]
	if len(frac) > 2 {
		return 0, false
	}
	var f int64
	for i := 0; i < 2; i++ {
		f *= 10
		if i < len(frac) {
			c := frac[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			f += int64(c - '0')
		}
	}
	if neg {
		return whole*100 - f, true
	}
	return whole*100 + f, true
}

// appendCents writes hundredths as a decimal with two fraction digits.
func appendCents(dst []byte, c int64) []byte {
	if c < 0 {
		dst = append(dst, '-')
		c = -c
	}
	dst = strconv.AppendInt(dst, c/100, 10)
	f := c % 100
	return append(dst, '.', byte('0'+f/10), byte('0'+f%10))
}

// parseFloat reads a float without copying b into a string: strconv does
// not keep its argument (its errors carry a copy).
func parseFloat(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(unsafe.String(&b[0], len(b)), 64)
	return v, err == nil
}

// cutByte splits b at the first sep; ok is false when sep is absent, in
// which case before is all of b.
func cutByte(b []byte, sep byte) (before, after []byte, ok bool) {
	if i := bytes.IndexByte(b, sep); i >= 0 {
		return b[:i], b[i+1:], true
	}
	return b, nil, false
}

// field returns the i-th sep-separated field of b (0-based) and whether b
// has that many fields.
func field(b []byte, sep byte, i int) ([]byte, bool) {
	for ; i > 0; i-- {
		j := bytes.IndexByte(b, sep)
		if j < 0 {
			return nil, false
		}
		b = b[j+1:]
	}
	if j := bytes.IndexByte(b, sep); j >= 0 {
		return b[:j], true
	}
	return b, true
}

// countFields is the number of sep-separated fields of b.
func countFields(b []byte, sep byte) int { return bytes.Count(b, []byte{sep}) + 1 }

// trimEOL drops a trailing "\n" or "\r\n".
func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n > 1 && b[n-2] == '\r' {
			b = b[:n-2]
		}
	}
	return b
}
