package idtable

import (
	"math/rand"
	"testing"
)

type item struct{ id uint64 }

// The table behaves as a map[uint64]*item under random puts, replaces and
// deletes, across growth and shrinking, with sequential ids (as the
// namenode hands out) and random ones.
func TestMatchesMap(t *testing.T) {
	for _, seq := range []bool{true, false} {
		rng := rand.New(rand.NewSource(1))
		tab := New(func(i *item) uint64 { return i.id })
		model := map[uint64]*item{}
		key := func() uint64 {
			if seq {
				return uint64(rng.Intn(20000)) + 1<<30
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
