package datanode

import (
	"golang.org/x/sys/unix"

	"smarth/internal/datanode/store"
	"smarth/internal/datanode/store/vfs"
)

// dropCache tells the kernel the file's pages in [off, off+n) are not
// needed (n = 0: to the end of the file). Clean pages are dropped at once,
// dirty ones are not; it is advice, so errors are ignored, and a file
// without a descriptor (none on the OS file system) is skipped.
func dropCache(f vfs.File, off, n int64) {
	if fd, ok := f.(vfs.Fder); ok {
		_ = unix.Fadvise(int(fd.Fd()), off, n, unix.FADV_DONTNEED)
	}
}

// dropBehindWrite, with drop_cache_behind_writes, writes a just finalized
// replica back and drops its pages from the page cache, as HDFS does: the
// writer does not read its block back, and pages left behind would make
// later "disk" reads of it memory reads. DONTNEED skips dirty pages, so
// the files are synced first (fdatasync; a no-op after sync_on_close). It
// runs in the background: the ack must not wait for the disk.
func (d *DataNode) dropBehindWrite(r store.Replica) {
	if !d.cfg.DropCacheBehindWrites {
		return
	}
	d.goRun(func() {
		h, err := d.store.Open(r.BlockID, r.GS)
		if err != nil {
			return // deleted or replaced meanwhile: nothing to drop
		}
		defer h.Close()
		for _, f := range []vfs.File{h.Data, h.Meta} {
			fd, ok := f.(vfs.Fder)
			if !ok {
				continue
			}
			if err := unix.Fdatasync(int(fd.Fd())); err != nil {
				d.log.Debug("drop behind write: sync failed", "block", r.Name(), "file", f.Name(), "err", err)
				continue
			}
			dropCache(f, 0, 0)
		}
	})
}
