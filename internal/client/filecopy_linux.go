package client

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// reserve allocates [off, off+n) of f without changing its size
// (fallocate with KEEP_SIZE); errors are ignored: it only saves work.
func reserve(f *os.File, off, n int64) {
	_ = unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, off, n)
}

// pwritevAll writes every slice of bufs at off, going on after short
// writes and interrupted calls.
func pwritevAll(dst *os.File, bufs [][]byte, off int64) (int64, error) {
	var total int64
	fd := int(dst.Fd())
	for len(bufs) > 0 {
		n, err := unix.Pwritev(fd, bufs, off+total)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return total, err
		}
		if n == 0 {
			return total, io.ErrShortWrite
		}
		total += int64(n)
		for n > 0 && len(bufs) > 0 {
			if n >= len(bufs[0]) {
				n -= len(bufs[0])
				bufs = bufs[1:]
			} else {
				bufs[0] = bufs[0][n:]
				n = 0
			}
		}
	}
	return total, nil
}
