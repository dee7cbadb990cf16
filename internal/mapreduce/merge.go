package mapreduce

import (
	"bytes"
	"io"
)

// merger is a k-way merge of sorted record streams over a binary heap of
// stream indexes. The record it returns stays valid until the next call,
// because the stream it came from is only advanced then. Under the
// default byte order each stream's head key carries its 8-byte prefix, so
// most heap comparisons are one integer comparison.
type merger struct {
	cmp      func(a, b []byte) int
	prefixOK bool // cmp is bytes.Compare
	streams  []recordStream
	keys     [][]byte
	vals     [][]byte
	prefixes []uint64
	heap     []int // indexes into streams, ordered by keys
	last     int   // stream of the record returned last; -1 if none
}

func newMerger(cmp func(a, b []byte) int, prefixOK bool, streams []recordStream) (*merger, error) {
	m := &merger{cmp: cmp, prefixOK: prefixOK, streams: streams, keys: make([][]byte, len(streams)),
		vals: make([][]byte, len(streams)), prefixes: make([]uint64, len(streams)), last: -1}
	for i, s := range streams {
		k, v, err := s.next()
		if err == io.EOF {
			continue
		}
		if err != nil {
			return nil, err
		}
		m.set(i, k, v)
		m.heap = append(m.heap, i)
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m, nil
}

func (m *merger) set(i int, k, v []byte) {
	m.keys[i], m.vals[i] = k, v
	if m.prefixOK {
		m.prefixes[i] = keyPrefix(k)
	}
}

func (m *merger) less(a, b int) bool {
	if m.prefixOK {
		if pa, pb := m.prefixes[a], m.prefixes[b]; pa != pb {
			return pa < pb
		}
	}
	c := m.cmp(m.keys[a], m.keys[b])
	return c < 0 || (c == 0 && a < b) // stable across streams
}

func (m *merger) down(i int) {
	h := m.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		s := l
		if r := l + 1; r < len(h) && m.less(h[r], h[l]) {
			s = r
		}
		if !m.less(h[s], h[i]) {
			return
		}
		h[i], h[s] = h[s], h[i]
		i = s
	}
}

func (m *merger) next() ([]byte, []byte, error) {
	if m.last >= 0 {
		// Advance the stream whose record the caller has finished with.
		k, v, err := m.streams[m.last].next()
		switch {
		case err == io.EOF:
			n := len(m.heap) - 1
			m.heap[0] = m.heap[n]
			m.heap = m.heap[:n]
		case err != nil:
			return nil, nil, err
		default:
			m.set(m.last, k, v)
		}
		if len(m.heap) > 0 {
			m.down(0)
		}
		m.last = -1
	}
	if len(m.heap) == 0 {
		return nil, nil, io.EOF
	}
	top := m.heap[0]
	m.last = top
	return m.keys[top], m.vals[top], nil
}

// grouper walks a sorted stream one key group at a time and is the
// ValueIterator of the current group.
type grouper struct {
	src      recordStream
	cmp      func(a, b []byte) int
	exact    bool   // cmp is bytes.Compare: equal keys are equal bytes
	key      []byte // copy of the current group's key
	val      []byte
	peekK    []byte
	peekV    []byte
	havePeek bool // peekK/peekV hold the first record of a group not yet returned
	inGroup  bool // Next may still return values of the current group
	err      error
	records  int64
}

func newGrouper(src recordStream, cmp func(a, b []byte) int, exact bool) *grouper {
	return &grouper{src: src, cmp: cmp, exact: exact}
}

func (g *grouper) sameKey(k []byte) bool {
	if g.exact {
		return bytes.Equal(k, g.key)
	}
	return g.cmp(k, g.key) == 0
}

// nextGroup skips what is left of the current group and starts the next;
// false at the end or on error (see err).
func (g *grouper) nextGroup() bool {
	for g.inGroup && g.Next() {
	}
	if g.err != nil {
		return false
	}
	if !g.havePeek {
		k, v, err := g.src.next()
		if err != nil {
			if err != io.EOF {
				g.err = err
			}
			return false
		}
		g.peekK, g.peekV, g.havePeek = k, v, true
	}
	g.key = append(g.key[:0], g.peekK...)
	g.inGroup = true
	return true
}

// Next advances to the group's next value.
func (g *grouper) Next() bool {
	if !g.inGroup {
		return false
	}
	if g.havePeek {
		g.val, g.havePeek = g.peekV, false
		g.records++
		return true
	}
	k, v, err := g.src.next()
	if err != nil {
		if err != io.EOF {
			g.err = err
		}
		g.inGroup = false
		return false
	}
	if !g.sameKey(k) {
		g.peekK, g.peekV, g.havePeek = k, v, true
		g.inGroup = false
		return false
	}
	g.val = v
	g.records++
	return true
}

// Value is the current value.
func (g *grouper) Value() []byte { return g.val }

var _ ValueIterator = (*grouper)(nil)

// HashPartitioner is the default Partitioner: FNV-1a of the key modulo
// the number of reduces.
type HashPartitioner struct{}

// Partition hashes key.
func (HashPartitioner) Partition(key []byte, n int) int {
	h := uint32(2166136261)
	for _, c := range key {
		h ^= uint32(c)
		h *= 16777619
	}
	return int(h % uint32(n))
}

func defaultCompare(job *Job) (func(a, b []byte) int, bool) {
	if job.Compare != nil {
		return job.Compare, false
	}
	return bytes.Compare, true
}
