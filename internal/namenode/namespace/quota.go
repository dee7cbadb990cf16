package namespace

import (
	"maps"
	"math"
	"math/bits"
	"slices"
	"strings"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/units"
)

// Quota sentinels, as HDFS's HdfsConstants: QuotaReset clears a quota,
// QuotaDontSet leaves it as it is.
const (
	QuotaReset   int64 = -1
	QuotaDontSet int64 = math.MaxInt64
)

// Quota is a directory's name quota (inodes in its subtree, itself
// included) and space quota (bytes times replication, a block being
// written counted at the full block size, as HDFS charges it), each
// QuotaReset when not set, and the cached usage they are checked against.
// Usage is kept up to date by every operation below the directory, so a
// check costs a walk up the path, not of the subtree.
type Quota struct {
	NS, DS         int64
	UsedNS, UsedDS int64
	// Types are the storage-type quotas set (HDFS's quota by storage
	// type), by StorageTypes name; nil when none. Their usage needs no
	// cache of its own: see TypeUsage.
	Types map[string]int64
}

// StorageTypes are Hadoop's StorageType names, in its enum order.
var StorageTypes = []string{"RAM_DISK", "SSD", "DISK", "ARCHIVE", "PROVIDED", "NVDIMM"}

// TypeUsage is what counts against a quota on storage type typ when a
// subtree consumes space bytes (times replication). smarth's datanodes
// have one storage type, DISK, where every replica goes whatever the
// storage policy, so DISK counts all of it and any other type nothing:
// a quota on SSD is never exceeded.
func TypeUsage(typ string, space int64) int64 {
	if typ == "DISK" {
		return space
	}
	return 0
}

// empty reports whether no quota of any kind is left.
func (q *Quota) empty() bool {
	return q.NS == QuotaReset && q.DS == QuotaReset && len(q.Types) == 0
}

// Space charges are bytes times replication, and their sums, computed
// saturating at the int64 bounds: a preferred block size has 48 bits and
// a replication 16, so the product of the two alone need not fit, and a
// charge that wrapped negative would pass every quota check (and one that
// wrapped in a directory's cached usage would let its subtree grow past
// its quota). HDFS computes the same products in a long, with factors
// capped lower (dfs.namenode.fs-limits.max-block-size, 32 GiB, for new
// files) but not for files older than that limit. verifyQuota refuses
// growth a usage cannot count, so saturated sums are never charged.

// Space is bytes stored repl times, saturated.
func Space(bytes int64, repl int) int64 {
	r := int64(repl)
	if bytes == 0 || r == 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(abs(bytes)), uint64(abs(r)))
	if hi != 0 || lo > math.MaxInt64 {
		if (bytes < 0) != (r < 0) {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	if (bytes < 0) != (r < 0) {
		return -int64(lo)
	}
	return int64(lo)
}

// AddSpace is a+b, saturated.
func AddSpace(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// abs is |v|, with MinInt64 taken as MaxInt64 (close enough to saturate).
func abs(v int64) int64 {
	switch {
	case v == math.MinInt64:
		return math.MaxInt64
	case v < 0:
		return -v
	}
	return v
}

// DiskCharge is what a file counts against space quotas: its blocks'
// lengths, a block being written at the full block size, times its
// replication (saturated: see Space). It is never negative (a negative
// length counts as 0), so the difference of two charges cannot overflow.
func DiskCharge(f *INode) int64 {
	if f.IsDir() {
		return 0
	}
	var b int64
	for _, blk := range f.Blocks {
		if blk.State == blockmap.UnderConstruction {
			b = AddSpace(b, f.BlockSize())
		} else {
			b = AddSpace(b, max(blk.NumBytes, 0))
		}
	}
	return Space(b, f.Replication())
}

// usage counts a subtree: inodes and space charge. A directory with a
// quota answers from its cache.
func usage(n *INode) (ns, ds int64) {
	if n.Quota() != nil {
		return n.Quota().UsedNS, n.Quota().UsedDS
	}
	if !n.IsDir() {
		return 1, DiskCharge(n)
	}
	ns = 1
	for _, c := range n.Children() {
		cn, cd := usage(c)
		ns, ds = ns+cn, AddSpace(ds, cd)
	}
	return ns, ds
}

// SetQuota sets or clears the name and space quotas of a directory (HDFS
// setQuota: QuotaReset clears one, QuotaDontSet keeps it). Only a superuser
// may. A quota below the current usage is allowed: it only stops growth.
func (t *Tree) SetQuota(c Caller, path string, ns, ds int64) error {
	const op = "setQuota"
	valid := func(q int64) bool { return q >= 0 || q == QuotaReset }
	if !valid(ns) || !valid(ds) {
		return errorf(op, path, Invalid, "illegal value for nsQuota or dsQuota: %d and %d", ns, ds)
	}
	n, err := t.Stat(c, op, path)
	if err != nil {
		return err
	}
	switch {
	case !t.isSuper(c):
		return errorf(op, n.Path(), Denied, "permission denied: only a superuser may set quotas (user %s)", c.User)
	case !n.IsDir():
		return errorf(op, n.Path(), NotDirectory, "%s is not a directory; quotas are set on directories", n.Path())
	case n == t.root && ns == QuotaReset:
		return errorf(op, n.Path(), Invalid, "cannot clear namespace quota on root")
	}
	q := Quota{NS: QuotaReset, DS: QuotaReset}
	if n.Quota() != nil {
		q = *n.Quota()
	}
	if ns != QuotaDontSet {
		q.NS = ns
	}
	if ds != QuotaDontSet {
		q.DS = ds
	}
	t.putQuota(n, q)
	return nil
}

// putQuota installs q on directory n, dropping it when it holds no quota
// and counting the subtree when n had none.
func (t *Tree) putQuota(n *INode, q Quota) {
	if q.empty() {
		n.SetQuota(nil)
		return
	}
	if n.Quota() == nil {
		q.UsedNS, q.UsedDS = usage(n)
	}
	n.SetQuota(&q)
}

// SetTypeQuota sets (q >= 0) or clears (QuotaReset) the quota of a
// directory on one storage type, as HDFS's setQuota with a StorageType:
// superuser only, RAM_DISK refused as a transient type, QuotaDontSet a
// no-op. A quota below the current usage is allowed: it only stops
// growth.
func (t *Tree) SetTypeQuota(c Caller, path, typ string, q int64) error {
	const op = "setQuota"
	if !slices.Contains(StorageTypes, typ) {
		return errorf(op, path, Invalid, "unknown storage type %q: want one of %s", typ, strings.Join(StorageTypes, ", "))
	}
	if typ == "RAM_DISK" {
		return errorf(op, path, Invalid, "Quota by storage type is not supported for %s", typ)
	}
	if q < 0 && q != QuotaReset {
		return errorf(op, path, Invalid, "illegal value for the %s quota: %d", typ, q)
	}
	n, err := t.Stat(c, op, path)
	if err != nil {
		return err
	}
	switch {
	case !t.isSuper(c):
		return errorf(op, n.Path(), Denied, "permission denied: only a superuser may set quotas (user %s)", c.User)
	case !n.IsDir():
		return errorf(op, n.Path(), NotDirectory, "%s is not a directory; quotas are set on directories", n.Path())
	case q == QuotaDontSet:
		return nil
	}
	nq := Quota{NS: QuotaReset, DS: QuotaReset}
	if n.Quota() != nil {
		nq = *n.Quota()
	}
	nq.Types = maps.Clone(nq.Types) // the old Quota may be shared no more
	if q == QuotaReset {
		delete(nq.Types, typ)
	} else {
		if nq.Types == nil {
			nq.Types = map[string]int64{}
		}
		nq.Types[typ] = q
	}
	if len(nq.Types) == 0 {
		nq.Types = nil
	}
	t.putQuota(n, nq)
	return nil
}

// verifyQuota checks that adding ns inodes and ds bytes of charge under
// dir fits every quota from dir up to (not including) stop, as HDFS's
// FSDirectory.verifyQuota does; the error is HDFS's
// NSQuotaExceededException or DSQuotaExceededException wording.
func verifyQuota(op, path string, dir, stop *INode, ns, ds int64) error {
	for a := dir; a != nil && a != stop; a = a.Parent {
		q := a.Quota()
		if q == nil {
			continue
		}
		if ns > 0 && q.NS >= 0 && q.UsedNS+ns > q.NS {
			return errorf(op, path, QuotaExceeded, "The NameSpace quota (directories and files) of directory %s is exceeded: quota=%d file count=%d",
				a.Path(), q.NS, q.UsedNS+ns)
		}
		if ds > 0 && q.UsedDS > math.MaxInt64-ds {
			// With or without a space quota: the usage could not
			// count it (see Space).
			return errorf(op, path, QuotaExceeded, "The DiskSpace consumed under %s would exceed %d B = %s, the most a quota can count: %d B consumed, %d B more needed",
				a.Path(), int64(math.MaxInt64), units.FormatHadoop(math.MaxInt64, "B", 2), q.UsedDS, ds)
		}
		if ds > 0 && q.DS >= 0 && q.UsedDS+ds > q.DS {
			return errorf(op, path, QuotaExceeded, "The DiskSpace quota of %s is exceeded: quota = %d B = %s but diskspace consumed = %d B = %s",
				a.Path(), q.DS, units.FormatHadoop(q.DS, "B", 2), q.UsedDS+ds, units.FormatHadoop(q.UsedDS+ds, "B", 2))
		}
		if ds > 0 {
			// StorageTypes order, as HDFS walks its EnumCounters.
			for _, typ := range StorageTypes {
				tq, ok := q.Types[typ]
				if used := TypeUsage(typ, q.UsedDS+ds); ok && used > tq && TypeUsage(typ, ds) > 0 {
					return errorf(op, path, QuotaExceeded, "Quota by storage type : %s on path : %s is exceeded. quota = %s but space consumed = %s",
						typ, a.Path(), units.FormatHadoop(tq, "B", 2), units.FormatHadoop(used, "B", 2))
				}
			}
		}
	}
	return nil
}

// charge adds ns inodes and ds bytes to the usage of every quota from dir
// up to (not including) stop.
func charge(dir, stop *INode, ns, ds int64) {
	for a := dir; a != nil && a != stop; a = a.Parent {
		if a.Quota() != nil {
			a.Quota().UsedNS += ns
			a.Quota().UsedDS = AddSpace(a.Quota().UsedDS, ds)
		}
	}
}

// CheckSpace checks that f may grow by ds bytes of charge (addBlock,
// setReplication).
func (t *Tree) CheckSpace(op string, f *INode, ds int64) error {
	return verifyQuota(op, f.Path(), f.Parent, nil, 0, ds)
}

// ChargeSpace records that f's charge changed by ds (block committed,
// abandoned, recovered, replication changed); it never fails, as usage
// that shrinks or was already checked cannot exceed anything new.
func (t *Tree) ChargeSpace(f *INode, ds int64) {
	if f.Parent != nil && ds != 0 {
		charge(f.Parent, nil, 0, ds)
	}
}

// moveQuota checks and moves the usage of s from the quotas above its
// parent to those above dparent, below their common ancestor (whose
// usage does not change), as HDFS's verifyQuotaForRename. The subtree is
// only counted when a quota is on the way.
func moveQuota(op, label string, s, dparent *INode) error {
	common := commonAncestor(s.Parent, dparent)
	if !quotaBetween(s.Parent, common) && !quotaBetween(dparent, common) {
		return nil
	}
	ns, ds := usage(s)
	if err := verifyQuota(op, label, dparent, common, ns, ds); err != nil {
		return err
	}
	charge(s.Parent, common, -ns, -ds)
	charge(dparent, common, ns, ds)
	return nil
}

func quotaBetween(from, stop *INode) bool {
	for a := from; a != nil && a != stop; a = a.Parent {
		if a.Quota() != nil {
			return true
		}
	}
	return false
}

// commonAncestor is the deepest directory above both a and b.
func commonAncestor(a, b *INode) *INode {
	seen := map[*INode]bool{}
	for p := a; p != nil; p = p.Parent {
		seen[p] = true
	}
	for p := b; p != nil; p = p.Parent {
		if seen[p] {
			return p
		}
	}
	return nil
}

// RecountQuotas recomputes the cached usage of every quota, bottom up; a
// namenode calls it after loading an image, which stores quotas but not
// their usage.
func (t *Tree) RecountQuotas() {
	var count func(n *INode) (ns, ds int64)
	count = func(n *INode) (ns, ds int64) {
		if !n.IsDir() {
			return 1, DiskCharge(n)
		}
		ns = 1
		for _, c := range n.Children() {
			cn, cd := count(c)
			ns, ds = ns+cn, AddSpace(ds, cd)
		}
		if n.Quota() != nil {
			n.Quota().UsedNS, n.Quota().UsedDS = ns, ds
		}
		return ns, ds
	}
	count(t.root)
}
