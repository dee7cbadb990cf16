package namespace

import (
	"testing"

	"smarth/internal/namenode/blockmap"
)

// TestQuotaMessagesAndSpace: HDFS's wording for both quotas; space counts
// a block being written at the full block size times replication; only a
// superuser sets quotas, only on directories.
func TestQuotaMessagesAndSpace(t *testing.T) {
	tr := newTree()
	mustMkdir(t, tr, root, "/q", 0o777)
	if err := tr.SetQuota(root, "/q", 2, QuotaDontSet); err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, tr, root, "/q/a", 0o755)
	err := tr.Mkdirs(root, "/q/b", 0o755, 0o755, false, 5)
	want := "mkdir /q/b: The NameSpace quota (directories and files) of directory /q is exceeded: quota=2 file count=3"
	if kindOf(err) != QuotaExceeded || err.Error() != want {
		t.Fatalf("mkdir over the name quota: %v\nwant %s", err, want)
	}
	if err := tr.SetQuota(Caller{User: "alice"}, "/q", 5, 5); kindOf(err) != Denied {
		t.Fatalf("setQuota by a non-superuser: %v", err)
	}
	f := mustCreate(t, tr, root, "/f")
	if err := tr.SetQuota(root, "/f", 5, 5); kindOf(err) != NotDirectory {
		t.Fatalf("setQuota on a file: %v", err)
	}
	if err := tr.SetQuota(root, "/", QuotaReset, QuotaDontSet); kindOf(err) != Invalid {
		t.Fatalf("clearing the root's name quota: %v", err)
	}

	if err := tr.SetQuota(root, "/q", QuotaReset, 4<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Rename(root, "/f", "/q/f", 6); err != nil {
		t.Fatal(err)
	}
	// 1 MiB blocks, replication 3: a block being written charges 3 MiB.
	tr.AddBlock(f, &blockmap.Block{ID: 1, State: blockmap.UnderConstruction})
	charge(f.Parent, nil, 0, DiskCharge(f))
	if q := tr.root.child("q").Quota(); q.UsedDS != 3<<20 {
		t.Fatalf("space used %d; want 3 MiB for one block being written", q.UsedDS)
	}
	err = tr.CheckSpace("addBlock", f, 3<<20)
	want = "addBlock /q/f: The DiskSpace quota of /q is exceeded: quota = 4194304 B = 4 MB but diskspace consumed = 6291456 B = 6 MB"
	if kindOf(err) != QuotaExceeded || err.Error() != want {
		t.Fatalf("second block over the space quota: %v\nwant %s", err, want)
	}
	if _, err := tr.SetReplication(root, "/q/f", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.SetReplication(root, "/q/f", 5); kindOf(err) != QuotaExceeded {
		t.Fatalf("setrep 5 (5 MiB > 4 MiB): %v", err)
	}
	if f.Replication() != 2 || tr.root.child("q").Quota().UsedDS != 2<<20 {
		t.Fatalf("after a refused setrep: replication %d, used %d", f.Replication(), tr.root.child("q").Quota().UsedDS)
	}
	// Moving the file out frees its space; deleting frees it too.
	if _, err := tr.Delete(root, "/q/f", false, 7); err != nil {
		t.Fatal(err)
	}
	if q := tr.root.child("q").Quota(); q.UsedDS != 0 || q.UsedNS != 2 {
		t.Fatalf("after delete: used %d inodes, %d bytes", q.UsedNS, q.UsedDS)
	}
}
