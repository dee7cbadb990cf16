package store

import (
	"os"

	"golang.org/x/sys/unix"

	"smarth/internal/datanode/store/vfs"
)

// writevAt writes bufs one after another at off: one pwritev(2) on an OS
// file (a batch of packets costs one system call instead of one each),
// else a WriteAt per buffer (a wrapped file, e.g. errorfs, keeps its say
// over every write).
func writevAt(f vfs.File, bufs [][]byte, off int64) error {
	osf, ok := f.(*os.File)
	if !ok {
		return writeEachAt(f, bufs, off)
	}
	rc, err := osf.SyscallConn()
	if err != nil {
		return writeEachAt(f, bufs, off)
	}
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for len(bufs) > 0 {
			n, err := unix.Pwritev(int(fd), bufs, off)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				werr = &os.PathError{Op: "pwritev", Path: osf.Name(), Err: err}
				return true
			}
			if n == 0 {
				werr = &os.PathError{Op: "pwritev", Path: osf.Name(), Err: unix.EIO}
				return true
			}
			off += int64(n)
			bufs = skipWritten(bufs, n)
		}
		return true
	})
	if err != nil {
		return err
	}
	return werr
}
