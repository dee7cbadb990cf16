package idtable

import (
	"math/rand"
	"testing"
)

type item struct{ id uint64 }

// The table behaves as a map[uint64]*item under random puts, replaces and
// deletes, across growth and shrinking, with sequential ids (as the
// namenode hands out), random ones, and ids sharing their low bits (long
// probe runs that wrap around the end of the table).
func TestMatchesMap(t *testing.T) {
	for _, mode := range []string{"sequential", "random", "colliding"} {
		rng := rand.New(rand.NewSource(1))
		tab := New(func(i *item) uint64 { return i.id })
		model := map[uint64]*item{}
		key := func() uint64 {
			switch mode {
			case "sequential":
				return uint64(rng.Intn(20000)) + 1<<30
			case "colliding":
				return uint64(rng.Intn(1500))<<12 | 0xff0 + uint64(rng.Intn(2))
			}
			return rng.Uint64() % 40000 * 0x10001
		}
		for step := range 300000 {
			k := key()
			switch op := rng.Intn(10); {
			case op < 5 || step < 20000: // grow first, then churn
				v := &item{k}
				if got, want := tab.Put(v), model[k]; got != want {
					t.Fatalf("step %d: Put(%d) replaced %p, want %p", step, k, got, want)
				}
				model[k] = v
			case op < 8:
				if got, want := tab.Delete(k), model[k]; got != want {
					t.Fatalf("step %d: Delete(%d) = %p, want %p", step, k, got, want)
				}
				delete(model, k)
			default:
				if got, want := tab.Get(k), model[k]; got != want {
					t.Fatalf("step %d: Get(%d) = %p, want %p", step, k, got, want)
				}
			}
			if tab.Len() != len(model) {
				t.Fatalf("step %d: Len %d, want %d", step, tab.Len(), len(model))
			}
		}
		seen := 0
		tab.Range(func(v *item) bool {
			if model[v.id] != v {
				t.Fatalf("Range gave %d, not in the model", v.id)
			}
			seen++
			return true
		})
		if seen != len(model) {
			t.Fatalf("Range saw %d, want %d", seen, len(model))
		}
		// Empty it: every delete finds its value, and the table shrinks.
		for k, v := range model {
			if tab.Delete(k) != v {
				t.Fatalf("final Delete(%d) lost its value", k)
			}
		}
		if tab.Len() != 0 || len(tab.slots) > 1024 {
			t.Fatalf("empty table: Len %d, %d slots", tab.Len(), len(tab.slots))
		}
	}
}

func BenchmarkGet(b *testing.B) {
	tab := New(func(i *item) uint64 { return i.id })
	for i := range 1 << 20 {
		tab.Put(&item{uint64(i) + 1<<30})
	}
	b.ResetTimer()
	for i := range b.N {
		if tab.Get(uint64(i&(1<<20-1))+1<<30) == nil {
			b.Fatal("missing")
		}
	}
}

// Consecutive ids, as the namenode hands out (inodes from 1, blocks from
// 1<<30), each sit in their home slot, next to the one before: a load's
// lookups and inserts in id order touch memory in order. With gaps left by
// deletes they still sit within a short run of home.
func TestSequentialIdsSitAtHome(t *testing.T) {
	for _, base := range []uint64{1, 1 << 30} {
		tab := New(func(i *item) uint64 { return i.id })
		for i := range uint64(100000) {
			tab.Put(&item{base + i})
		}
		for i := uint64(0); i < 100000; i += 3 {
			tab.Delete(base + i)
		}
		for i := uint64(100000); i < 150000; i++ {
			tab.Put(&item{base + i})
		}
		worst := 0
		mask := len(tab.slots) - 1
		for s, v := range tab.slots {
			if v != nil {
				worst = max(worst, (s-tab.home(v.id))&mask)
			}
		}
		if worst > 0 {
			t.Errorf("ids from %d: a value sits %d slots past its home; want every one at home", base, worst)
		}
	}
}
