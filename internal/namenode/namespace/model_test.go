package namespace

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

// model is the namespace as a plain map from path to "is a directory".
type model map[string]bool

func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i == 0 {
		return "/"
	}
	return p[:i]
}

// throughFile reports NotDirectory if walking p meets a file before its
// last component (stopping at the first missing name, as resolve does).
func (m model) throughFile(p string) bool {
	names := strings.Split(p[1:], "/")
	for i := 1; i < len(names); i++ {
		isDir, ok := m["/"+strings.Join(names[:i], "/")]
		if !ok {
			return false
		}
		if !isDir {
			return true
		}
	}
	return false
}

func (m model) hasChildren(p string) bool {
	for q := range m {
		if q != p && strings.HasPrefix(q, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}

func (m model) mkdirs(p string, parents bool) Kind {
	if m.throughFile(p) {
		return NotDirectory
	}
	if isDir, ok := m[p]; ok {
		if isDir {
			return 0
		}
		return Exists
	}
	if _, ok := m[parentOf(p)]; !ok && !parents {
		return NotFound
	}
	for q := p; ; q = parentOf(q) {
		if _, ok := m[q]; ok {
			break
		}
		m[q] = true
	}
	return 0
}

func (m model) create(p string, overwrite, parents bool) Kind {
	if m.throughFile(p) {
		return NotDirectory
	}
	if isDir, ok := m[p]; ok {
		if isDir || !overwrite {
			return Exists
		}
		m[p] = false
		return 0
	}
	if k := m.mkdirs(parentOf(p), parents); k != 0 {
		return k
	}
	m[p] = false
	return 0
}

func (m model) delete(p string, recursive bool) Kind {
	if m.throughFile(p) {
		return NotDirectory
	}
	if _, ok := m[p]; !ok {
		return NotFound
	}
	if p == "/" {
		return Invalid
	}
	if m.hasChildren(p) && !recursive {
		return NotEmpty
	}
	for q := range m {
		if q == p || strings.HasPrefix(q, p+"/") {
			delete(m, q)
		}
	}
	return 0
}

func (m model) rename(src, dst string) Kind {
	if m.throughFile(src) || m.throughFile(dst) {
		return NotDirectory
	}
	if _, ok := m[src]; !ok {
		return NotFound
	}
	if src == "/" {
		return Invalid
	}
	if dst == src {
		return 0
	}
	if isDir, ok := m[dst]; ok {
		if !isDir {
			return Exists
		}
		dst = strings.TrimSuffix(dst, "/") + "/" + src[strings.LastIndexByte(src, '/')+1:]
		if dst == src {
			return 0
		}
		if _, ok := m[dst]; ok {
			return Exists
		}
	} else if _, ok := m[parentOf(dst)]; !ok {
		return NotFound
	}
	if dst == src || strings.HasPrefix(dst, src+"/") {
		return Invalid
	}
	moved := model{}
	for q, isDir := range m {
		if q == src || strings.HasPrefix(q, src+"/") {
			moved[dst+q[len(src):]] = isDir
			delete(m, q)
		}
	}
	for q, isDir := range moved {
		m[q] = isDir
	}
	return 0
}

func (m model) dump() string {
	var lines []string
	for p, isDir := range m {
		lines = append(lines, fmt.Sprintf("%s %v", p, isDir))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func dumpTree(t *Tree) string {
	var lines []string
	t.Walk(func(n *INode) bool {
		lines = append(lines, fmt.Sprintf("%s %v", n.Path(), n.Dir))
		return true
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func randPath(rng *rand.Rand) string {
	depth := 1 + rng.Intn(3)
	var b strings.Builder
	for i := 0; i < depth; i++ {
		b.WriteString("/" + string(rune('a'+rng.Intn(3))))
	}
	return b.String()
}

// TestAgainstModel runs random operations on the tree and on the map model
// and demands the same outcome for each and the same tree after each.
func TestAgainstModel(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		tr := New(Config{Superuser: "hdfs", Permissions: true})
		m := model{"/": true}
		for step := 0; step < 400; step++ {
			p, q := randPath(rng), randPath(rng)
			flag := rng.Intn(2) == 0
			var got error
			var want Kind
			var desc string
			switch rng.Intn(4) {
			case 0:
				desc = fmt.Sprintf("mkdirs %s parents=%v", p, flag)
				got, want = tr.Mkdirs(root, p, 0o755, 0o755, flag, int64(step)), m.mkdirs(p, flag)
			case 1:
				desc = fmt.Sprintf("create %s overwrite=%v", p, flag)
				_, _, got = tr.Create(root, p, CreateOptions{Overwrite: flag, CreateParent: true}, int64(step))
				want = m.create(p, flag, true)
			case 2:
				desc = fmt.Sprintf("delete %s recursive=%v", p, flag)
				_, got = tr.Delete(root, p, flag, int64(step))
				want = m.delete(p, flag)
			case 3:
				desc = fmt.Sprintf("rename %s %s", p, q)
				_, got = tr.Rename(root, p, q, int64(step))
				want = m.rename(p, q)
			}
			if kindOf(got) != want {
				t.Fatalf("seed %d step %d: %s: tree says %v (kind %d), model says kind %d\ntree:\n%s", seed, step, desc, got, kindOf(got), want, dumpTree(tr))
			}
			if dumpTree(tr) != m.dump() {
				t.Fatalf("seed %d step %d: after %s\ntree:\n%s\nmodel:\n%s", seed, step, desc, dumpTree(tr), m.dump())
			}
			if tr.Files()+tr.Dirs() != len(m) {
				t.Fatalf("seed %d step %d: counts %d+%d, model has %d", seed, step, tr.Files(), tr.Dirs(), len(m))
			}
		}
	}
}
