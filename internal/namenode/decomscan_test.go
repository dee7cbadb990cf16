package namenode

import (
	"slices"
	"testing"
)

// scanWorld is a datanode's blocks and which are still short of
// replication without it, for decomScan.
type scanWorld struct {
	blocks  []uint64
	short   map[uint64]bool
	checked int // blocks looked at by short, over all steps
}

func (w *scanWorld) all() []uint64 { return slices.Clone(w.blocks) }
func (w *scanWorld) isShort(b uint64) bool {
	w.checked++
	return w.short[b]
}

// TestDecomScanBoundedPerTick: each step checks at most the budget of
// blocks (a node of many blocks costs many ticks, not one long one);
// the node is not done while a block is short; once the short blocks are
// replicated, a confirming full pass runs, and it catches a block that
// appeared on the node meanwhile (a late report) before the node is done.
func TestDecomScanBoundedPerTick(t *testing.T) {
	w := &scanWorld{short: map[uint64]bool{3: true, 17: true}}
	for b := range uint64(100) {
		w.blocks = append(w.blocks, b)
	}
	s := &decomScan{full: true, todo: w.all()}
	const budget = 7
	steps := 0
	step := func() bool {
		t.Helper()
		before := w.checked
		used, done := s.step(budget, w.all, w.isShort)
		steps++
		if used > budget || w.checked-before != used {
			t.Fatalf("step %d checked %d blocks (said %d), budget %d", steps, w.checked-before, used, budget)
		}
		return done
	}
	for range 100/budget + 5 { // the first full pass and then some
		if step() {
			t.Fatalf("done after %d steps while blocks 3 and 17 are short", steps)
		}
	}
	if steps < 100/budget {
		t.Fatalf("the first pass over 100 blocks took %d steps at %d a step", steps, budget)
	}
	// Rechecks look at the two short blocks only.
	before := w.checked
	for range 3 {
		if step() {
			t.Fatal("done while blocks are short")
		}
	}
	if w.checked-before > 3*2 {
		t.Errorf("rechecks looked at %d blocks for 2 short ones", w.checked-before)
	}
	// Replicated now; a late replica 200 shows up short.
	w.short = map[uint64]bool{200: true}
	w.blocks = append(w.blocks, 200)
	for range 100 {
		if step() {
			t.Fatal("done although block 200, reported late, is short")
		}
	}
	w.short = nil
	done := false
	for range 100 {
		if done = step(); done {
			break
		}
	}
	if !done {
		t.Fatal("never done once every block is replicated")
	}
}

// TestDecomScanEmptyNodeIsDone: a node holding no block is done at once.
func TestDecomScanEmptyNodeIsDone(t *testing.T) {
	s := &decomScan{full: true}
	if _, done := s.step(10, func() []uint64 { return nil }, func(uint64) bool { return true }); !done {
		t.Fatal("a node without blocks is not done")
	}
}
