// Package heapfloor keeps a floor under the garbage collector's heap
// target, as a JVM's -Xms does. It tunes the whole process, so it lives
// apart from any daemon: the namenode command calls it, and so does
// `smarth bench nn` for its load generator, whose 64 clients' RPC garbage
// would otherwise cost it collections on the cores the namenode shares.
package heapfloor

import (
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"sync"
	"sync/atomic"
)

// Keep lets the heap grow to floor bytes before the garbage
// collector runs, as a JVM's -Xms does for HDFS's NameNode; above the
// floor the collector paces as GOGC says. Why: a namenode's namespace can
// be small while every RPC allocates a few kB of short-lived garbage, and
// Go's collector sizes its target from the live heap (GOGC=100: twice
// it). With a few MiB live it then ran dozens of times a second under
// `smarth bench nn` (mark, assists and sweep about 11% of the namenode's
// CPU) to keep a heap the machine has room for. After every collection
// the GC percent is set so that the next target is max(floor, live heap
// * (1 + GOGC/100)): the heap never exceeds the floor for the sake of the
// floor, and a large namespace is paced as before.
//
// It is process-wide; the namenode command calls it once, after the
// namespace is loaded (the load runs with the collector off). floor <= 0
// or GOGC=off leaves the collector alone. stop restores GOGC.
func Keep(floor int64) (stop func()) {
	base := gcPercentSetting()
	if floor <= 0 || base < 0 {
		return func() {}
	}
	t := &heapFloor{floor: uint64(floor), base: base}
	t.tune()
	t.arm()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if !t.stopped.Swap(true) {
			debug.SetGCPercent(int(base))
		}
	}
}

type heapFloor struct {
	floor   uint64
	base    int64 // GOGC the process started with
	stopped atomic.Bool

	mu     sync.Mutex // tune against stop: a stopped tuner sets nothing
	last   int64      // percent last set
	sample [1]rtmetrics.Sample
}

// arm attaches a cleanup to a fresh object nothing references: it runs
// after the next collection, which re-tunes and re-arms.
func (t *heapFloor) arm() {
	runtime.AddCleanup(new([16]byte), func(t *heapFloor) {
		if t.stopped.Load() {
			return
		}
		t.tune()
		t.arm()
	}, t)
}

// tune sets the GC percent from the live heap the last collection left.
func (t *heapFloor) tune() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped.Load() {
		return
	}
	t.sample[0].Name = "/gc/heap/live:bytes"
	rtmetrics.Read(t.sample[:])
	if t.sample[0].Value.Kind() != rtmetrics.KindUint64 {
		return
	}
	p := floorPercent(t.sample[0].Value.Uint64(), t.floor, t.base)
	if p != t.last {
		debug.SetGCPercent(int(p))
		t.last = p
	}
}

// floorPercent is the GC percent that puts the next heap target at
// max(floor, live*(1+base/100)).
func floorPercent(live, floor uint64, base int64) int64 {
	if live == 0 {
		live = 1
	}
	if live >= floor {
		return base
	}
	// Capped: the runtime keeps the percent in an int32.
	return min(max(base, int64((floor-live)*100/live)), 1<<24)
}

func gcPercentSetting() int64 {
	s := []rtmetrics.Sample{{Name: "/gc/gogc:percent"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 {
		return 100
	}
	v := s[0].Value.Uint64()
	if v > 1<<31 { // GOGC=off: the runtime's -1, read as a uint64
		return -1
	}
	return int64(v)
}
