//go:build linux

package journal

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// The floor under a group commit on this machine's disk, and why the
// group commit does not wait on a timer (docs/benchmarks.md, "Session 7:
// against HDFS"):
//
//	go test -run '^$' -bench 'DurableAppend|ShortTimer' -benchtime 2000x ./internal/namenode/journal
//
// Each reports the median latency (p50-us) beside the mean (ns/op).

// floorFile is a preallocated, synced file of 64 MiB, opened with flags.
func floorFile(b *testing.B, flags int) *os.File {
	name := filepath.Join(b.TempDir(), "floor")
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 64<<20)); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	if f, err = os.OpenFile(name, os.O_RDWR|flags, 0); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

func reportP50(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds())/1000, "p50-us")
}

// BenchmarkDurableAppend: one 200-byte record made durable at the end of
// a preallocated file, as the edit log appends one.
func BenchmarkDurableAppend(b *testing.B) {
	rec := make([]byte, 200)
	off := func(i int) int64 { return int64(i%300000) * 200 }
	b.Run("write+fdatasync", func(b *testing.B) {
		f := floorFile(b, 0)
		d := make([]time.Duration, 0, b.N)
		for i := 0; b.Loop(); i++ {
			t := time.Now()
			if _, err := f.WriteAt(rec, off(i)); err != nil {
				b.Fatal(err)
			}
			if err := fdatasync(f); err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(t))
		}
		reportP50(b, d)
	})
	b.Run("O_DSYNC", func(b *testing.B) {
		f := floorFile(b, syscall.O_DSYNC)
		d := make([]time.Duration, 0, b.N)
		for i := 0; b.Loop(); i++ {
			t := time.Now()
			if _, err := f.WriteAt(rec, off(i)); err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(t))
		}
		reportP50(b, d)
	})
	// O_DIRECT must write whole aligned blocks: the last 4 KiB block is
	// rewritten with each record, which could tear records already
	// acknowledged, so the journal cannot use it; measured as a bound.
	b.Run("O_DIRECT|O_DSYNC-4KiB", func(b *testing.B) {
		f := floorFile(b, syscall.O_DSYNC|syscall.O_DIRECT)
		raw := make([]byte, 8192)
		buf := raw[4096-int(uintptr(unsafe.Pointer(&raw[0]))&4095):][:4096]
		d := make([]time.Duration, 0, b.N)
		for i := 0; b.Loop(); i++ {
			t := time.Now()
			if _, err := f.WriteAt(buf, off(i)&^4095); err != nil {
				b.Skipf("O_DIRECT: %v", err)
			}
			d = append(d, time.Since(t))
		}
		reportP50(b, d)
	})
	// Two appenders syncing at once: do their fdatasyncs overlap? Compare
	// this ns/op (per append, both together) with write+fdatasync's.
	b.Run("2-concurrent-fdatasync", func(b *testing.B) {
		f := floorFile(b, 0)
		var mu sync.Mutex
		d := make([]time.Duration, 0, b.N)
		next := 0
		var wg sync.WaitGroup
		b.ResetTimer()
		for range 2 {
			wg.Go(func() {
				for {
					mu.Lock()
					i := next
					next++
					mu.Unlock()
					if i >= b.N {
						return
					}
					t := time.Now()
					if _, err := f.WriteAt(rec, off(i)); err != nil {
						b.Error(err)
						return
					}
					if err := fdatasync(f); err != nil {
						b.Error(err)
						return
					}
					mu.Lock()
					d = append(d, time.Since(t))
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		reportP50(b, d)
	})
}

// BenchmarkShortTimerWake: how late a 50 us timer wakes a goroutine
// waiting on a condition variable, the way a group-commit leader would
// wait for its group to grow.
func BenchmarkShortTimerWake(b *testing.B) {
	var mu sync.Mutex
	c := sync.NewCond(&mu)
	d := make([]time.Duration, 0, b.N)
	for b.Loop() {
		mu.Lock()
		fired := false
		t := time.Now()
		tm := time.AfterFunc(50*time.Microsecond, func() { mu.Lock(); fired = true; c.Broadcast(); mu.Unlock() })
		for !fired {
			c.Wait()
		}
		d = append(d, time.Since(t))
		mu.Unlock()
		tm.Stop()
	}
	reportP50(b, d)
}
