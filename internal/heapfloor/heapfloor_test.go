package heapfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

// settleGC gives a test GOGC=100 and no memory limit whatever the
// environment says (GOGC=off or a GOMEMLIMIT would decide the counts these
// tests assert), restored at the end.
func settleGC(t *testing.T) {
	gc := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	})
}

func TestFloorPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, floor uint64
		base, want  int64
	}{
		{4 * mib, 64 * mib, 100, 1500}, // next target 64 MiB
		{32 * mib, 64 * mib, 100, 100}, // twice the live heap reaches the floor anyway
		{40 * mib, 64 * mib, 100, 100},
		{200 * mib, 64 * mib, 100, 100}, // above the floor: GOGC as set
		{200 * mib, 64 * mib, 50, 50},
		{16 * mib, 64 * mib, 400, 400},
		{0, 64 * mib, 100, 1 << 24}, // capped
	} {
		if got := floorPercent(c.live, c.floor, c.base); got != c.want {
			t.Errorf("floorPercent(live %d, floor %d, base %d) = %d, want %d", c.live, c.floor, c.base, got, c.want)
		}
	}
}

// With a floor far above the live heap, allocating far less than the
// floor runs no collection; after stop, the same allocation does.
func TestKeepDefersCollection(t *testing.T) {
	settleGC(t)
	runtime.GC() // settle: the tuner reads the live heap this leaves
	stop := Keep(512 << 20)
	runtime.GC() // a collection after arming: the cleanup re-tunes
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	churn(64 << 20)
	runtime.ReadMemStats(&after)
	if n := after.NumGC - before.NumGC; n > 1 {
		t.Errorf("%d collections while allocating 64 MiB under a 512 MiB floor", n)
	}
	stop()
	runtime.ReadMemStats(&before)
	churn(64 << 20)
	runtime.ReadMemStats(&after)
	if after.NumGC == before.NumGC {
		t.Error("no collection while allocating 64 MiB after stop: GOGC not restored")
	}
}

// The floor does not fight a memory limit: with GOMEMLIMIT below it, the
// limit still makes the collector run (the runtime takes the lower of the
// two targets; the floor only raises the GC percent).
func TestKeepYieldsToMemoryLimit(t *testing.T) {
	settleGC(t)
	runtime.GC()
	stop := Keep(512 << 20)
	defer stop()
	runtime.GC()
	debug.SetMemoryLimit(32 << 20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	churn(128 << 20)
	runtime.ReadMemStats(&after)
	if after.NumGC == before.NumGC {
		t.Error("no collection while allocating 128 MiB with a 32 MiB memory limit under a 512 MiB floor: the floor overrode the limit")
	}
}

var sink []byte

func churn(n int) {
	for range n / (64 << 10) {
		sink = make([]byte, 64<<10)
	}
}
