package datanode

import (
	"fmt"
	"slices"
	"testing"
)

// The window keeps the most recently read blocks within its budget and
// drops the least recently read ones, whole, oldest first; a block read
// again moves to the back; a forgotten block is never dropped by it.
func TestReadWindowDropsLeastRecentlyRead(t *testing.T) {
	var dropped []string
	w := newReadWindow(300, func(id, gs uint64, start, end int64) {
		dropped = append(dropped, fmt.Sprintf("%d@%d[%d,%d)", id, gs, start, end))
	})
	w.read(1, 1, 0, 100)
	w.read(2, 1, 0, 100)
	w.read(3, 1, 0, 100)
	if len(dropped) != 0 || w.bytes() != 300 {
		t.Fatalf("within budget: dropped %v, holding %d", dropped, w.bytes())
	}
	w.read(1, 1, 50, 150) // block 1 again: now the most recent, span [0,150)
	if want := []string{"2@1[0,100)"}; !slices.Equal(dropped, want) {
		t.Fatalf("after re-reading 1: dropped %v, want %v", dropped, want)
	}
	w.forget(3)
	w.read(4, 1, 0, 200)
	if want := []string{"2@1[0,100)", "1@1[0,150)"}; !slices.Equal(dropped, want) {
		t.Fatalf("after reading 4: dropped %v, want %v (3 was forgotten)", dropped, want)
	}
	if w.bytes() != 200 {
		t.Fatalf("holding %d bytes, want 200 (block 4)", w.bytes())
	}
}

// Budget 0 is drop-at-once: every read is dropped as soon as it is done.
func TestReadWindowZeroBudgetDropsEveryRead(t *testing.T) {
	n := 0
	w := newReadWindow(0, func(uint64, uint64, int64, int64) { n++ })
	w.read(7, 1, 0, 10)
	w.read(7, 1, 0, 10)
	if n != 2 || w.bytes() != 0 {
		t.Fatalf("budget 0: %d drops, %d bytes held; want 2 and 0", n, w.bytes())
	}
}
