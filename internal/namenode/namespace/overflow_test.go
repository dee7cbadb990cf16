package namespace

import (
	"math"
	"strings"
	"testing"

	"smarth/internal/namenode/blockmap"
)

// TestSpaceSaturates: bytes x replication and sums of charges stop at the
// int64 bounds instead of wrapping.
func TestSpaceSaturates(t *testing.T) {
	for _, c := range []struct {
		bytes int64
		repl  int
		want  int64
	}{
		{0, MaxReplication, 0},
		{MaxBlockSize, 0, 0},
		{1 << 20, 3, 3 << 20},
		{-(1 << 20), 3, -(3 << 20)},
		{MaxBlockSize, 32767, MaxBlockSize * 32767}, // fits: HDFS's largest replication
		{MaxBlockSize, MaxReplication, math.MaxInt64},
		{1 << 62, 2, math.MaxInt64},
		{-(1 << 62), 2, math.MinInt64},
		{math.MinInt64, 1, math.MinInt64 + 1},
		{math.MaxInt64, -1, -math.MaxInt64},
	} {
		if got := Space(c.bytes, c.repl); got != c.want {
			t.Errorf("Space(%d, %d) = %d, want %d", c.bytes, c.repl, got, c.want)
		}
	}
	for _, c := range [][3]int64{
		{1, 2, 3},
		{math.MaxInt64, 1, math.MaxInt64},
		{math.MaxInt64 - 5, math.MaxInt64 - 5, math.MaxInt64},
		{math.MinInt64, -1, math.MinInt64},
		{math.MaxInt64, math.MinInt64, -1},
	} {
		if got := AddSpace(c[0], c[1]); got != c[2] {
			t.Errorf("AddSpace(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}

// TestLargestFileChargeDoesNotWrap: a file with the largest block size and
// replication an inode holds charges (2^48-1) x 65535 > 2^63 for a block
// being written. It used to wrap negative, so the space quota check of its
// next block passed whatever the quota; it now saturates and is refused,
// naming the path. Its usage stays as it was.
func TestLargestFileChargeDoesNotWrap(t *testing.T) {
	tr := newTree()
	mustMkdir(t, tr, root, "/q", 0o777)
	if err := tr.SetQuota(root, "/q", QuotaReset, 1<<40); err != nil {
		t.Fatal(err)
	}
	f, _, err := tr.Create(root, "/q/huge", CreateOptions{Perm: 0o644, Replication: MaxReplication, BlockSize: MaxBlockSize, Writer: Writer{Client: "c"}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	next := Space(f.BlockSize(), f.Replication()) // what addBlock checks
	if next <= 0 {
		t.Fatalf("a block being written charges %d", next)
	}
	err = tr.CheckSpace("addBlock", f, next)
	if kindOf(err) != QuotaExceeded || !strings.Contains(err.Error(), "addBlock /q/huge: The DiskSpace quota of /q is exceeded") {
		t.Fatalf("a 2^48 x 65535 block under a 1 TiB quota: %v", err)
	}
	tr.AddBlock(f, &blockmap.Block{ID: 1, State: blockmap.UnderConstruction})
	if got := DiskCharge(f); got != math.MaxInt64 {
		t.Errorf("charge of a block being written at 2^48 x 65535: %d, want it saturated at %d", got, int64(math.MaxInt64))
	}
	if q := tr.root.child("q").Quota(); q.UsedDS != 0 {
		t.Errorf("usage of /q %d after a refused block", q.UsedDS)
	}
}

// TestUsageCannotWrap: a directory whose usage is near 2^63 refuses growth
// the usage could not count, with or without a space quota, rather than
// wrap negative and pass every later check; content summaries saturate.
func TestUsageCannotWrap(t *testing.T) {
	for _, ds := range []int64{math.MaxInt64 - 1, QuotaReset} {
		tr := newTree()
		mustMkdir(t, tr, root, "/q", 0o777)
		if err := tr.SetQuota(root, "/q", 1000, ds); err != nil {
			t.Fatal(err)
		}
		var files []*INode
		for _, name := range []string{"/q/a", "/q/b"} {
			f, _, err := tr.Create(root, name, CreateOptions{Perm: 0o644, Replication: 32767, BlockSize: MaxBlockSize &^ 511, Writer: Writer{Client: "c"}}, 3)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		next := Space(files[0].BlockSize(), files[0].Replication()) // 2^63 - 2^48 - ...: fits
		if err := tr.CheckSpace("addBlock", files[0], next); err != nil {
			t.Fatalf("space quota %d: first block: %v", ds, err)
		}
		tr.AddBlock(files[0], &blockmap.Block{ID: 1, State: blockmap.UnderConstruction})
		tr.ChargeSpace(files[0], DiskCharge(files[0]))
		err := tr.CheckSpace("addBlock", files[1], next)
		if kindOf(err) != QuotaExceeded || !strings.Contains(err.Error(), "addBlock /q/b: The DiskSpace consumed under /q would exceed 9223372036854775807 B") {
			t.Errorf("space quota %d: a second block whose charge the usage cannot count: %v", ds, err)
		}
		if q := tr.root.child("q").Quota(); q.UsedDS != next {
			t.Errorf("space quota %d: usage %d, want %d", ds, q.UsedDS, next)
		}
		// Charged anyway (as a commit that cannot fail would), the usage
		// stops at the bound instead of wrapping negative.
		tr.AddBlock(files[1], &blockmap.Block{ID: 2, State: blockmap.UnderConstruction})
		tr.ChargeSpace(files[1], DiskCharge(files[1]))
		if q := tr.root.child("q").Quota(); q.UsedDS != math.MaxInt64 {
			t.Errorf("space quota %d: usage %d after an unchecked charge, want saturated", ds, q.UsedDS)
		}
		s, err := tr.ContentSummary(root, "/q")
		if err != nil || s.SpaceConsumed < 0 || s.Length < 0 {
			t.Errorf("space quota %d: summary %+v, %v", ds, s, err)
		}
		tr.RecountQuotas()
		if q := tr.root.child("q").Quota(); q.UsedDS != math.MaxInt64 {
			t.Errorf("space quota %d: recounted usage %d, want saturated", ds, q.UsedDS)
		}
	}
}

// TestSummarySaturates: two files of 2^62 bytes each, replication 3: the
// length and space consumed of their directory saturate, never negative.
func TestSummarySaturates(t *testing.T) {
	tr := newTree()
	for i, p := range []string{"/d/a", "/d/b"} {
		f := mustCreate(t, tr, root, p)
		tr.AddBlock(f, &blockmap.Block{ID: uint64(i + 1), NumBytes: 1 << 62, State: blockmap.Complete})
	}
	s, err := tr.ContentSummary(root, "/d")
	if err != nil {
		t.Fatal(err)
	}
	if s.Length != math.MaxInt64 || s.SpaceConsumed != math.MaxInt64 {
		t.Errorf("length %d space consumed %d, want both saturated at %d", s.Length, s.SpaceConsumed, int64(math.MaxInt64))
	}
}
