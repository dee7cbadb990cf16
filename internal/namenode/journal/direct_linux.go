package journal

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"smarth/internal/diskperm"
)

// directBlock is the alignment of direct writes: offsets, lengths and
// memory. 4 KiB suits disks with 512-byte and with 4 KiB logical sectors.
const directBlock = 4096

// directFile is a segment opened with O_DIRECT|O_DSYNC: a write returns
// once its bytes are on stable storage, so Sync has nothing left to do.
// The page cache is bypassed: the data goes to the device in one request
// instead of through writeback and then a separate flush. On this
// project's test machine a durable append took 81-107 us (medians of four
// runs of BenchmarkDurableAppend) against 103-151 us with write +
// fdatasync, and the namenode's mean group commit 152 against 168 us at 8
// client threads (bench/nn-editlog.sh; docs/benchmarks.md, Session 8).
//
// Direct writes must cover whole aligned blocks, so each write rewrites
// the last partial block: the bytes already there (acknowledged records)
// are written again unchanged, followed by the new records and zeros.
// Buffered segments do the same: fdatasync writes back each dirty
// file-system block whole, acknowledged bytes included, so a torn write
// risks nothing here that it does not risk there. A sector left old or new holds the
// same acknowledged bytes either way, and a torn new record fails its CRC
// and is cut off as an unacknowledged tail.
type directFile struct {
	f    *os.File
	off  int64  // bytes of records written so far
	tail []byte // the records' bytes in the last partial block
	buf  []byte // aligned scratch for one write
}

// alignedBuf returns n bytes whose address is a multiple of directBlock.
func alignedBuf(n int) []byte {
	b := make([]byte, n+directBlock)
	skip := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) & (directBlock - 1)); r != 0 {
		skip = directBlock - r
	}
	return b[skip : skip+n : skip+n]
}

// openDirect opens name for direct, synchronous writes; a variable so a
// test can play a file system without O_DIRECT.
var openDirect = func(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_WRONLY|syscall.O_DIRECT|syscall.O_DSYNC, diskperm.File)
}

// probeDirect writes one aligned block of zeros at the start of a new
// segment; a variable so a test can play a file system that accepts
// O_DIRECT at open and refuses the writes.
var probeDirect = func(f *os.File, zeros []byte) error {
	_, err := f.WriteAt(zeros, 0)
	return err
}

// createDirect creates a segment for direct writes, or reports
// errNoDirect when the file system refuses them (tmpfs before Linux 6.6,
// some FUSE and network file systems) so the caller can fall back.
func createDirect(name string) (File, error) {
	f, err := openDirect(name)
	if err != nil {
		return nil, refusedDirect(err)
	}
	d := &directFile{f: f, buf: alignedBuf(64 << 10)}
	// Some file systems accept the flag at open and refuse the first
	// aligned write (or need a larger alignment than directBlock); find
	// out now, not on the first acknowledged edit.
	if err := probeDirect(f, d.buf[:directBlock]); err != nil {
		f.Close()
		return nil, refusedDirect(err)
	}
	return d, nil
}

// refusedDirect marks err as the file system refusing direct I/O (EINVAL,
// EOPNOTSUPP) so that the journal falls back; other errors stay as they are.
func refusedDirect(err error) error {
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EOPNOTSUPP) {
		return fmt.Errorf("%w: %v", errNoDirect, err)
	}
	return err
}

func (d *directFile) Read([]byte) (int, error) {
	return 0, errors.New("journal: a segment opened for appends is not read")
}

// Write appends p durably.
func (d *directFile) Write(p []byte) (int, error) {
	start := d.off &^ (directBlock - 1)
	n := len(d.tail) + len(p)
	size := (n + directBlock - 1) &^ (directBlock - 1)
	if cap(d.buf) < size {
		d.buf = alignedBuf(size)
	}
	b := d.buf[:size]
	copy(b, d.tail)
	copy(b[len(d.tail):], p)
	clear(b[n:])
	if _, err := d.f.WriteAt(b, start); err != nil {
		return 0, err
	}
	d.off += int64(len(p))
	keep := int(d.off & (directBlock - 1))
	d.tail = append(d.tail[:0], b[n-keep:n]...)
	return len(p), nil
}

// Sync has nothing to do: every write was synchronous.
func (d *directFile) Sync() error { return nil }

func (d *directFile) Close() error { return d.f.Close() }

// directZeros is one preallocation chunk of aligned zeros.
var directZeros = alignedBuf(PreallocChunk)

// Preallocate writes zeros over [off, off+n), durably (the segment's size
// grows with them, and O_DSYNC makes that durable too).
func (d *directFile) Preallocate(off, n int64) error {
	if off&(directBlock-1) != 0 || n&(directBlock-1) != 0 {
		return fmt.Errorf("journal: direct preallocation of [%d, +%d) is not block-aligned", off, n)
	}
	return writeZeros(d.f, directZeros, off, n)
}

// direct marks a segment written with direct I/O (for the journal's
// error hint).
func (d *directFile) direct() {}
