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
// tombstones). An id's home slot is its low bits (folded with the high
// ones), as LightWeightGSet's is: the namenode hands ids out in sequence,
// so they fill the table evenly, and consecutive ids sit in consecutive
// slots. An image load inserts and checks ids in that order and walks the
// table sequentially; a scrambling hash (Fibonacci hashing, before) sent
// every such lookup to a random slot, and a miss probed a run of slots
// whose values each had to be read for their id, one cache miss each
// (a 1M-file restart took 1.7-2.4 s of CPU with it, 1.2-1.5 s without).
// Ids that share their low bits collide, as under any fixed hash some ids
// do; the namenode's ids are consecutive, and a user who wanted to pile
// them into one run would have to create a table's size of files for each
// one kept. Not safe for concurrent use; the namenode's lock guards it.
package idtable

// Table indexes *T by the id function given to New.
type Table[T any] struct {
	slots []*T
	n     int
	mask  uint64 // len(slots) - 1
	id    func(*T) uint64
}

const minSlots = 8

// New returns an empty table; id must return the same id for a value for
// as long as it is in the table.
func New[T any](id func(*T) uint64) *Table[T] {
	return &Table[T]{slots: make([]*T, minSlots), mask: minSlots - 1, id: id}
}

func (t *Table[T]) home(id uint64) int {
	return int((id ^ id>>32) & t.mask)
}

// Len is the number of values in the table.
func (t *Table[T]) Len() int { return t.n }

// dist is how far slot i is past home slot h.
func (t *Table[T]) dist(i, h int) int { return (i - h) & int(t.mask) }

// Get returns the value with id, or nil.
func (t *Table[T]) Get(id uint64) *T {
	mask := int(t.mask)
	for i, d := t.home(id), 0; ; i, d = (i+1)&mask, d+1 {
		v := t.slots[i]
		if v == nil {
			return nil
		}
		vid := t.id(v)
		if vid == id {
			return v
		}
		if t.dist(i, t.home(vid)) < d {
			return nil // id would have taken this slot (Robin Hood order)
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
	mask := int(t.mask)
	for i, d := t.home(id), 0; ; i, d = (i+1)&mask, d+1 {
		old := t.slots[i]
		if old == nil {
			break
		}
		oid := t.id(old)
		if oid == id {
			t.slots[i] = v
			return old
		}
		if t.dist(i, t.home(oid)) < d {
			break // not in the table: it would have been found by here
		}
	}
	t.insert(v)
	t.n++
	return nil
}

// insert places v, whose id is not in the table, Robin Hood style: along
// its probe run it takes the slot of the first value nearer its own home,
// which moves on in turn. A run then holds its values in order of home,
// so a lookup stops at the first value nearer home than itself, and a
// delete shifts back only up to the first value at its home: with the
// consecutive ids of the namenode nearly every value is at home, and a
// run is as long as the ids are consecutive (the whole table, after a
// load), which plain linear probing's delete walked to its end.
func (t *Table[T]) insert(v *T) {
	mask := int(t.mask)
	i := t.home(t.id(v))
	for d := 0; ; i, d = (i+1)&mask, d+1 {
		old := t.slots[i]
		if old == nil {
			t.slots[i] = v
			return
		}
		if od := t.dist(i, t.home(t.id(old))); od < d {
			t.slots[i], v, d = v, old, od
		}
	}
}

// Delete removes the value with id and returns it, or nil.
func (t *Table[T]) Delete(id uint64) *T {
	mask := int(t.mask)
	i := t.home(id)
	for d := 0; ; i, d = (i+1)&mask, d+1 {
		v := t.slots[i]
		if v == nil {
			return nil
		}
		vid := t.id(v)
		if vid == id {
			break
		}
		if t.dist(i, t.home(vid)) < d {
			return nil
		}
	}
	old := t.slots[i]
	// Backward shift: the values after the hole that are past their home
	// move one slot back; the first one at home (or an empty slot) ends it.
	for {
		j := (i + 1) & mask
		v := t.slots[j]
		if v == nil || t.home(t.id(v)) == j {
			break
		}
		t.slots[i] = v
		i = j
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
	t.mask = uint64(size - 1)
	for _, v := range old {
		if v != nil {
			t.insert(v)
		}
	}
}
