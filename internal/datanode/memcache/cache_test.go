package memcache

import (
	"errors"
	"math/rand/v2"
	"testing"
)

func TestBeginCommitGetUncache(t *testing.T) {
	c := New(1 << 20)
	f, err := c.Begin(1, 7, 1000, 8, 512)
	if err != nil {
		t.Fatal(err)
	}
	copy(f.Data(), "hello")
	if c.Get(1) != nil {
		t.Fatal("a block being filled is visible")
	}
	if _, err := c.Begin(1, 7, 1000, 8, 512); !errors.Is(err, ErrLoading) {
		t.Fatalf("second Begin while loading: %v", err)
	}
	if err := c.Commit(f); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Begin(1, 7, 1000, 8, 512); !errors.Is(err, ErrCached) {
		t.Fatalf("Begin of a cached block: %v", err)
	}
	b := c.Get(1)
	if b == nil || string(b.Data()[:5]) != "hello" || b.GS != 7 || len(b.Sums()) != 8 {
		t.Fatalf("Get = %+v", b)
	}
	// Uncached while read: the memory stays until the reader lets go.
	if !c.Uncache(1) || c.Get(1) != nil {
		t.Fatal("Uncache did not remove the block")
	}
	if c.Used() == 0 || string(b.Data()[:5]) != "hello" {
		t.Fatal("memory freed under a reader")
	}
	b.Release()
	if c.Used() != 0 {
		t.Fatalf("%d bytes still used after the last reader", c.Used())
	}
	if c.Uncache(1) || c.Uncache(99) {
		t.Error("Uncache of an absent block reported true")
	}
}

func TestUncacheCancelsALoadInProgress(t *testing.T) {
	c := New(1 << 20)
	f, err := c.Begin(2, 1, 4096, 32, 512)
	if err != nil {
		t.Fatal(err)
	}
	c.Uncache(2)
	if err := c.Commit(f); !errors.Is(err, ErrCancelled) {
		t.Fatalf("Commit after Uncache: %v", err)
	}
	if c.Len() != 0 || c.Used() != 0 {
		t.Fatalf("cancelled load left %d blocks, %d bytes", c.Len(), c.Used())
	}
}

func TestEmptyBlock(t *testing.T) {
	c := New(1 << 20)
	f, err := c.Begin(3, 1, 0, 0, 512)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(f); err != nil {
		t.Fatal(err)
	}
	b := c.Get(3)
	if b == nil || len(b.Data()) != 0 {
		t.Fatalf("empty block: %+v", b)
	}
	b.Release()
	c.Close()
	if c.Used() != 0 {
		t.Fatal("memory left after Close")
	}
}

// Property: under any sequence of operations the memory held never exceeds
// the capacity, and only cached blocks are returned by Get.
func TestNeverAboveCapacity(t *testing.T) {
	const capacity = 1 << 20
	c := New(capacity)
	rng := rand.New(rand.NewPCG(1, 2))
	var fills []*Fill // every fill begun and not yet ended
	var held []*Block
	for i := range 5000 {
		id := uint64(rng.IntN(40))
		switch rng.IntN(5) {
		case 0, 1:
			if f, err := c.Begin(id, 1, int64(rng.IntN(200<<10)), 1024, 512); err == nil {
				fills = append(fills, f)
			} else if !errors.Is(err, ErrFull) && !errors.Is(err, ErrCached) && !errors.Is(err, ErrLoading) {
				t.Fatal(err)
			}
		case 2:
			if len(fills) > 0 {
				j := rng.IntN(len(fills))
				if rng.IntN(2) == 0 {
					_ = c.Commit(fills[j])
				} else {
					c.Abort(fills[j])
				}
				fills = append(fills[:j], fills[j+1:]...)
			}
		case 3:
			c.Uncache(id)
		case 4:
			if b := c.Get(id); b != nil {
				held = append(held, b)
			}
			if len(held) > 3 {
				held[0].Release()
				held = held[1:]
			}
		}
		if u := c.Used(); u > capacity {
			t.Fatalf("step %d: %d bytes used, capacity %d", i, u, capacity)
		}
	}
	for _, f := range fills {
		c.Abort(f)
	}
	for _, b := range held {
		b.Release()
	}
	c.Close()
	if c.Used() != 0 {
		t.Fatalf("%d bytes left after Close", c.Used())
	}
}
