package namespace

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchTree is bench nn's layout: under /benchmarks/nn/files, one
// directory per thread (t0..t63) of perDir files each, made in a random
// order so that inodes that sit side by side in a directory were not
// allocated side by side (as on a namenode that has run a while).
func benchTree(b *testing.B, perDir int) (*Tree, []string) {
	b.Helper()
	tr := newTree()
	var paths []string
	for t := range 64 {
		for i := range perDir {
			paths = append(paths, fmt.Sprintf("/benchmarks/nn/files/t%d/f%d", t, i))
		}
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	for _, p := range paths {
		if _, _, err := tr.Create(root, p, CreateOptions{Perm: 0o644, Replication: 3, BlockSize: 1 << 20, CreateParent: true, ParentPerm: 0o755}, 2); err != nil {
			b.Fatal(err)
		}
	}
	return tr, paths
}

// BenchmarkLookup is the namespace's share of the ops of bench nn against
// directories of 47 (bench nn --threads 64 --n 3000), 940 (--n 60000) and
// 15,625 (--n 1000000) files: stat, a rename to a new name in the same
// directory and back, and delete.
func BenchmarkLookup(b *testing.B) {
	for _, perDir := range []int{47, 940, 15625} {
		b.Run(fmt.Sprintf("stat/dir=%d", perDir), func(b *testing.B) {
			tr, paths := benchTree(b, perDir)
			i := 0
			for b.Loop() {
				if _, err := tr.Stat(root, "stat", paths[i%len(paths)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(fmt.Sprintf("rename/dir=%d", perDir), func(b *testing.B) {
			tr, paths := benchTree(b, perDir)
			renamed := make([]string, len(paths))
			for i, p := range paths {
				dir, name := p[:lastSlash(p)], p[lastSlash(p)+1:]
				renamed[i] = dir + "/r" + name[1:]
			}
			i := 0
			for b.Loop() {
				src, dst := paths[i%len(paths)], renamed[i%len(paths)]
				if i/len(paths)%2 == 1 {
					src, dst = dst, src
				}
				if _, err := tr.Rename(root, src, dst, 3); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(fmt.Sprintf("delete/dir=%d", perDir), func(b *testing.B) {
			tr, paths := benchTree(b, perDir)
			i := 0
			for b.Loop() {
				p := paths[i%len(paths)]
				if i%len(paths) == 0 && i > 0 {
					b.StopTimer()
					tr, paths = benchTree(b, perDir)
					b.StartTimer()
				}
				if _, err := tr.Delete(root, p, false, 3); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

func lastSlash(p string) int {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return i
		}
	}
	return -1
}
