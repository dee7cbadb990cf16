package client

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"golang.org/x/sys/unix"

	"smarth/internal/datatransfer"
)

// canShortCircuit: descriptors pass over unix sockets and the kernel
// copies between files (copy_file_range) here.
const canShortCircuit = true

// checkLocal checks bytes [off, off+n) of a local replica, every chunk
// holding them, against the meta file's CRC32Cs, reading the block
// through a read-only mapping (no copy into this process). A mismatch
// comes back as a *datatransfer.ChecksumError. It runs before any of the
// bytes is copied (copyChecked), so a replica that fails it leaves
// nothing in the destination; the replica is finalized, so its bytes do
// not change between the check and the copy.
func checkLocal(lr *localReplica, off, n int64) error {
	st, err := lr.data.Stat()
	if err != nil {
		return err
	}
	if size := st.Size(); off+n > size {
		return fmt.Errorf("%s holds %d bytes, fewer than the %d located", lr.data.Name(), size, off+n)
	}
	bpc := int64(lr.bpc)
	start := off - off%bpc
	end := min((off+n+bpc-1)/bpc*bpc, st.Size())
	m, mapOff, err := mapRange(lr.data, start, end)
	if err != nil {
		return err
	}
	defer unix.Munmap(m)
	return verifyLocal(lr, m[start-mapOff:], start)
}

// mapRange maps [start, end) of f read-only, from the page boundary at or
// before start (returned as mapOff), populated at once.
func mapRange(f *os.File, start, end int64) (m []byte, mapOff int64, err error) {
	mapOff = start &^ (int64(os.Getpagesize()) - 1)
	m, err = unix.Mmap(int(f.Fd()), mapOff, int(end-mapOff), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, 0, fmt.Errorf("mapping %s: %w", f.Name(), err)
	}
	return m, mapOff, nil
}

// copyChecked has the kernel copy bytes [off, off+n) of a checked local
// replica into dst at dstOff (copy_file_range: page cache to page cache,
// as cp copies). A copy that fails part way cuts dst back to its size
// before, so that dst never holds part of a block the caller did not
// count.
func copyChecked(lr *localReplica, off, n int64, dst *os.File, dstOff int64) (int64, error) {
	before, err := dst.Stat()
	if err != nil {
		return 0, err
	}
	written, err := copyRange(lr.data, off, n, dst, dstOff)
	if errors.Is(err, unix.EXDEV) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		// No copy_file_range between these files (another file system
		// type, say): write from a mapping of the block, still one copy.
		written, err = writeMapped(lr.data, off, n, dst, dstOff)
	}
	if err != nil {
		if after, serr := dst.Stat(); serr == nil && after.Size() > before.Size() {
			_ = dst.Truncate(before.Size())
		}
		return 0, fmt.Errorf("copying %s into %s: %w", lr.data.Name(), dst.Name(), err)
	}
	return written, nil
}

// writeMapped writes [off, off+n) of src to dst at dstOff from a mapping.
func writeMapped(src *os.File, off, n int64, dst *os.File, dstOff int64) (int64, error) {
	m, mapOff, err := mapRange(src, off, off+n)
	if err != nil {
		return 0, err
	}
	defer unix.Munmap(m)
	k, err := dst.WriteAt(m[off-mapOff:], dstOff)
	return int64(k), err
}

// verifyLocal checks data, the block's bytes from chunk-aligned offset
// start, against the meta file's checksums of those chunks.
func verifyLocal(lr *localReplica, data []byte, start int64) (err error) {
	bpc := lr.bpc
	sums := make([]byte, datatransfer.ChunkCount(len(data), bpc)*datatransfer.ChecksumSize)
	if _, err := lr.meta.ReadAt(sums, datatransfer.MetaHeaderLen+start/int64(bpc)*datatransfer.ChecksumSize); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("reading the checksums of %s: %w", lr.data.Name(), err)
	}
	// A block file cut short under the mapping would fault (SIGBUS):
	// make that an error of this read rather than the end of the process.
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			err = fmt.Errorf("%s changed while it was read: %v", lr.data.Name(), r)
		}
	}()
	if i := datatransfer.VerifyChecksums(sums, data, bpc); i >= 0 {
		chunk := data[i*bpc : min((i+1)*bpc, len(data))]
		return &datatransfer.ChecksumError{Offset: start + int64(i*bpc),
			Want: binary.BigEndian.Uint32(sums[i*datatransfer.ChecksumSize:]), Got: datatransfer.CRC32C(chunk)}
	}
	return nil
}

// sendChecked writes bytes [off, off+n) of a checked local replica to w:
// the kernel sends the block file's pages (sendfile, to a pipe, a socket,
// a file or /dev/null), or, where w takes no sendfile (a terminal, a file
// opened for append), w is written from a mapping of the block: still no
// copy through this process's memory. It returns the bytes written.
func sendChecked(lr *localReplica, off, n int64, w *os.File) (int64, error) {
	done, err := sendRange(lr.data, off, n, w)
	if done == 0 && (errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP)) {
		m, mapOff, merr := mapRange(lr.data, off, off+n)
		if merr != nil {
			return 0, merr
		}
		defer unix.Munmap(m)
		k, werr := w.Write(m[off-mapOff:])
		return int64(k), werr
	}
	if err != nil {
		return done, fmt.Errorf("sending %s: %w", lr.data.Name(), err)
	}
	return done, nil
}

// sendRange has the kernel send [off, off+n) of src to dst (sendfile).
func sendRange(src *os.File, off, n int64, dst *os.File) (int64, error) {
	return kernelLoop(n, func(done int64, max int) (int, error) {
		roff := off + done
		k, err := unix.Sendfile(int(dst.Fd()), int(src.Fd()), &roff, max)
		if err == unix.EAGAIN {
			// dst is non-blocking (a pipe or socket the parent shell
			// set so): wait until it takes more, then go on.
			if werr := waitWritable(dst); werr != nil {
				return 0, werr
			}
			return 0, unix.EINTR
		}
		return k, err
	})
}

// waitWritable blocks until f can be written (poll).
func waitWritable(f *os.File) error {
	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLOUT}}
	for {
		_, err := unix.Poll(fds, -1)
		if err != unix.EINTR {
			return err
		}
	}
}

// copyRange has the kernel copy [off, off+n) of src to dst at dstOff.
func copyRange(src *os.File, off, n int64, dst *os.File, dstOff int64) (int64, error) {
	return kernelLoop(n, func(done int64, max int) (int, error) {
		roff, woff := off+done, dstOff+done
		return unix.CopyFileRange(int(src.Fd()), &roff, int(dst.Fd()), &woff, max, 0)
	})
}

// kernelLoop has step move the rest of n bytes, at most 1 GiB a call,
// until all are moved, going on after an interrupted call (EINTR); step
// gets how many are done and returns how many it moved.
func kernelLoop(n int64, step func(done int64, max int) (int, error)) (int64, error) {
	var done int64
	for done < n {
		k, err := step(done, int(min(n-done, 1<<30)))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return done, err
		}
		if k == 0 {
			return done, io.ErrUnexpectedEOF
		}
		done += int64(k)
	}
	return done, nil
}
