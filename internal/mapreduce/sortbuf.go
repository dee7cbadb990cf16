package mapreduce

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// recMeta indexes one record in the collector's arena. Sorting moves these
// 24-byte entries, never the record bytes. prefix holds the key's first 8
// bytes big-endian so most comparisons under the default order never touch
// the arena.
type recMeta struct {
	prefix uint64
	part   int32
	keyLen uint32
	off    uint32 // key offset in the arena; the value follows the key
	valLen uint32
}

const metaSize = 24

// collector is the map side of the shuffle: it partitions records into a
// bounded in-memory arena, sorts and spills it (through the combiner)
// when full, and merges the spills into one output file with an index of
// one segment per reduce.
type collector struct {
	job        *Job
	tctx       TaskContext
	numReduces int
	part       Partitioner
	cmp        func(a, b []byte) int
	bytesOrder bool // cmp is bytes.Compare: prefix comparisons are valid
	newComb    func() Reducer
	limit      int // arena bytes + metadata bytes that trigger a spill
	dir        string

	memory *MemoryBudget // for a final output held in memory
	pool   *SortBuffers
	arena  *arena // data, meta and the sort's scratch; back to pool when done
	data   []byte
	meta   []recMeta
	spills []*MapOutput

	counters  *Counters
	usage     *taskUsage    // nil: resources not measured
	nspills   int           // spills during the map (not the final sort)
	spillTime time.Duration // spent sorting and writing those spills
	outRecs   int64
	outBytes  int64
	spilled   int64
	combIn    int64
	combOut   int64
}

func newCollector(job *Job, tctx TaskContext, dir string, limit int, counters *Counters, pool *SortBuffers) *collector {
	cmp, bo := defaultCompare(job)
	p := job.Partitioner
	if p == nil {
		p = HashPartitioner{}
	}
	if limit <= 0 {
		limit = DefaultSortBufferBytes
	}
	a := pool.get(limit)
	return &collector{job: job, tctx: tctx, numReduces: job.NumReduces, part: p, cmp: cmp,
		bytesOrder: bo, newComb: job.NewCombiner, limit: limit, dir: dir, counters: counters,
		pool: pool, arena: a, data: a.data, meta: a.meta}
}

// release gives the arena back to the pool; the collector holds no
// records afterwards.
func (c *collector) release() {
	if c.arena == nil {
		return
	}
	c.arena.data, c.arena.meta = c.data, c.meta
	c.pool.put(c.arena)
	c.arena, c.data, c.meta = nil, nil, nil
}

// Emit collects one map output record.
func (c *collector) Emit(key, value []byte) error {
	p := 0
	if c.numReduces > 1 {
		p = c.part.Partition(key, c.numReduces)
		if p < 0 || p >= c.numReduces {
			return fmt.Errorf("partitioner returned %d for %d reduces", p, c.numReduces)
		}
	}
	n := len(key) + len(value)
	if len(c.meta) > 0 && len(c.data)+n+(len(c.meta)+1)*metaSize > c.limit {
		if err := c.spill(); err != nil {
			return err
		}
	}
	if len(c.data)+n > 1<<32-1 {
		return fmt.Errorf("map output record of %d bytes is too large", n)
	}
	off := len(c.data)
	c.data = append(c.data, key...)
	c.data = append(c.data, value...)
	c.meta = append(c.meta, recMeta{prefix: keyPrefix(key), part: int32(p), keyLen: uint32(len(key)),
		off: uint32(off), valLen: uint32(len(value))})
	c.outRecs++
	c.outBytes += int64(n)
	return nil
}

func keyPrefix(k []byte) uint64 {
	if len(k) >= 8 {
		return binary.BigEndian.Uint64(k)
	}
	var b [8]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:])
}

func (c *collector) key(m *recMeta) []byte {
	return c.data[m.off : m.off+m.keyLen]
}

func (c *collector) sort() {
	if c.bytesOrder {
		if c.arena == nil {
			c.arena = &arena{}
		}
		if cap(c.arena.tmp) < len(c.meta) {
			c.arena.tmp = make([]recMeta, len(c.meta), cap(c.meta))
		}
		radixSort(c.meta, c.arena.tmp[:len(c.meta)], c.numReduces, c.data)
		return
	}
	slices.SortStableFunc(c.meta, func(a, b recMeta) int {
		if a.part != b.part {
			return int(a.part - b.part)
		}
		return c.cmp(c.data[a.off:a.off+a.keyLen], c.data[b.off:b.off+b.keyLen])
	})
}

// metaStream reads sorted records of one partition from the arena.
type metaStream struct {
	c    *collector
	meta []recMeta
}

func (s *metaStream) next() ([]byte, []byte, error) {
	if len(s.meta) == 0 {
		return nil, nil, io.EOF
	}
	m := &s.meta[0]
	s.meta = s.meta[1:]
	k := s.c.data[m.off : m.off+m.keyLen]
	v := s.c.data[m.off+m.keyLen : m.off+m.keyLen+m.valLen]
	return k, v, nil
}

// spill sorts the arena and writes it to a new spill file.
func (c *collector) spill() error {
	start := time.Now()
	defer func() { c.nspills++; c.spillTime += time.Since(start) }()
	p := filepath.Join(c.dir, fmt.Sprintf("spill%d.out", len(c.spills)))
	out, err := c.writeSorted(p)
	if err != nil {
		return err
	}
	c.spills = append(c.spills, out)
	c.data = c.data[:0]
	c.meta = c.meta[:0]
	return nil
}

// writeSorted sorts the arena and writes it, partition by partition, to
// path, through the combiner if the job has one.
func (c *collector) writeSorted(path string) (*MapOutput, error) {
	c.usage.held(int64(len(c.data) + len(c.meta)*metaSize))
	c.sort()
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sw := newSegmentWriter(f)
	out, err := c.writeSortedTo(sw)
	if err != nil {
		return nil, err
	}
	c.counters.Add(GroupFS, FileBytesWritten, sw.off) // spills and the final output are local-disk I/O, as Hadoop counts them
	out.Path = path
	return out, f.Close()
}

// writeSortedTo writes the sorted arena, partition by partition, to sw,
// through the combiner if the job has one.
func (c *collector) writeSortedTo(sw *segmentWriter) (*MapOutput, error) {
	out := &MapOutput{Index: make([]SegmentIndex, max(1, c.numReduces))}
	i := 0
	for p := range out.Index {
		j := i
		for j < len(c.meta) && int(c.meta[j].part) == p {
			j++
		}
		start, recs := sw.off, sw.recs
		var err error
		if c.newComb == nil {
			err = c.writeArena(sw, c.meta[i:j])
		} else {
			err = c.writeStream(sw, &metaStream{c: c, meta: c.meta[i:j]}, int64(j-i))
		}
		if err != nil {
			return nil, err
		}
		out.Index[p] = SegmentIndex{Offset: start, Length: sw.off - start, Records: sw.recs - recs, CRC: sw.endSegment()}
		i = j
	}
	if err := sw.flush(); err != nil {
		return nil, err
	}
	c.spilled += sw.recs
	return out, nil
}

// framedSize is the arena's size as segment records (before combining).
func (c *collector) framedSize() int64 {
	var n int64
	for i := range c.meta {
		m := &c.meta[i]
		n += int64(m.keyLen) + int64(m.valLen) + int64(uvarintLen(int(m.keyLen))+uvarintLen(int(m.valLen)))
	}
	return n
}

// keepInMemory sorts the arena into one in-memory output if the memory
// budget has room for it (nil, nil if not).
func (c *collector) keepInMemory() (*MapOutput, error) {
	size := c.framedSize()
	if c.memory == nil || !c.memory.Reserve(size) {
		return nil, nil
	}
	// The arena and the output it is copied into are both resident.
	c.usage.held(int64(len(c.data)+len(c.meta)*metaSize) + size)
	c.sort()
	sw := &segmentWriter{buf: make([]byte, 0, size), inMemory: true}
	out, err := c.writeSortedTo(sw)
	if err != nil {
		c.memory.Release(size)
		return nil, err
	}
	data := sw.buf
	if len(data) < cap(data)/2 { // the combiner shrank it: do not hold the slack
		data = append([]byte(nil), data...)
	}
	c.memory.Release(size - int64(len(data)))
	out.Data, out.budget = data, c.memory
	return out, nil
}

// writeArena copies sorted arena records to sw, key and value in one
// copy (they lie back to back in the arena).
func (c *collector) writeArena(sw *segmentWriter, meta []recMeta) error {
	data := c.data
	for i := range meta {
		m := &meta[i]
		if err := sw.writeKV(data[m.off:m.off+m.keyLen+m.valLen], int(m.keyLen)); err != nil {
			return err
		}
	}
	return nil
}

// writeStream copies a sorted stream to sw, combining if possible.
func (c *collector) writeStream(sw *segmentWriter, s recordStream, n int64) error {
	if c.newComb == nil {
		for {
			k, v, err := s.next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := sw.write(k, v); err != nil {
				return err
			}
		}
	}
	comb := c.newComb()
	before := sw.recs
	g := newGrouper(s, c.cmp, c.bytesOrder)
	em := emitFunc(sw.write)
	for g.nextGroup() {
		if err := comb.Reduce(c.tctx, g.key, g, em); err != nil {
			return fmt.Errorf("combiner: %w", err)
		}
	}
	if g.err != nil {
		return g.err
	}
	c.combIn += g.records
	c.combOut += sw.recs - before
	return nil
}

type emitFunc func(k, v []byte) error

func (f emitFunc) Emit(k, v []byte) error { return f(k, v) }

// finish writes the final map output file at path: the arena directly when
// nothing was spilled, else a merge of all spills.
func (c *collector) finish(path string) (*MapOutput, error) {
	defer c.flushCounters()
	defer c.release()
	if len(c.spills) == 0 {
		if out, err := c.keepInMemory(); out != nil || err != nil {
			return out, err
		}
		return c.writeSorted(path)
	}
	if len(c.meta) > 0 {
		if err := c.spill(); err != nil {
			return nil, err
		}
	}
	c.release() // the arena is free for another task while this one merges
	if len(c.spills) == 1 {
		if err := os.Rename(c.spills[0].Path, path); err != nil {
			return nil, err
		}
		return &MapOutput{Path: path, Index: c.spills[0].Index}, nil
	}
	out, err := c.mergeSpills(path)
	for _, s := range c.spills {
		os.Remove(s.Path)
	}
	return out, err
}

func (c *collector) mergeSpills(path string) (*MapOutput, error) {
	files := make([]*os.File, len(c.spills))
	for i, s := range c.spills {
		f, err := os.Open(s.Path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		files[i] = f
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sw := newSegmentWriter(f)
	out := &MapOutput{Path: path, Index: make([]SegmentIndex, max(1, c.numReduces))}
	for p := range out.Index {
		streams := make([]recordStream, len(files))
		var n int64
		for i, s := range c.spills {
			seg := s.Index[p]
			streams[i] = newReaderSegment(io.NewSectionReader(files[i], seg.Offset, seg.Length), seg.Length)
			n += seg.Records
			c.counters.Add(GroupFS, FileBytesRead, seg.Length)
		}
		m, err := newMerger(c.cmp, c.bytesOrder, streams)
		if err != nil {
			return nil, err
		}
		start, recs := sw.off, sw.recs
		if err := c.writeStream(sw, m, n); err != nil {
			return nil, err
		}
		out.Index[p] = SegmentIndex{Offset: start, Length: sw.off - start, Records: sw.recs - recs, CRC: sw.endSegment()}
	}
	if err := sw.flush(); err != nil {
		return nil, err
	}
	c.spilled += sw.recs
	c.counters.Add(GroupFS, FileBytesWritten, sw.off)
	return out, f.Close()
}

func (c *collector) flushCounters() {
	c.counters.Add(GroupTask, MapOutputRecords, c.outRecs)
	c.counters.Add(GroupTask, MapOutputBytes, c.outBytes)
	c.counters.Add(GroupTask, SpilledRecords, c.spilled)
	if c.newComb != nil {
		c.counters.Add(GroupTask, CombineInputRecords, c.combIn)
		c.counters.Add(GroupTask, CombineOutputRecords, c.combOut)
	}
	c.outRecs, c.outBytes, c.spilled, c.combIn, c.combOut = 0, 0, 0, 0, 0
}
