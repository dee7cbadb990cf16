package mapreduce

import (
	"sync"
	"time"
)

// arena is one map task's sort buffer: record bytes, their index, and the
// radix sort's scratch index.
type arena struct {
	limit int
	data  []byte
	meta  []recMeta
	tmp   []recMeta
	idle  time.Time // when it went back to the pool
}

func newArena(limit int) *arena {
	// Index entries get a fifth of the limit up front: TeraSort's 100-byte
	// records fit without growing either slice; small records grow the
	// index (the spill threshold counts both).
	return &arena{limit: limit, data: make([]byte, 0, limit*4/5), meta: make([]recMeta, 0, limit/5/metaSize)}
}

// SortBuffers recycles map tasks' sort arenas within one process: a node
// running map after map then does not allocate, zero and garbage-collect
// about a sort buffer's worth of memory per task. It keeps at most Max
// idle arenas (a node manager: its map slots). Safe for concurrent use;
// the zero value keeps none.
type SortBuffers struct {
	Max int

	mu   sync.Mutex // guards free
	free []*arena
}

// NewSortBuffers returns a pool keeping up to max idle arenas.
func NewSortBuffers(max int) *SortBuffers { return &SortBuffers{Max: max} }

func (p *SortBuffers) get(limit int) *arena {
	if p != nil {
		p.mu.Lock()
		for i, a := range p.free {
			if a.limit == limit {
				p.free = append(p.free[:i], p.free[i+1:]...)
				p.mu.Unlock()
				return a
			}
		}
		p.mu.Unlock()
	}
	return newArena(limit)
}

// Trim lets go of the arenas idle for longer than d, so a node that has
// stopped running maps does not keep their memory.
func (p *SortBuffers) Trim(d time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	keep := p.free[:0]
	for _, a := range p.free {
		if time.Since(a.idle) <= d {
			keep = append(keep, a)
		}
	}
	clear(p.free[len(keep):])
	p.free = keep
}

// Idle is the number of arenas waiting in the pool.
func (p *SortBuffers) Idle() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.free)
}

func (p *SortBuffers) put(a *arena) {
	if p == nil || a == nil {
		return
	}
	a.data, a.meta, a.tmp = a.data[:0], a.meta[:0], a.tmp[:0]
	a.idle = time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) < p.Max {
		p.free = append(p.free, a)
	}
}

// MemoryBudget is a byte budget shared by the tasks of one process: how
// much finished map output a node may hold in memory instead of on disk.
// Safe for concurrent use; a nil budget grants nothing.
type MemoryBudget struct {
	mu          sync.Mutex // guards used
	limit, used int64
}

// NewMemoryBudget returns a budget of limit bytes.
func NewMemoryBudget(limit int64) *MemoryBudget { return &MemoryBudget{limit: limit} }

// Reserve takes n bytes if they are free.
func (b *MemoryBudget) Reserve(n int64) bool {
	if b == nil || n < 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

// Release gives n bytes back.
func (b *MemoryBudget) Release(n int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.used = max(0, b.used-n)
	b.mu.Unlock()
}

// Used is the number of bytes reserved.
func (b *MemoryBudget) Used() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
