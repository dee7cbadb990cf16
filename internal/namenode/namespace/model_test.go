package namespace

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

// model is the namespace as a plain map from path to what the tree must
// agree on: the inode's type, its access time (which, unlike the
// modification time, only creation and setTimes change), its name
// quota (0: none) and one extended attribute.
type model map[string]entry

type entry struct {
	dir   bool
	atime int64
	quota int64
	xattr string // value of user.a; "" when not set (the workload never sets "")
}

// under reports whether p is dir or below it.
func under(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// count is the number of inodes in the subtree at dir.
func (m model) count(dir string) int64 {
	var n int64
	for q := range m {
		if under(q, dir) {
			n++
		}
	}
	return n
}

// missing is how many names of p, from the last up, do not exist.
func (m model) missing(p string) int64 {
	var n int64
	for q := p; ; q = parentOf(q) {
		if _, ok := m[q]; ok {
			return n
		}
		n++
	}
}

// fits says whether k more inodes at dst (not counting quotas that also
// hold src, for a rename) stay within every name quota above dst.
func (m model) fits(dst, src string, k int64) bool {
	for a, e := range m {
		if e.quota > 0 && under(dst, a) && (src == "" || !under(src, a)) && m.count(a)+k > e.quota {
			return false
		}
	}
	return true
}

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
		e, ok := m["/"+strings.Join(names[:i], "/")]
		if !ok {
			return false
		}
		if !e.dir {
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

func (m model) mkdirs(p string, parents bool, now int64) Kind {
	if m.throughFile(p) {
		return NotDirectory
	}
	if e, ok := m[p]; ok {
		if e.dir {
			return 0
		}
		return Exists
	}
	if _, ok := m[parentOf(p)]; !ok && !parents {
		return NotFound
	}
	if !m.fits(p, "", m.missing(p)) {
		return QuotaExceeded
	}
	for q := p; ; q = parentOf(q) {
		if _, ok := m[q]; ok {
			break
		}
		m[q] = entry{dir: true, atime: now}
	}
	return 0
}

func (m model) create(p string, overwrite, parents bool, now int64) Kind {
	if m.throughFile(p) {
		return NotDirectory
	}
	if e, ok := m[p]; ok {
		if e.dir || !overwrite {
			return Exists
		}
		m[p] = entry{atime: now}
		return 0
	}
	if _, ok := m[parentOf(p)]; !ok && !parents {
		return NotFound
	}
	if !m.fits(p, "", m.missing(p)) {
		return QuotaExceeded
	}
	if k := m.mkdirs(parentOf(p), parents, now); k != 0 {
		panic(fmt.Sprintf("model: mkdirs of %s failed (%d) after its checks passed", parentOf(p), k))
	}
	m[p] = entry{atime: now}
	return 0
}

// setXAttr sets user.a with HDFS's CREATE/REPLACE flag rules.
func (m model) setXAttr(p, v string, flags XAttrFlag) Kind {
	if m.throughFile(p) {
		return NotDirectory
	}
	e, ok := m[p]
	switch {
	case !ok:
		return NotFound
	case e.xattr != "" && flags&XAttrReplace == 0, e.xattr == "" && flags&XAttrCreate == 0:
		return Precondition
	}
	e.xattr = v
	m[p] = e
	return 0
}

func (m model) removeXAttr(p string) Kind {
	if m.throughFile(p) {
		return NotDirectory
	}
	e, ok := m[p]
	switch {
	case !ok:
		return NotFound
	case e.xattr == "":
		return Precondition
	}
	e.xattr = ""
	m[p] = e
	return 0
}

// setQuota sets (q > 0) or clears (QuotaReset) a name quota.
func (m model) setQuota(p string, q int64) Kind {
	if m.throughFile(p) {
		return NotDirectory
	}
	e, ok := m[p]
	switch {
	case !ok:
		return NotFound
	case !e.dir:
		return NotDirectory
	case p == "/" && q == QuotaReset:
		return Invalid
	}
	e.quota = max(q, 0)
	m[p] = e
	return 0
}

// setTimes is setTimes by a superuser: only a missing path (or one through
// a file) fails.
func (m model) setTimes(p string, atime int64) Kind {
	if m.throughFile(p) {
		return NotDirectory
	}
	e, ok := m[p]
	if !ok {
		return NotFound
	}
	if atime != KeepTime {
		e.atime = atime
	}
	m[p] = e
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
	if e, ok := m[dst]; ok {
		if !e.dir {
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
	if !m.fits(dst, src, m.count(src)) {
		return QuotaExceeded
	}
	moved := model{}
	for q, e := range m {
		if q == src || strings.HasPrefix(q, src+"/") {
			moved[dst+q[len(src):]] = e
			delete(m, q)
		}
	}
	for q, e := range moved {
		m[q] = e
	}
	return 0
}

func (m model) dump() string {
	var lines []string
	for p, e := range m {
		lines = append(lines, fmt.Sprintf("%s %v atime=%d quota=%d x=%q", p, e.dir, e.atime, e.quota, e.xattr))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func dumpTree(t *Tree) string {
	var lines []string
	t.Walk(func(n *INode) bool {
		var quota int64
		if n.Quota() != nil {
			quota = max(n.Quota().NS, 0)
		}
		x := ""
		for _, a := range n.XAttrs() {
			if a.Name == "user.a" {
				x = string(a.Value)
			}
		}
		lines = append(lines, fmt.Sprintf("%s %v atime=%d quota=%d x=%q", n.Path(), n.IsDir(), n.ATime, quota, x))
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
	quotaFailures := 0
	defer func() {
		if quotaFailures == 0 && !t.Failed() {
			t.Error("no operation ran into a quota: the workload does not test quotas")
		}
	}()
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		tr := New(Config{Superuser: "hdfs", Permissions: true})
		m := model{"/": {dir: true}}
		for step := 0; step < 400; step++ {
			p, q := randPath(rng), randPath(rng)
			flag := rng.Intn(2) == 0
			var got error
			var want Kind
			var desc string
			now := int64(step)
			switch rng.Intn(8) {
			case 0:
				desc = fmt.Sprintf("mkdirs %s parents=%v", p, flag)
				got, want = tr.Mkdirs(root, p, 0o755, 0o755, flag, now), m.mkdirs(p, flag, now)
			case 1:
				desc = fmt.Sprintf("create %s overwrite=%v", p, flag)
				_, _, got = tr.Create(root, p, CreateOptions{Overwrite: flag, CreateParent: true}, now)
				want = m.create(p, flag, true, now)
			case 2:
				desc = fmt.Sprintf("delete %s recursive=%v", p, flag)
				_, got = tr.Delete(root, p, flag, int64(step))
				want = m.delete(p, flag)
			case 3:
				desc = fmt.Sprintf("rename %s %s", p, q)
				_, got = tr.Rename(root, p, q, int64(step))
				want = m.rename(p, q)
			case 4:
				atime, mtime := KeepTime, 1000+now
				if flag {
					atime = 5000 + now
				}
				desc = fmt.Sprintf("setTimes %s mtime=%d atime=%d", p, mtime, atime)
				var n *INode
				n, got = tr.SetTimes(root, p, mtime, atime)
				want = m.setTimes(p, atime)
				if got == nil && n.MTime != mtime {
					t.Fatalf("seed %d step %d: %s: mtime is %d", seed, step, desc, n.MTime)
				}
			case 5:
				q := QuotaReset
				if flag {
					q = int64(1 + rng.Intn(6))
				}
				desc = fmt.Sprintf("setQuota %s ns=%d", p, q)
				got, want = tr.SetQuota(root, p, q, QuotaDontSet), m.setQuota(p, q)
			case 6:
				flags := XAttrFlag(1 + rng.Intn(3)) // CREATE, REPLACE or both
				v := fmt.Sprintf("v%d", step)
				desc = fmt.Sprintf("setXAttr %s user.a=%s flags=%d", p, v, flags)
				got, want = tr.SetXAttr(root, p, "USER.a", []byte(v), flags), m.setXAttr(p, v, flags)
			case 7:
				desc = fmt.Sprintf("removeXAttr %s user.a", p)
				got, want = tr.RemoveXAttr(root, p, "user.a"), m.removeXAttr(p)
			}
			if want == QuotaExceeded {
				quotaFailures++
			}
			if kindOf(got) != want {
				t.Fatalf("seed %d step %d: %s: tree says %v (kind %d), model says kind %d\ntree:\n%s", seed, step, desc, got, kindOf(got), want, dumpTree(tr))
			}
			if dumpTree(tr) != m.dump() {
				t.Fatalf("seed %d step %d: after %s\ntree:\n%s\nmodel:\n%s", seed, step, desc, dumpTree(tr), m.dump())
			}
			checkQuotaUsage(t, tr)
			if tr.Files()+tr.Dirs() != len(m) {
				t.Fatalf("seed %d step %d: counts %d+%d, model has %d", seed, step, tr.Files(), tr.Dirs(), len(m))
			}
		}
	}
}

// checkQuotaUsage demands that every quota's cached usage equals a fresh
// count of its subtree.
func checkQuotaUsage(t *testing.T, tr *Tree) {
	t.Helper()
	tr.Walk(func(n *INode) bool {
		if n.Quota() == nil {
			return true
		}
		var ns, ds int64
		var walk func(*INode)
		walk = func(c *INode) {
			ns++
			ds += DiskCharge(c)
			for _, ch := range c.Children() {
				walk(ch)
			}
		}
		walk(n)
		if n.Quota().UsedNS != ns || n.Quota().UsedDS != ds {
			t.Fatalf("quota of %s caches usage %d inodes %d bytes; the subtree has %d and %d", n.Path(), n.Quota().UsedNS, n.Quota().UsedDS, ns, ds)
		}
		return true
	})
}
