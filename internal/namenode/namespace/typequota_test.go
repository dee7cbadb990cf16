package namespace

import (
	"strings"
	"testing"

	"smarth/internal/namenode/blockmap"
)

// TestTypeQuota: a DISK quota counts the space consumed (bytes times
// replication, a block being written at full size) and stops growth with
// HDFS's QuotaByStorageTypeExceededException wording naming the quota's
// directory; a quota on another type is never exceeded; clearing with
// QuotaReset lifts it and drops the Quota once nothing is left; bad types,
// RAM_DISK, non-superusers and files are refused.
func TestTypeQuota(t *testing.T) {
	tr := newTree()
	mustMkdir(t, tr, root, "/q", 0o777)
	mustMkdir(t, tr, root, "/q/sub", 0o777)
	if err := tr.SetTypeQuota(root, "/q", "DISK", 4<<20); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetTypeQuota(root, "/q", "SSD", 1); err != nil {
		t.Fatal(err)
	}
	f := mustCreate(t, tr, root, "/q/sub/f") // 1 MiB blocks, replication 3
	if err := tr.CheckSpace("addBlock", f, 3<<20); err != nil {
		t.Fatalf("first block (3 MiB of 4): %v", err)
	}
	tr.AddBlock(f, &blockmap.Block{ID: 1, State: blockmap.UnderConstruction})
	tr.ChargeSpace(f, DiskCharge(f))
	err := tr.CheckSpace("addBlock", f, 3<<20)
	want := "addBlock /q/sub/f: Quota by storage type : DISK on path : /q is exceeded. quota = 4 MB but space consumed = 6 MB"
	if kindOf(err) != QuotaExceeded || err.Error() != want {
		t.Fatalf("second block over the DISK quota: %v\nwant %s", err, want)
	}
	if _, err := tr.SetReplication(root, "/q/sub/f", 5); kindOf(err) != QuotaExceeded {
		t.Fatalf("setrep 5 (5 MiB > 4 MiB DISK): %v", err)
	}
	s, err := tr.ContentSummary(root, "/q")
	if err != nil || s.TypeQuotas["DISK"] != 4<<20 || s.TypeQuotas["SSD"] != 1 || len(s.TypeQuotas) != 2 || s.Quota != QuotaReset || s.SpaceQuota != QuotaReset {
		t.Fatalf("summary %+v, %v", s, err)
	}
	if TypeUsage("DISK", 7) != 7 || TypeUsage("SSD", 7) != 0 {
		t.Fatal("DISK must count the space consumed, other types nothing")
	}

	for _, c := range []struct {
		who        Caller
		path, typ  string
		q          int64
		kind       Kind
		wantSubstr string
	}{
		{root, "/q", "FLASH", 5, Invalid, `unknown storage type "FLASH"`},
		{root, "/q", "RAM_DISK", 5, Invalid, "Quota by storage type is not supported for RAM_DISK"},
		{root, "/q", "DISK", -7, Invalid, "illegal value"},
		{Caller{User: "alice"}, "/q", "DISK", 5, Denied, "only a superuser"},
		{root, "/q/sub/f", "DISK", 5, NotDirectory, "not a directory"},
		{root, "/nope", "DISK", 5, NotFound, "/nope"},
	} {
		err := tr.SetTypeQuota(c.who, c.path, c.typ, c.q)
		if kindOf(err) != c.kind || err == nil || !strings.Contains(err.Error(), c.wantSubstr) {
			t.Errorf("SetTypeQuota(%s, %s, %d): %v; want %v with %q", c.path, c.typ, c.q, err, c.kind, c.wantSubstr)
		}
	}

	// Clearing the DISK quota lets the block in; the SSD one alone keeps
	// the Quota (and its usage cache); clearing that drops it.
	if err := tr.SetTypeQuota(root, "/q", "DISK", QuotaReset); err != nil {
		t.Fatal(err)
	}
	if err := tr.CheckSpace("addBlock", f, 3<<20); err != nil {
		t.Fatalf("after clearing DISK: %v", err)
	}
	q := tr.root.child("q").Quota()
	if q == nil || q.UsedDS != 3<<20 || len(q.Types) != 1 {
		t.Fatalf("after clearing DISK: quota %+v", q)
	}
	if err := tr.SetTypeQuota(root, "/q", "SSD", QuotaReset); err != nil {
		t.Fatal(err)
	}
	if q := tr.root.child("q").Quota(); q != nil {
		t.Fatalf("no quota left, yet %+v", q)
	}
	// A type quota set on a directory with usage counts it at once, and
	// clearing the space quota leaves the type quota in place.
	if err := tr.SetQuota(root, "/q", QuotaDontSet, 100<<20); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetTypeQuota(root, "/q", "DISK", 3<<20); err != nil {
		t.Fatal(err)
	}
	if err := tr.SetQuota(root, "/q", QuotaDontSet, QuotaReset); err != nil {
		t.Fatal(err)
	}
	if err := tr.CheckSpace("addBlock", f, 1); kindOf(err) != QuotaExceeded || !strings.Contains(err.Error(), "DISK on path : /q") {
		t.Fatalf("one byte past a full DISK quota: %v", err)
	}
}
