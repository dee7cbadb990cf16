package datanode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"smarth/internal/testenv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"golang.org/x/sys/unix"

	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/syncbuf"
)

// Tests of the in-memory block cache with real datanodes over TCP and the
// fake namenode sending cache and uncache commands in heartbeat replies.

// counterValue reads a counter's current value.
func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func cacheCmd(ids ...uint64) *dfspb.DatanodeCommand {
	return &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Cache{Cache: &dfspb.CacheCommand{BlockIds: ids}}}
}

func uncacheCmd(ids ...uint64) *dfspb.DatanodeCommand {
	return &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Uncache{Uncache: &dfspb.UncacheCommand{BlockIds: ids}}}
}

func startCachingDataNode(t *testing.T, nn *fakeNameNode, dir string, capacity int64, mutate func(*Config)) (*DataNode, *syncbuf.Buffer) {
	t.Helper()
	return startDataNode(t, nn, dir, func(c *Config) {
		c.CacheCapacity = capacity
		if mutate != nil {
			mutate(c)
		}
	})
}

// reportedCached waits for a heartbeat sent after now that reports
// exactly want as cached, and returns it.
func reportedCached(t *testing.T, nn *fakeNameNode, d *DataNode, want ...uint64) *dfspb.HeartbeatRequest {
	t.Helper()
	if want == nil {
		want = []uint64{}
	}
	_, before := nn.lastHeartbeat(d.ID())
	var hb *dfspb.HeartbeatRequest
	waitFor(t, fmt.Sprintf("a heartbeat reporting blocks %v cached", want), func() bool {
		var n int
		hb, n = nn.lastHeartbeat(d.ID())
		return n > before && slices.Equal(append([]uint64{}, hb.GetCachedBlockIds()...), want)
	})
	return hb
}

// waitCacheIdle waits until every cache command sent so far has run.
func waitCacheIdle(t *testing.T, nn *fakeNameNode, d *DataNode) {
	t.Helper()
	_, before := nn.lastHeartbeat(d.ID())
	// A heartbeat after now has fetched every queued command.
	waitFor(t, "heartbeats fetching the queued commands", func() bool { _, n := nn.lastHeartbeat(d.ID()); return n > before+1 })
	waitFor(t, "the cache workers to finish", d.cacher.idle)
}

func blockFile(d *DataNode, id uint64) string {
	return filepath.Join(d.cfg.DataDir, "current", "finalized", fmt.Sprintf("blk_%d", id))
}

// corruptFile flips bytes in the middle of a file.
func corruptFile(t *testing.T, path string, at int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 16)
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] ^= 0xff
	}
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
}

func TestCacheCommandCachesAndHeartbeatReportsIt(t *testing.T) {
	nn := startFakeNameNode(t)
	d, _ := startCachingDataNode(t, nn, "", 8<<20, nil)
	data := randomData(300<<10, 1)
	writeBlock(t, 1, 1, data, d)
	if hb, _ := nn.lastHeartbeat(d.ID()); hb.GetCacheCapacity() != 8<<20 || len(hb.GetCachedBlockIds()) != 0 {
		t.Fatalf("before caching, heartbeat %v", hb)
	}
	nn.command(d.ID(), cacheCmd(1))
	hb := reportedCached(t, nn, d, 1)
	// Data and checksums, rounded up to pages.
	if min := int64(len(data) + len(data)/512*4); hb.GetCacheUsed() < min || hb.GetCacheUsed() > 8<<20 {
		t.Errorf("cache_used %d, want at least %d and at most the capacity", hb.GetCacheUsed(), min)
	}
	if got := counterValue(t, d.metrics.blocksCached); got != 1 {
		t.Errorf("blocks_cached_total = %v, want 1", got)
	}
}

func TestCachedReadIsServedFromMemoryNotDisk(t *testing.T) {
	nn := startFakeNameNode(t)
	d, _ := startCachingDataNode(t, nn, "", 8<<20, nil)
	data := randomData(1<<20+100, 2)
	writeBlock(t, 2, 1, data, d)
	nn.command(d.ID(), cacheCmd(2))
	reportedCached(t, nn, d, 2)

	// Damage the file on disk: a read from memory cannot notice.
	corruptFile(t, blockFile(d, 2), 4096)
	diskBefore := counterValue(t, d.metrics.bytesReadDisk)
	mustRead(t, d, 2, 1, data)
	got, err := readBlock(d.DataAddr(), 2, 1, 1000, 70000) // unaligned range within the block
	if err != nil || string(got) != string(data[1000:71000]) {
		t.Fatalf("partial cached read: err %v, equal %v", err, string(got) == string(data[1000:71000]))
	}
	if hits := counterValue(t, d.metrics.cacheHits); hits != 2 {
		t.Errorf("cache_hits_total = %v, want 2", hits)
	}
	if disk := counterValue(t, d.metrics.bytesReadDisk); disk != diskBefore {
		t.Errorf("cached reads sent %v bytes from disk", disk-diskBefore)
	}
	if mem := counterValue(t, d.metrics.bytesReadMemory); mem < float64(len(data)) {
		t.Errorf("bytes_read_memory_total = %v, want at least %d", mem, len(data))
	}

	// Uncached, the read goes to the damaged file: the reader sees it.
	nn.command(d.ID(), uncacheCmd(2))
	reportedCached(t, nn, d)
	_, err = readBlock(d.DataAddr(), 2, 1, 0, int64(len(data)))
	var ce *datatransfer.ChecksumError
	if !errors.As(err, &ce) {
		t.Fatalf("read after uncache: %v, want a checksum error from the damaged disk copy", err)
	}
	if misses := counterValue(t, d.metrics.cacheMisses); misses != 1 {
		t.Errorf("cache_misses_total = %v, want 1", misses)
	}
	if n := counterValue(t, d.metrics.blocksUncached); n != 1 {
		t.Errorf("blocks_uncached_total = %v, want 1", n)
	}
}

func TestCorruptReplicaIsNeverCachedAndIsReportedBad(t *testing.T) {
	nn := startFakeNameNode(t)
	d, _ := startCachingDataNode(t, nn, "", 8<<20, nil)
	data := randomData(200<<10, 3)
	writeBlock(t, 3, 1, data, d)
	corruptFile(t, blockFile(d, 3), 100<<10)
	nn.command(d.ID(), cacheCmd(3))
	waitFor(t, "blk_3 reported bad", func() bool {
		bad := nn.badBlocks()
		return len(bad) == 1 && bad[0].GetBlockId() == 3 && bad[0].GetGenerationStamp() == 1
	})
	waitCacheIdle(t, nn, d)
	reportedCached(t, nn, d)
	if n := counterValue(t, d.metrics.cacheFailures.WithLabelValues("checksum")); n != 1 {
		t.Errorf(`cache_failures_total{reason="checksum"} = %v, want 1`, n)
	}
	if u := d.cache.Used(); u != 0 {
		t.Errorf("cache holds %d bytes after a failed caching", u)
	}
	// Marked corrupt: not served at all, from memory or disk.
	if _, err := readBlock(d.DataAddr(), 3, 1, 0, int64(len(data))); err == nil {
		t.Fatal("corrupt replica was served")
	}
	// Asking again does not cache it either.
	nn.command(d.ID(), cacheCmd(3))
	waitCacheIdle(t, nn, d)
	reportedCached(t, nn, d)
}

func TestCacheNeverExceedsCapacity(t *testing.T) {
	nn := startFakeNameNode(t)
	const blockLen = 256 << 10
	// Each block takes 256 KiB + 2 KiB of checksums, page rounded: two fit.
	capacity := int64(2*(blockLen+8<<10) + 4<<10)
	d, _ := startCachingDataNode(t, nn, "", capacity, func(c *Config) { c.CacheConcurrency = 3 })
	for id := uint64(10); id < 14; id++ {
		writeBlock(t, id, 1, randomData(blockLen, id), d)
	}
	nn.command(d.ID(), cacheCmd(10, 11, 12, 13))
	waitCacheIdle(t, nn, d)
	hb, _ := nn.lastHeartbeat(d.ID())
	hb = reportedCached(t, nn, d, d.cache.Stats().IDs...)
	if n := len(hb.GetCachedBlockIds()); n != 2 {
		t.Errorf("cached %v, want two of the four blocks", hb.GetCachedBlockIds())
	}
	if hb.GetCacheUsed() > capacity {
		t.Errorf("cache_used %d > capacity %d", hb.GetCacheUsed(), capacity)
	}
	if n := counterValue(t, d.metrics.cacheFailures.WithLabelValues("capacity")); n != 2 {
		t.Errorf(`cache_failures_total{reason="capacity"} = %v, want 2`, n)
	}
	// Freeing one makes room for another.
	cached := hb.GetCachedBlockIds()
	var other uint64
	for id := uint64(10); id < 14; id++ {
		if !slices.Contains(cached, id) {
			other = id
			break
		}
	}
	nn.command(d.ID(), uncacheCmd(cached[0]))
	nn.command(d.ID(), cacheCmd(other))
	want := []uint64{cached[1], other}
	slices.Sort(want)
	reportedCached(t, nn, d, want...)
}

func TestRestartEmptiesTheCache(t *testing.T) {
	nn := startFakeNameNode(t)
	dir := t.TempDir()
	d, _ := startCachingDataNode(t, nn, dir, 8<<20, nil)
	data := randomData(100<<10, 4)
	writeBlock(t, 4, 1, data, d)
	nn.command(d.ID(), cacheCmd(4))
	reportedCached(t, nn, d, 4)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	d2, _ := startCachingDataNode(t, nn, dir, 8<<20, nil)
	hb := reportedCached(t, nn, d2)
	if hb.GetCacheUsed() != 0 || hb.GetCacheCapacity() != 8<<20 {
		t.Errorf("after restart: cache_used %d, cache_capacity %d", hb.GetCacheUsed(), hb.GetCacheCapacity())
	}
	mustRead(t, d2, 4, 1, data)
	if hits, misses := counterValue(t, d2.metrics.cacheHits), counterValue(t, d2.metrics.cacheMisses); hits != 0 || misses != 1 {
		t.Errorf("after restart: %v hits, %v misses; want the read from disk", hits, misses)
	}
}

func TestCacheCommandsForUnknownOrDeletedBlocksAreHarmless(t *testing.T) {
	nn := startFakeNameNode(t)
	d, logs := startCachingDataNode(t, nn, "", 8<<20, nil)
	data := randomData(64<<10, 5)
	writeBlock(t, 5, 1, data, d)
	nn.command(d.ID(), cacheCmd(5, 999))
	nn.command(d.ID(), uncacheCmd(998))
	reportedCached(t, nn, d, 5)

	// The namenode deletes the block: its cached copy goes with it.
	blk := &dfspb.ExtendedBlock{BlockId: 5, GenerationStamp: 1}
	nn.command(d.ID(), &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Invalidate{Invalidate: &dfspb.InvalidateCommand{Blocks: []*dfspb.ExtendedBlock{blk}}}})
	reportedCached(t, nn, d)
	if d.cache.Used() != 0 {
		t.Errorf("deleted block still holds %d bytes of cache", d.cache.Used())
	}
	// Commands for the deleted block, arriving late, do nothing.
	nn.command(d.ID(), cacheCmd(5))
	nn.command(d.ID(), uncacheCmd(5))
	waitCacheIdle(t, nn, d)
	reportedCached(t, nn, d)
	for _, want := range []string{"cache command for a block with no finalized replica here", "uncache command for a block not cached here"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q", want)
		}
	}
	if _, err := readBlock(d.DataAddr(), 5, 1, 0, 1); err == nil {
		t.Error("deleted block still readable")
	}
}

func TestGenerationStampChangeUncachesAtOnce(t *testing.T) {
	nn := startFakeNameNode(t)
	d, _ := startCachingDataNode(t, nn, "", 8<<20, nil)
	data := randomData(150<<10, 6)
	writeBlock(t, 6, 1, data, d)
	nn.command(d.ID(), cacheCmd(6))
	reportedCached(t, nn, d, 6)

	// Lease recovery moves the replica to generation stamp 2.
	if _, _, err := d.store.InitRecovery(6, 2); err != nil {
		t.Fatal(err)
	}
	if d.cache.Len() != 0 {
		t.Fatal("replica under recovery is still cached")
	}
	if _, err := d.store.UpdateRecovery(6, 2, int64(len(data))); err != nil {
		t.Fatal(err)
	}
	reportedCached(t, nn, d)
	hits := counterValue(t, d.metrics.cacheHits)
	mustRead(t, d, 6, 2, data)
	if counterValue(t, d.metrics.cacheHits) != hits {
		t.Error("read after recovery was served from memory")
	}
	// Cached again at the new generation stamp, with the new length.
	nn.command(d.ID(), cacheCmd(6))
	reportedCached(t, nn, d, 6)
	mustRead(t, d, 6, 2, data)
	if counterValue(t, d.metrics.cacheHits) != hits+1 {
		t.Error("read of the re-cached block was not served from memory")
	}
	if _, err := readBlock(d.DataAddr(), 6, 3, 0, 1); err == nil {
		t.Error("a read at a newer generation stamp than the replica's was served")
	}
}

// Readers keep reading while the block is uncached and cached again: every
// read returns the right bytes, from memory or disk (run with -race; an
// unmap under a reader would crash).
func TestConcurrentReadsWhileUncaching(t *testing.T) {
	nn := startFakeNameNode(t)
	d, _ := startCachingDataNode(t, nn, "", 8<<20, nil)
	data := randomData(512<<10, 7)
	writeBlock(t, 7, 1, data, d)
	d.cacher.enqueue([]uint64{7})
	waitFor(t, "blk_7 cached", func() bool { return d.cache.Len() == 1 })

	var wg sync.WaitGroup
	errs := make(chan error, 4)
	stop := make(chan struct{})
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				got, err := readBlock(d.DataAddr(), 7, 1, 0, int64(len(data)))
				if err == nil && string(got) != string(data) {
					err = errors.New("bytes differ")
				}
				if err != nil {
					errs <- fmt.Errorf("reader %d, read %d: %w", r, i, err)
					return
				}
			}
		}()
	}
	for range 20 {
		d.cacher.uncache([]uint64{7})
		d.cacher.enqueue([]uint64{7})
		waitFor(t, "blk_7 cached again", func() bool { return d.cache.Len() == 1 })
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if counterValue(t, d.metrics.cacheHits) == 0 {
		t.Error("no read was served from memory")
	}
	d.cacher.uncache([]uint64{7})
	waitFor(t, "memory returned once readers let go", func() bool { return d.cache.Used() == 0 })
}

// residentPages counts a file's pages in the page cache (cachestat, or
// mincore on kernels without it).
func residentPages(t *testing.T, path string) (resident, total int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		t.Fatalf("stat %s: %v (size %d)", path, err, fi.Size())
	}
	pages := int((fi.Size() + int64(os.Getpagesize()) - 1) / int64(os.Getpagesize()))
	// cachestat (Linux 6.5+) counts without mapping the file. A mapping,
	// as mincore needs, pins the pages against the very FADV_DONTNEED the
	// drop-behind tests wait for: a poll that happens to hold the file
	// mapped while the datanode drops it makes the drop a no-op, and the
	// test then waits forever (seen under load in CI).
	var cs unix.Cachestat_t
	if err := unix.Cachestat(uint(f.Fd()), &unix.CachestatRange{}, &cs, 0); err == nil {
		return int(cs.Cache), pages
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	vec := make([]byte, (fi.Size()+int64(os.Getpagesize())-1)/int64(os.Getpagesize()))
	// x/sys/unix has no mincore wrapper on Linux.
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&mem[0])), uintptr(len(mem)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	for _, v := range vec {
		resident += int(v & 1)
	}
	return resident, len(vec)
}

func TestDropCacheBehindReads(t *testing.T) {
	nn := startFakeNameNode(t)
	// sync_on_close: the written pages are clean, so only drop-behind can
	// explain their leaving the page cache.
	d, _ := startDataNode(t, nn, "", func(c *Config) { c.DropCacheBehindReads, c.SyncOnClose = true, true })
	data := randomData(1<<20, 8)
	writeBlock(t, 8, 1, data, d)
	path := blockFile(d, 8)
	if r, n := residentPages(t, path); r == 0 {
		testenv.SkipOrFail(t, "the written block is not in the page cache (%d of %d pages): nothing to measure here", r, n)
	}
	mustRead(t, d, 8, 1, data)
	// The datanode drops the pages once it sees the reader hang up.
	waitFor(t, "the read block's pages dropped from the page cache", func() bool {
		r, _ := residentPages(t, path)
		return r == 0
	})
}

// A control datanode without drop-behind writes the same kind of block on
// the same file system first: its pages must be resident, or this file
// system never kept written pages and "dropped" would prove nothing. They
// must still be resident once the drop-behind datanode's pages are gone, so
// what dropped them was the datanode, not memory pressure.
func TestDropCacheBehindWrites(t *testing.T) {
	nn := startFakeNameNode(t)
	ctl, _ := startDataNode(t, nn, "", nil)
	writeBlock(t, 19, 1, randomData(1<<20, 19), ctl)
	ctlPath := blockFile(ctl, 19)
	if r, n := residentPages(t, ctlPath); r < n {
		testenv.SkipOrFail(t, "a block written without drop-behind has %d of %d pages in the page cache: this file system does not keep written pages, nothing to measure here", r, n)
	}
	d, _ := startDataNode(t, nn, "", func(c *Config) { c.DropCacheBehindWrites = true })
	writeBlock(t, 9, 1, randomData(1<<20, 9), d)
	path := blockFile(d, 9)
	waitFor(t, "the finalized block's pages dropped from the page cache", func() bool {
		r, _ := residentPages(t, path)
		return r == 0
	})
	if r, n := residentPages(t, ctlPath); r < n {
		t.Fatalf("the control block (no drop-behind) lost %d of %d pages too: the drop is not the datanode's doing", n-r, n)
	}
}

// With a page_cache_budget, a read block stays in the page cache while it
// is among the most recently read (so caching it right after costs no
// disk read), and is dropped once newer reads push it out of the budget.
func TestPageCacheBudgetKeepsRecentReads(t *testing.T) {
	nn := startFakeNameNode(t)
	d, _ := startDataNode(t, nn, "", func(c *Config) {
		c.DropCacheBehindReads, c.SyncOnClose, c.PageCacheBudget = true, true, 3<<19 // 1.5 blocks
	})
	a, b := randomData(1<<20, 10), randomData(1<<20, 11)
	writeBlock(t, 10, 1, a, d)
	writeBlock(t, 11, 1, b, d)
	pathA := blockFile(d, 10)
	if r, n := residentPages(t, pathA); r == 0 {
		testenv.SkipOrFail(t, "the written block is not in the page cache (%d of %d pages): nothing to measure here", r, n)
	}
	mustRead(t, d, 10, 1, a)
	time.Sleep(2 * dropRetryDelay) // what a budget-0 datanode would wait before its second drop
	if r, n := residentPages(t, pathA); r < n {
		t.Fatalf("blk_10, the only block read, lost %d of %d pages within a 1.5-block budget", n-r, n)
	}
	mustRead(t, d, 11, 1, b) // 2 blocks read > 1.5: the older one goes
	waitFor(t, "blk_10's pages dropped once blk_11 was read", func() bool {
		r, _ := residentPages(t, pathA)
		return r == 0
	})
	if r, n := residentPages(t, blockFile(d, 11)); r < n {
		t.Errorf("blk_11, the most recent read, lost %d of %d pages", n-r, n)
	}
}
