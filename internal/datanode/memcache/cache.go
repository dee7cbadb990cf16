package memcache

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// Errors of Begin and Commit, matched with errors.Is.
var (
	ErrFull      = errors.New("cache capacity exceeded")
	ErrCached    = errors.New("block already cached")
	ErrLoading   = errors.New("block is being cached")
	ErrCancelled = errors.New("caching cancelled: the block was uncached or the replica changed")
	ErrClosed    = errors.New("cache closed")
)

// Cache is one datanode's in-memory block cache. It is safe for concurrent
// use.
type Cache struct {
	capacity int64

	mu       sync.Mutex
	used     int64             // guarded by mu: bytes mapped or reserved (cached, loading, and uncached but still read)
	blocks   map[uint64]*Block // guarded by mu: fully cached blocks
	loading  map[uint64]*Fill  // guarded by mu: reservations being filled
	unlocked int               // guarded by mu: cached blocks whose mlock failed
	closed   bool              // guarded by mu
	lockErr  error             // guarded by mu: the first mlock failure, for Stats
}

// New returns an empty cache of capacity bytes (0: caching disabled).
func New(capacity int64) *Cache {
	return &Cache{capacity: max(capacity, 0), blocks: map[uint64]*Block{}, loading: map[uint64]*Fill{}}
}

// Block is a cached replica. Readers get it from Cache.Get and must call
// Release when done; until then Data and Sums stay valid even if the block
// is uncached meanwhile.
type Block struct {
	ID               uint64
	GS               uint64
	Length           int64
	BytesPerChecksum int

	c    *Cache
	mem  region
	size int64 // bytes counted against the capacity (page rounded)
	data []byte
	sums []byte
	refs atomic.Int64 // the cache's own reference while cached, plus one per reader
}

// Data is the block's bytes.
func (b *Block) Data() []byte { return b.data }

// Sums are the block's chunk checksums, as stored in its meta file (4
// bytes, big-endian CRC32C, per BytesPerChecksum bytes of data).
func (b *Block) Sums() []byte { return b.sums }

// Release drops a reference; the last one returns the memory.
func (b *Block) Release() {
	if n := b.refs.Add(-1); n == 0 {
		b.c.free(b)
	} else if n < 0 {
		panic(fmt.Sprintf("memcache: blk_%d released more often than acquired", b.ID))
	}
}

// Fill is a reservation being filled: the caller writes the replica's data
// and checksums into Data and Sums, verifies them, and commits.
type Fill struct {
	b         *Block
	cancelled bool // guarded by the cache's mu: Uncache or Close came first
}

// Data is where the block's bytes go.
func (f *Fill) Data() []byte { return f.b.data }

// Sums is where the block's checksums go.
func (f *Fill) Sums() []byte { return f.b.sums }

// Locked reports whether the block's memory is locked (mlock succeeded).
func (f *Fill) Locked() bool { return f.b.mem.locked }

// Begin reserves memory for block id (generation stamp gs, length bytes
// of data and sumsLen bytes of checksums) and maps it. It fails with
// ErrFull when the block does not fit in what is left of the capacity,
// ErrCached or ErrLoading when the block is already cached or being
// cached. The caller must Commit or Abort the fill.
func (c *Cache) Begin(id, gs uint64, length, sumsLen int64, bpc int) (*Fill, error) {
	if length < 0 || sumsLen < 0 || bpc <= 0 {
		return nil, fmt.Errorf("memcache: blk_%d_%d: bad sizes (length %d, checksums %d, bytes per checksum %d)", id, gs, length, sumsLen, bpc)
	}
	size := pageRound(length + sumsLen)
	b := &Block{ID: id, GS: gs, Length: length, BytesPerChecksum: bpc, c: c, size: size}
	f := &Fill{b: b}
	if err := c.reserve(f); err != nil {
		return nil, err
	}
	mem, lockErr, err := mapRegion(size)
	if err != nil {
		c.finishLoad(f)
		c.unreserve(size)
		return nil, fmt.Errorf("memcache: blk_%d_%d: map %d bytes: %w", id, gs, size, err)
	}
	b.mem = mem
	if mem.mem != nil {
		b.data, b.sums = mem.mem[:length:length], mem.mem[length:length+sumsLen:length+sumsLen]
	}
	if lockErr != nil {
		c.mu.Lock()
		if c.lockErr == nil {
			c.lockErr = lockErr
		}
		c.mu.Unlock()
	}
	return f, nil
}

func (c *Cache) reserve(f *Fill) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := f.b.ID
	switch {
	case c.closed:
		return ErrClosed
	case c.blocks[id] != nil:
		return fmt.Errorf("%w: blk_%d_%d", ErrCached, id, c.blocks[id].GS)
	case c.loading[id] != nil:
		return fmt.Errorf("%w: blk_%d", ErrLoading, id)
	case c.used+f.b.size > c.capacity:
		return fmt.Errorf("%w: blk_%d_%d needs %d bytes, %d of %d in use", ErrFull, id, f.b.GS, f.b.size, c.used, c.capacity)
	}
	c.used += f.b.size
	c.loading[id] = f
	return nil
}

func (c *Cache) unreserve(size int64) {
	c.mu.Lock()
	c.used -= size
	c.mu.Unlock()
}

// finishLoad removes f from the loads in progress (if it is still there).
func (c *Cache) finishLoad(f *Fill) {
	c.mu.Lock()
	if c.loading[f.b.ID] == f {
		delete(c.loading, f.b.ID)
	}
	c.mu.Unlock()
}

// Commit makes the filled block visible to Get. It fails with ErrCancelled
// if the block was uncached (or the cache closed) while it was filled; the
// memory is then returned.
func (c *Cache) Commit(f *Fill) error {
	c.mu.Lock()
	if f.cancelled || c.closed {
		c.mu.Unlock()
		c.abort(f)
		return fmt.Errorf("%w: blk_%d_%d", ErrCancelled, f.b.ID, f.b.GS)
	}
	delete(c.loading, f.b.ID)
	f.b.refs.Store(1)
	c.blocks[f.b.ID] = f.b
	if !f.b.mem.locked && f.b.mem.mem != nil {
		c.unlocked++
	}
	c.mu.Unlock()
	return nil
}

// Abort gives up a fill (the replica could not be read or is corrupt).
func (c *Cache) Abort(f *Fill) { c.abort(f) }

func (c *Cache) abort(f *Fill) {
	c.finishLoad(f)
	_ = f.b.mem.unmap()
	c.unreserve(f.b.size)
}

// Get returns block id with a reference the caller must Release, or nil
// if it is not cached.
func (c *Cache) Get(id uint64) *Block {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.blocks[id]
	if b != nil {
		// The map holds a reference, so the count is at least 1 here and
		// no Release can free the block before this one counts.
		b.refs.Add(1)
	}
	return b
}

// Uncache removes block id from the cache, or cancels caching it. It
// reports whether the block was cached (false when it was unknown or only
// being loaded). The memory is returned when the last reader lets go.
func (c *Cache) Uncache(id uint64) bool {
	c.mu.Lock()
	if f := c.loading[id]; f != nil {
		f.cancelled = true
		delete(c.loading, id)
	}
	b := c.blocks[id]
	if b != nil {
		delete(c.blocks, id)
		if !b.mem.locked && b.mem.mem != nil {
			c.unlocked--
		}
	}
	c.mu.Unlock()
	if b != nil {
		b.Release()
	}
	return b != nil
}

// free unmaps a block nobody references any more.
func (c *Cache) free(b *Block) {
	_ = b.mem.unmap()
	b.data, b.sums = nil, nil
	c.unreserve(b.size)
}

// Close uncaches everything and refuses new blocks. Blocks still being
// read are unmapped when their readers release them.
func (c *Cache) Close() {
	c.mu.Lock()
	c.closed = true
	ids := make([]uint64, 0, len(c.blocks)+len(c.loading))
	for id := range c.blocks {
		ids = append(ids, id)
	}
	for id := range c.loading {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	for _, id := range ids {
		c.Uncache(id)
	}
}

// Stats is what heartbeats and metrics report.
type Stats struct {
	Capacity int64
	Used     int64    // bytes of memory held: cached blocks, loads in progress, uncached blocks still being read
	IDs      []uint64 // fully cached blocks, sorted
	Loading  int      // blocks being cached
	Unlocked int      // cached blocks whose memory could not be locked
	LockErr  error    // the first mlock failure, if any
}

// Stats returns the cache's state.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	s := Stats{Capacity: c.capacity, Used: c.used, Loading: len(c.loading), Unlocked: c.unlocked, LockErr: c.lockErr,
		IDs: make([]uint64, 0, len(c.blocks))}
	for id := range c.blocks {
		s.IDs = append(s.IDs, id)
	}
	c.mu.Unlock()
	slices.Sort(s.IDs)
	return s
}

// Capacity is the configured capacity in bytes.
func (c *Cache) Capacity() int64 { return c.capacity }

// Used is the bytes of memory held now.
func (c *Cache) Used() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// Len is the number of fully cached blocks.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.blocks)
}
