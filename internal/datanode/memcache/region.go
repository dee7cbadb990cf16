package memcache

import (
	"os"

	"golang.org/x/sys/unix"
)

// region is an anonymous private mapping outside the Go heap.
type region struct {
	mem    []byte // nil for an empty block: mmap refuses length 0
	locked bool   // mlock succeeded
}

// pageRound rounds n up to whole pages: the unit the kernel maps, and so
// the unit the cache counts against its capacity.
func pageRound(n int64) int64 {
	p := int64(os.Getpagesize())
	return (n + p - 1) / p * p
}

// mapRegion maps size bytes (a multiple of the page size) and tries to
// lock them in memory. A failed mlock is reported in lockErr; the region is
// usable anyway.
func mapRegion(size int64) (r region, lockErr error, err error) {
	if size == 0 {
		return region{}, nil, nil
	}
	mem, err := unix.Mmap(-1, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return region{}, nil, err
	}
	r.mem = mem
	if lockErr = unix.Mlock(mem); lockErr == nil {
		r.locked = true
	}
	return r, lockErr, nil
}

// unmap returns the memory to the kernel (munmap also unlocks it).
func (r *region) unmap() error {
	if r.mem == nil {
		return nil
	}
	err := unix.Munmap(r.mem)
	r.mem = nil
	return err
}
