// Package idtable is the namenode's index of inodes and blocks by id: a
// hash table holding only pointers, the id read from the value itself.
//
// A Go map[uint64]*T keeps the key beside every pointer plus its control
// bytes, about 30 bytes an entry at the loads a growing map sits at; with
// one inode and one block per file that was a sixth of the namenode's
// heap. This table keeps 8 bytes a slot at a load between 3/8 and 3/4
// (11-21 bytes an entry), which is what HDFS's LightWeightGSet does with
// an intrusive list: the element carries its key.
//
// Open addressing with linear probing and backward-shift deletion (no
// tombstones). Ids are spread by Fibonacci hashing, so the sequential ids
// the namenode hands out fill the table evenly. Not safe for concurrent
// use; the namenode's lock guards it.
package idtable

import "math/bits"

// Table indexes *T by the id function given to New.
type Table[T any] struct {
	slots []*T
	n     int
	shift uint // 64 - log2(len(slots))
	id    func(*T) uint64
}

const minSlots = 8

// New returns an empty table; id must return the same id for a value for
// as long as it is in the table.
func New[T any](id func(*T) uint64) *Table[T] {
	return &Table[T]{slots: make([]*T, minSlots), shift: 64 - 3, id: id}
}

func (t *Table[T]) home(id uint64) int {
	return int((id * 0x9E3779B97F4A7C15) >> t.shift)
}

// Len is the number of values in the table.
func (t *Table[T]) Len() int { return t.n }

// Get returns the value with id, or nil.
func (t *Table[T]) Get(id uint64) *T {
	mask := len(t.slots) - 1
	for i := t.home(id); ; i = (i + 1) & mask {
		v := t.slots[i]
		if v == nil {
			return nil
		}
		if t.id(v) == id {
			return v
		}
	}
}

// Put adds v, replacing the value with the same id; it returns the
// replaced value or nil.
func (t *Table[T]) Put(v *T) *T {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.resize(len(t.slots) * 2)
	}
	id := t.id(v)
	mask := len(t.slots) - 1
	for i := t.home(id); ; i = (i + 1) & mask {
		old := t.slots[i]
		if old == nil {
			t.slots[i] = v
			t.n++
			return nil
		}
		if t.id(old) == id {
			t.slots[i] = v
			return old
		}
	}
}

// Delete removes the value with id and returns it, or nil.
func (t *Table[T]) Delete(id uint64) *T {
	mask := len(t.slots) - 1
	i := t.home(id)
	for {
		v := t.slots[i]
		if v == nil {
			return nil
		}
		if t.id(v) == id {
			break
		}
		i = (i + 1) & mask
	}
	old := t.slots[i]
	// Backward shift: move later entries of the probe run into the hole
	// when their home is not between the hole and them.
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		v := t.slots[j]
		if v == nil {
			break
		}
		h := t.home(t.id(v))
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			t.slots[i] = v
			i = j
		}
	}
	t.slots[i] = nil
	t.n--
	if len(t.slots) > 1024 && t.n*8 < len(t.slots) {
		t.resize(len(t.slots) / 2)
	}
	return old
}

// Range calls fn for every value, in no particular order, until fn
// returns false. fn must not add or delete.
func (t *Table[T]) Range(fn func(*T) bool) {
	for _, v := range t.slots {
		if v != nil && !fn(v) {
			return
		}
	}
}

func (t *Table[T]) resize(size int) {
	old := t.slots
	t.slots = make([]*T, size)
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	mask := size - 1
	for _, v := range old {
		if v == nil {
			continue
		}
		i := t.home(t.id(v))
		for t.slots[i] != nil {
			i = (i + 1) & mask
		}
		t.slots[i] = v
	}
}
