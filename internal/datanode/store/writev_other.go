//go:build !linux

package store

import "smarth/internal/datanode/store/vfs"

// writevAt writes bufs one after another at off, a WriteAt each (pwritev
// is used on Linux only).
func writevAt(f vfs.File, bufs [][]byte, off int64) error { return writeEachAt(f, bufs, off) }
