package namespace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// checkChildren demands what every lookup relies on: each directory's
// children sorted by name, without duplicates, each pointing back at it,
// and in a keyed directory one name key per child, its own.
func checkChildren(t *testing.T, tr *Tree, desc string) {
	t.Helper()
	tr.Walk(func(n *INode) bool {
		ch := n.Children()
		if n.feat != nil && n.feat.keys != nil {
			if len(n.feat.keys) != len(ch) {
				t.Fatalf("after %s: %s has %d keys for %d children", desc, n.Path(), len(n.feat.keys), len(ch))
			}
			for i, c := range ch {
				if n.feat.keys[i] != nameKey(c.Name) {
					t.Fatalf("after %s: key %d of %s is not %q's", desc, i, n.Path(), c.Name)
				}
			}
		} else if len(ch) >= keyedMin {
			t.Fatalf("after %s: %s has %d children and no keys", desc, n.Path(), len(ch))
		}
		for i, c := range ch {
			if c.Parent != n {
				t.Fatalf("after %s: %s's parent is not %s", desc, c.Name, n.Path())
			}
			if i > 0 && ch[i-1].Name >= c.Name {
				t.Fatalf("after %s: children of %s out of order at %d: %q then %q", desc, n.Path(), i, ch[i-1].Name, c.Name)
			}
		}
		return true
	})
}

// TestChildSlotsAgainstSortedModel runs creates, overwrites, deletes,
// renames and rename2s (with and without overwrite) between two large
// directories and into a third, where the ops put entries at the slots
// their resolutions found (resolution.slot, move); after every op each
// directory must hold exactly the model's names, in order.
func TestChildSlotsAgainstSortedModel(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		tr := newTree()
		dirs := []string{"/x", "/y", "/x/sub"}
		m := map[string][]string{} // directory -> sorted names of its files
		for _, d := range dirs {
			mustMkdir(t, tr, root, d, 0o755)
		}
		m["/x"] = []string{"sub"} // sub is /x's child too
		// Short names, names one the prefix of another, and names alike in
		// their first 8 bytes (one name key for many: the keyed lookup's
		// second search), enough to key the directories (keyedMin).
		name := func() string {
			switch rng.IntN(4) {
			case 0:
				return fmt.Sprintf("part-r-%05d", rng.IntN(60))
			case 1:
				return "p" + strings.Repeat("a", rng.IntN(12))
			default:
				return fmt.Sprintf("n%03d", rng.IntN(120))
			}
		}
		has := func(d, n string) bool { _, ok := slices.BinarySearch(m[d], n); return ok }
		add := func(d, n string) { i, _ := slices.BinarySearch(m[d], n); m[d] = slices.Insert(m[d], i, n) }
		del := func(d, n string) { i, _ := slices.BinarySearch(m[d], n); m[d] = slices.Delete(m[d], i, i+1) }
		for step := range 3000 {
			d1, d2 := dirs[rng.IntN(2)], dirs[rng.IntN(3)]
			n1, n2 := name(), name()
			p1, p2 := d1+"/"+n1, d2+"/"+n2
			var desc string
			var err error
			wantOK := true
			switch op := rng.IntN(5); op {
			case 0:
				over := rng.IntN(2) == 0
				desc = fmt.Sprintf("create %s overwrite=%v", p1, over)
				_, _, err = tr.Create(root, p1, CreateOptions{Overwrite: over}, int64(step))
				wantOK = !has(d1, n1) || over
				if wantOK && !has(d1, n1) {
					add(d1, n1)
				}
			case 1:
				desc = "delete " + p1
				_, err = tr.Delete(root, p1, false, int64(step))
				wantOK = has(d1, n1)
				if wantOK {
					del(d1, n1)
				}
			case 2:
				desc = "rename " + p1 + " " + p2
				_, err = tr.Rename(root, p1, p2, int64(step))
				wantOK = has(d1, n1) && (!has(d2, n2) || p1 == p2)
				if wantOK {
					del(d1, n1)
					add(d2, n2)
				}
			case 3:
				over := rng.IntN(2) == 0
				desc = fmt.Sprintf("rename2 %s %s overwrite=%v", p1, p2, over)
				_, _, err = tr.Rename2(root, p1, p2, over, int64(step))
				wantOK = has(d1, n1) && p1 != p2 && (!has(d2, n2) || over)
				if wantOK {
					del(d1, n1)
					if !has(d2, n2) {
						add(d2, n2)
					}
				}
			case 4:
				// Into a directory: the moved entry keeps its name.
				desc = "rename " + p1 + " into /y"
				_, err = tr.Rename(root, p1, "/y", int64(step))
				wantOK = has(d1, n1) && (d1 == "/y" || !has("/y", n1))
				if wantOK && d1 != "/y" {
					del(d1, n1)
					add("/y", n1)
				}
			}
			if (err == nil) != wantOK {
				t.Fatalf("seed %d step %d: %s: err %v, model says ok=%v", seed, step, desc, err, wantOK)
			}
			checkChildren(t, tr, desc)
			if step == 2999 && tr.root.child("x").feat.keys == nil {
				t.Fatalf("seed %d: /x never grew to keyedMin: the keyed lookups went untested", seed)
			}
			for _, d := range dirs {
				n, err := tr.Stat(root, "ls", d)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, c := range n.Children() {
					got = append(got, c.Name)
				}
				if !slices.Equal(got, m[d]) {
					t.Fatalf("seed %d step %d: after %s, %s holds %v; the model %v", seed, step, desc, d, got, m[d])
				}
				for _, c := range got {
					if _, err := tr.Stat(root, "stat", d+"/"+c); err != nil {
						t.Fatalf("seed %d step %d: after %s: %v", seed, step, desc, err)
					}
				}
			}
		}
	}
}
