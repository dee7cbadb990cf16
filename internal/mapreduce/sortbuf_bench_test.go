package mapreduce

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// teraRecords returns n TeraSort-like records: 10-byte random keys,
// 90-byte values.
func teraRecords(n int) (keys, vals [][]byte) {
	r := rand.New(rand.NewPCG(1, 2))
	keys, vals = make([][]byte, n), make([][]byte, n)
	for i := range n {
		k := make([]byte, 10)
		for j := range k {
			k[j] = byte(r.Uint32())
		}
		keys[i], vals[i] = k, bytes.Repeat([]byte{'v'}, 90)
	}
	return keys, vals
}

// BenchmarkMapSideTera measures one TeraSort-sized map's collect, sort and
// write of its output file (no spills): the map side of the shuffle.
func BenchmarkMapSideTera(b *testing.B) {
	const n = 670_000 // one 64 MiB block of 100-byte rows
	keys, vals := teraRecords(n)
	dir := b.TempDir()
	job := &Job{NumReduces: 2, Partitioner: HashPartitioner{}}
	pool := NewSortBuffers(1) // as a node manager recycles them
	b.SetBytes(n * 100)
	ct := startCPU(b)
	defer ct.stop()
	for range b.N {
		c := newCollector(job, &taskContext{Context: context.Background()}, dir, DefaultSortBufferBytes, &Counters{}, pool)
		for i := range n {
			if err := c.Emit(keys[i], vals[i]); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := c.finish(filepath.Join(dir, "file.out")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRadixSortTera sorts the index of one TeraSort map's output.
func BenchmarkRadixSortTera(b *testing.B) {
	const n = 670_000
	keys, vals := teraRecords(n)
	job := &Job{NumReduces: 2, Partitioner: HashPartitioner{}}
	c := newCollector(job, &taskContext{Context: context.Background()}, b.TempDir(), DefaultSortBufferBytes, &Counters{}, nil)
	for i := range n {
		c.Emit(keys[i], vals[i])
	}
	orig := append([]recMeta(nil), c.meta...)
	tmp := make([]recMeta, n)
	ct := startCPU(b)
	defer ct.stop()
	for range b.N {
		copy(c.meta, orig)
		radixSort(c.meta, tmp, 2, c.data)
	}
}

// BenchmarkReduceMergeTera merges 16 sorted segments of TeraSort records
// held in memory, as a reduce does before calling the reducer.
func BenchmarkReduceMergeTera(b *testing.B) {
	const maps, per = 16, 40_000
	keys, vals := teraRecords(maps * per)
	segs := make([][]byte, maps)
	for m := range maps {
		ks := keys[m*per : (m+1)*per]
		idx := make([]int, per)
		for i := range idx {
			idx[i] = i
		}
		sortIdx(idx, ks)
		for _, i := range idx {
			segs[m] = appendRecord(segs[m], ks[i], vals[m*per+i])
		}
	}
	b.SetBytes(maps * per * 100)
	ct := startCPU(b)
	defer ct.stop()
	for range b.N {
		streams := make([]recordStream, maps)
		for m := range maps {
			streams[m] = &memSegment{b: segs[m]}
		}
		mg, err := newMerger(bytes.Compare, true, streams)
		if err != nil {
			b.Fatal(err)
		}
		g := newGrouper(mg, bytes.Compare, true)
		n := 0
		for g.nextGroup() {
			for g.Next() {
				n++
			}
		}
		if n != maps*per {
			b.Fatalf("merged %d records", n)
		}
	}
}

func sortIdx(idx []int, keys [][]byte) {
	slices.SortFunc(idx, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
}

// cpuTimer reports the process's CPU time per op ("cpu-ms/op"): on a
// shared machine wall time says more about the neighbours than the code.
type cpuTimer struct {
	b     *testing.B
	start time.Duration
}

func startCPU(b *testing.B) *cpuTimer {
	b.ResetTimer()
	return &cpuTimer{b: b, start: cpuTime()}
}

func (c *cpuTimer) stop() {
	c.b.StopTimer()
	c.b.ReportMetric(float64((cpuTime()-c.start).Microseconds())/1000/float64(c.b.N), "cpu-ms/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGatherTera copies one sorted TeraSort map output out of the
// arena (to nowhere): the scattered reads of the map-side write.
func BenchmarkGatherTera(b *testing.B) {
	const n = 670_000
	keys, vals := teraRecords(n)
	job := &Job{NumReduces: 1}
	c := newCollector(job, &taskContext{Context: context.Background()}, b.TempDir(), DefaultSortBufferBytes, &Counters{}, nil)
	for i := range n {
		c.Emit(keys[i], vals[i])
	}
	c.sort()
	sw := newSegmentWriter(io.Discard)
	b.SetBytes(n * 100)
	ct := startCPU(b)
	defer ct.stop()
	for range b.N {
		if err := c.writeArena(sw, c.meta); err != nil {
			b.Fatal(err)
		}
	}
}
