package datanode

import (
	"bufio"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"smarth/internal/blocktoken"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// BenchmarkReadBlockCachedVsDisk reads a 64 MiB block served from the
// memory cache and another served from disk with drop_cache_behind_reads
// (so the disk read really reaches the disk, not the page cache), one after
// the other in each iteration, and reports both rates, their ratio and the
// bytes the process read from storage per uncached read (/proc/self/io
// read_bytes). No assertion: figures on a shared machine vary.
//
//	go test ./internal/datanode -run '^$' -bench CachedVsDisk -benchtime 8x
func BenchmarkReadBlockCachedVsDisk(b *testing.B) {
	nn := startFakeNameNodeTB(b)
	d := startDataNodeTBWith(b, nn, func(c *Config) {
		c.CacheCapacity = 2 * benchBlock
		c.DropCacheBehindReads, c.SyncOnClose = true, true
	})
	dns := []*DataNode{d}
	benchWrite(b, 1, randomData(benchBlock, 1), dfspb.WriteMode_CLASSIC, dns)
	benchWrite(b, 2, randomData(benchBlock, 2), dfspb.WriteMode_CLASSIC, dns)
	d.cacher.enqueue([]uint64{1})
	for d.cache.Len() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	// The writes left block 2's pages in the page cache; start cold.
	evict(b, blockFile(d, 2))

	var memTime, diskTime time.Duration
	var diskIO int64
	for b.Loop() {
		t0 := time.Now()
		benchReadBlock(b, d.DataAddr(), 1)
		t1 := time.Now()
		io0, _ := readProcIO()
		benchReadBlock(b, d.DataAddr(), 2)
		diskTime += time.Since(t1)
		memTime += t1.Sub(t0)
		io1, _ := readProcIO()
		diskIO += io1.readBytes - io0.readBytes
		// The datanode drops the pages once the reader hangs up; evict
		// here too so the next iteration does not race that.
		evict(b, blockFile(d, 2))
	}
	n := float64(b.N)
	const mib = 1 << 20
	b.ReportMetric(float64(benchBlock)/mib*n/memTime.Seconds(), "cached-MiB/s")
	b.ReportMetric(float64(benchBlock)/mib*n/diskTime.Seconds(), "disk-MiB/s")
	b.ReportMetric(diskTime.Seconds()/memTime.Seconds(), "cached-speedup-x")
	b.ReportMetric(float64(diskIO)/n, "disk-read-bytes/uncached-read")
}

// evict drops a file's pages from the page cache.
func evict(b *testing.B, path string) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

// benchReadBlock reads a whole block and verifies it like a client.
func benchReadBlock(b *testing.B, addr string, id uint64) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if err := datatransfer.WriteOp(c, &dfspb.ReadBlockOp{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: 1}, Length: benchBlock, Token: testToken(id, 1, blocktoken.Read)}); err != nil {
		b.Fatal(err)
	}
	br := bufio.NewReaderSize(c, 256<<10)
	if _, err := datatransfer.ReadResponse(br); err != nil {
		b.Fatal(err)
	}
	pr := datatransfer.NewPacketReader(br)
	for {
		p, err := pr.Next()
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Verify(); err != nil {
			b.Fatal(err)
		}
		last := p.Header.Last()
		p.Release()
		if last {
			return
		}
	}
}
