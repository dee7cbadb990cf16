package datanode

import (
	"container/list"
	"sync"
)

// readWindow stands for the page cache a datanode with a memory budget
// would have. With drop_cache_behind_reads and a page_cache_budget, the
// blocks read most recently stay in the page cache up to the budget; only
// the least recently read ones beyond it are dropped. Seed 003 (section
// IV) caches a block on the node that just read it from disk because "the
// block is likely still cached in the OS page cache": dropping every read
// at once (budget 0) makes each cache command read the block from the
// disk a second time, which a real node with some free memory would not.
// It also lets the no-cache baseline keep what any datanode's page cache
// would keep, as in the paper, where plain Hadoop "can use empty spaces
// for Linux page cache".
type readWindow struct {
	budget int64
	drop   func(blockID, gs uint64, start, end int64) // runs outside mu

	mu    sync.Mutex // guards used, order, byID
	used  int64
	order *list.List               // of *readSpan, least recently read first
	byID  map[uint64]*list.Element // block id -> its span in order
}

// readSpan is the part of one replica's block file a reader went through.
type readSpan struct {
	blockID, gs uint64
	start, end  int64
}

func (s *readSpan) size() int64 { return s.end - s.start }

func newReadWindow(budget int64, drop func(blockID, gs uint64, start, end int64)) *readWindow {
	return &readWindow{budget: budget, drop: drop, order: list.New(), byID: map[uint64]*list.Element{}}
}

// read records that [start, end) of a replica was just read from disk and
// drops what no longer fits in the budget, oldest first.
func (w *readWindow) read(blockID, gs uint64, start, end int64) {
	var out []readSpan
	w.mu.Lock()
	if e, ok := w.byID[blockID]; ok {
		s := e.Value.(*readSpan)
		if s.gs == gs {
			w.used -= s.size()
			s.start, s.end = min(s.start, start), max(s.end, end)
		} else { // a new generation: the old file's pages are not ours to track
			w.used -= s.size()
			*s = readSpan{blockID: blockID, gs: gs, start: start, end: end}
		}
		w.used += s.size()
		w.order.MoveToBack(e)
	} else {
		s := &readSpan{blockID: blockID, gs: gs, start: start, end: end}
		w.byID[blockID] = w.order.PushBack(s)
		w.used += s.size()
	}
	for w.used > w.budget && w.order.Len() > 0 {
		s := w.order.Remove(w.order.Front()).(*readSpan)
		delete(w.byID, s.blockID)
		w.used -= s.size()
		out = append(out, *s)
	}
	w.mu.Unlock()
	for _, s := range out {
		w.drop(s.blockID, s.gs, s.start, s.end)
	}
}

// forget stops tracking a block whose pages were dropped otherwise (it was
// read into the memory cache, or deleted).
func (w *readWindow) forget(blockID uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e, ok := w.byID[blockID]; ok {
		w.used -= e.Value.(*readSpan).size()
		w.order.Remove(e)
		delete(w.byID, blockID)
	}
}

// bytes is what the window holds now.
func (w *readWindow) bytes() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.used
}
