package journal

import (
	"os"
	"syscall"
)

// fdatasync flushes data and the metadata needed to read it back (the
// size), not timestamps: cheaper than fsync on every append.
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
