//go:build !linux

package client

import "os"

// reserve does nothing: fallocate's KEEP_SIZE is Linux's.
func reserve(*os.File, int64, int64) {}

// pwritevAll writes every slice of bufs at off, a WriteAt each (pwritev
// is used on Linux only).
func pwritevAll(dst *os.File, bufs [][]byte, off int64) (int64, error) {
	var total int64
	for _, b := range bufs {
		n, err := dst.WriteAt(b, off+total)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
