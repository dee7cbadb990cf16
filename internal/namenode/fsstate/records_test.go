package fsstate

import (
	"errors"
	"math"
	"strings"
	"testing"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
)

// An append record written before the appending user was kept (it ends
// after the time) still decodes, with no user.
func TestAppendRecordWithoutUserDecodes(t *testing.T) {
	o := &Append{Path: "/f", Client: "c", Host: "h", Now: 5}
	b := Encode(o)
	old := b[:len(b)-1] // the empty user's length byte
	r, err := Decode(old)
	got, _ := r.(*Append)
	if err != nil || got == nil || got.User != "" || got.Client != "c" || got.Now != 5 {
		t.Fatalf("old append record: %+v, %v", got, err)
	}
}

// TestConcatRecordBounded: a concat record claiming more sources than it
// has bytes for is refused before anything is allocated (sampleOps has
// the round trips of the three records).
func TestConcatRecordBounded(t *testing.T) {
	bad := []byte{byte(kindConcat), 2, '/', 't', 0xff, 0xff, 0x03}
	if _, err := Decode(bad); err == nil {
		t.Fatal("a concat record with 65535 sources in 0 bytes decoded")
	}
}

// TestAddBlockChargeCannotWrap: the space an addBlock needs (a whole
// block being written, less what committing the previous block gives
// back) is block size x replication and a client-reported length x
// replication; either product or their sum used to wrap negative for
// large enough factors, and a negative need passes every quota check. It
// now saturates and the addBlock is refused naming the path, on the live
// path and on replay alike (both run apply).
func TestAddBlockChargeCannotWrap(t *testing.T) {
	s := newTestState()
	c := namespace.Caller{User: "hdfs", Trusted: true}
	run := func(o Record) error {
		_, err := s.Apply(o, c)
		return err
	}
	const bs = namespace.MaxBlockSize &^ 511
	for _, o := range []Record{
		&Mkdirs{Path: "/q", Perm: 0o777, ParentPerm: 0o755, Now: 2},
		&SetQuota{Path: "/q", NSQuota: namespace.QuotaDontSet, DSQuota: math.MaxInt64 - 1},
		// 32767 (max_replication's bound) x 2^48-512 fits in an int64...
		&Create{Path: "/q/a", Perm: 0o644, Replication: 32767, BlockSize: bs, Client: "c", Now: 3},
		&Create{Path: "/q/b", Perm: 0o644, Replication: 32767, BlockSize: bs, Client: "c", Now: 3},
		&AddBlock{FileID: 3, Block: BlockRef{ID: 1 << 30, GS: 1000}},
		// Replication 3, 1 MiB blocks, under a 1 TiB quota.
		&Mkdirs{Path: "/small", Perm: 0o777, ParentPerm: 0o755, Now: 2},
		&SetQuota{Path: "/small", NSQuota: namespace.QuotaDontSet, DSQuota: 1 << 40},
		&Create{Path: "/small/f", Perm: 0o644, Replication: 3, BlockSize: 1 << 20, Client: "c", Now: 3},
		&AddBlock{FileID: 6, Block: BlockRef{ID: 1<<30 + 1, GS: 1001}},
	} {
		if err := run(o); err != nil {
			t.Fatalf("%s: %v", o.Kind(), err)
		}
	}
	quota := func(p string) *namespace.Quota {
		d, _ := s.tree.Lookup(p)
		return d.Quota()
	}
	usedQ := quota("/q").UsedDS
	if usedQ != namespace.Space(bs, 32767) {
		t.Fatalf("/q uses %d, want one block being written, %d", usedQ, namespace.Space(bs, 32767))
	}
	// ...but two of them do not: the sum used to wrap negative and pass
	// the quota, and the usage went negative.
	err := run(&AddBlock{FileID: 4, Block: BlockRef{ID: 1<<30 + 2, GS: 1002}})
	if err == nil || !strings.Contains(err.Error(), "/q/b") || !strings.Contains(err.Error(), "would exceed") {
		t.Errorf("a second 2^63-byte block under /q: %v; want a refusal naming /q/b", err)
	}
	if got := quota("/q").UsedDS; got != usedQ {
		t.Errorf("/q uses %d after a refused addBlock, want %d", got, usedQ)
	}
	// A client reporting an absurd length for the block it finished:
	// (2^63-1 - 1 MiB) x 3 used to wrap.
	usedS := quota("/small").UsedDS
	err = run(&AddBlock{FileID: 6, Prev: &BlockRef{ID: 1<<30 + 1, GS: 1001, Len: math.MaxInt64}, Block: BlockRef{ID: 1<<30 + 3, GS: 1003}})
	if err == nil || !strings.Contains(err.Error(), "/small/f") || !strings.Contains(err.Error(), "quota") {
		t.Errorf("addBlock after a previous block of 2^63-1 bytes: %v; want a quota refusal naming /small/f", err)
	}
	if got := quota("/small").UsedDS; got != usedS || got < 0 {
		t.Errorf("/small uses %d after a refused addBlock, want %d", got, usedS)
	}
}

// TestFileDataKeepsQuotaUsage: after append (a reopened partial block
// charged at the full block size), its close, truncates (on and off a
// block boundary, and the recovery's commit) and a concat, every quota's
// cached usage equals a fresh count; an append over the space quota is
// refused and changes nothing.
func TestFileDataKeepsQuotaUsage(t *testing.T) {
	const bs = 1 << 20
	s := newTestState()
	c := namespace.Caller{User: "hdfs", Trusted: true}
	apply := func(o Record) error {
		t.Helper()
		_, err := s.Apply(o, c)
		return err
	}
	must := func(o Record) {
		t.Helper()
		if err := apply(o); err != nil {
			t.Fatalf("%s %+v: %v", o.Kind(), o, err)
		}
	}
	// file writes path with blocks of the given lengths and closes it.
	nextBlock := uint64(1 << 30)
	file := func(path string, lengths ...int64) *namespace.INode {
		must(&Create{Path: path, Perm: 0o644, ParentPerm: 0o755, CreateParent: true, Replication: 3, BlockSize: bs, User: "hdfs", Client: "w", Now: 2})
		f, _ := s.tree.Lookup(path)
		var prev *BlockRef
		for _, n := range lengths {
			nextBlock++
			must(&AddBlock{FileID: f.ID, Prev: prev, Block: BlockRef{ID: nextBlock, GS: 1000}})
			prev = &BlockRef{ID: nextBlock, GS: 1000, Len: n}
		}
		var refs []BlockRef
		if prev != nil {
			refs = []BlockRef{*prev}
		}
		must(&Complete{FileID: f.ID, Blocks: refs, Now: 3})
		return f
	}
	check := func(when string) {
		t.Helper()
		s.tree.Walk(func(n *namespace.INode) bool {
			if n.Quota() == nil {
				return true
			}
			var ns, ds int64
			var walk func(*namespace.INode)
			walk = func(x *namespace.INode) {
				ns++
				ds += namespace.DiskCharge(x)
				for _, ch := range x.Children() {
					walk(ch)
				}
			}
			walk(n)
			if n.Quota().UsedNS != ns || n.Quota().UsedDS != ds {
				t.Fatalf("%s: quota of %s caches %d inodes %d bytes; the subtree has %d and %d", when, n.Path(), n.Quota().UsedNS, n.Quota().UsedDS, ns, ds)
			}
			return true
		})
	}
	must(&Mkdirs{Path: "/q", Perm: 0o755, User: "hdfs", Now: 1})
	must(&SetQuota{Path: "/q", NSQuota: 100, DSQuota: 10 * bs})
	a := file("/q/a", bs, 1000)
	check("written")
	must(&Append{Path: "/q/a", Client: "app", Host: "h", Now: 4})
	check("reopened for append")
	if want := int64(3 * 2 * bs); namespace.DiskCharge(a) != want {
		t.Fatalf("charge of a file with a reopened partial block: %d, want %d", namespace.DiskCharge(a), want)
	}
	last := a.Blocks[1]
	must(&Complete{FileID: a.ID, Blocks: []BlockRef{{ID: last.ID, GS: 1001, Len: 5000}}, Now: 5})
	check("append closed")
	// With the quota just above the usage, an append would charge the
	// rest of a partial block, over the limit.
	file("/q/b", 10)
	q, _ := s.tree.Lookup("/q")
	must(&SetQuota{Path: "/q", NSQuota: namespace.QuotaDontSet, DSQuota: q.Quota().UsedDS + 1})
	err := apply(&Append{Path: "/q/b", Client: "app", Host: "h", Now: 6})
	if err == nil || !isQuotaError(err) {
		t.Fatalf("append over the space quota: %v", err)
	}
	if b, _ := s.tree.Lookup("/q/b"); b.Writer() != nil || b.Blocks[0].State != blockmap.Complete {
		t.Fatal("the refused append reopened the file")
	}
	check("refused append")
	must(&SetQuota{Path: "/q", NSQuota: namespace.QuotaDontSet, DSQuota: 10 * bs})
	must(&Truncate{Path: "/q/a", NewLength: bs, Client: "tr", Host: "h", Now: 7})
	check("truncate on a boundary")
	must(&Truncate{Path: "/q/a", NewLength: 100, Client: "tr", Host: "h", Now: 8})
	check("truncate inside a block")
	must(&CommitSync{FileID: a.ID, Block: BlockRef{ID: a.Blocks[0].ID, GS: 1002, Len: 100}, Now: 9})
	must(&CloseFile{FileID: a.ID, Keep: 1, Now: 9})
	check("truncate recovered")
	file("/q/t", bs)
	file("/q/s", 300)
	must(&Concat{Path: "/q/t", Srcs: []string{"/q/s"}, Now: 10})
	check("concat")
	if tf, _ := s.tree.Lookup("/q/t"); tf.Length() != bs+300 || tf.Blocks[1].FileID != tf.ID {
		t.Fatalf("concat target: length %d, moved block's file %d", tf.Length(), tf.Blocks[1].FileID)
	}
}

func isQuotaError(err error) bool {
	var ne *namespace.Error
	return errors.As(err, &ne) && ne.Kind == namespace.QuotaExceeded
}
