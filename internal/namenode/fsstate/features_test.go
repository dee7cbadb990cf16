package fsstate

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/journal"
	"smarth/internal/namenode/namespace"
)

func featureSampleOps() []Record {
	return []Record{
		sampleCall(),
		&ACL{Path: "/d", Op: namespace.ACLModify, Entries: []namespace.ACLEntry{
			{Scope: namespace.ScopeDefault, Type: namespace.ACLUser, Name: "bob", Perm: 7}, {Type: namespace.ACLMask, Perm: 5}}},
		&ACL{Path: "/d", Op: namespace.ACLRemoveAll},
		&SetStoragePolicy{Path: "/d", Policy: 2},
		&AllowSnapshot{Path: "/d"},
		&DisallowSnapshot{Path: "/d"},
		&CreateSnapshot{Path: "/d", Snapshot: "s0", Now: 1700000000000},
		&DeleteSnapshot{Path: "/d", Snapshot: "s0"},
		&RenameSnapshot{Path: "/d", Snapshot: "s0", NewName: "s1"},
	}
}

func TestFeatureOpRoundTrip(t *testing.T) {
	for _, o := range featureSampleOps() {
		got, err := Decode(Encode(o))
		if err != nil {
			t.Fatalf("%s: %v", o.Kind(), err)
		}
		if !reflect.DeepEqual(got, o) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", o.Kind(), got, o)
		}
		if b := Encode(o); len(b) > 2 {
			if _, err := Decode(b[:len(b)-1]); err == nil {
				t.Errorf("%s: a truncated record decoded", o.Kind())
			}
		}
	}
}

// dumpFeatures renders the live tree plus ACLs, policies, snapshots (their
// trees) and every block of the block map, to compare states.
func dumpFeatures(s *State) string {
	var lines []string
	t := s.tree
	line := func(n *namespace.INode) string {
		l := fmt.Sprintf("%s id=%d mode=%o %s:%s mtime=%d acl=%v policy=%d", n.Path(), n.ID, n.Perm(), n.Owner(), n.Group(), n.MTime, t.StoredACL(n), t.StoragePolicyOf(n))
		for _, b := range n.Blocks {
			l += fmt.Sprintf(" [%d gs=%d len=%d %v]", b.ID, b.GS, b.NumBytes, b.State)
		}
		return l
	}
	t.Walk(func(n *namespace.INode) bool {
		lines = append(lines, line(n))
		return true
	})
	t.EachSnapshot(func(dir *namespace.INode, snaps []namespace.SnapshotInfo) {
		lines = append(lines, "snapshottable "+dir.Path())
		for _, sn := range snaps {
			walkSnapshot(sn.Root, func(n *namespace.INode) { lines = append(lines, line(n)) })
		}
	})
	s.blocks.Each(func(b *blockmap.Block) bool {
		lines = append(lines, fmt.Sprintf("block %d gs=%d len=%d file=%d refs=%d", b.ID, b.GS, b.NumBytes, b.FileID, t.SnapshotRefs(b.ID)))
		return true
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestFeaturesSurviveReplayAndImage: ACLs, policies and snapshots (with a
// file deleted after a snapshot, whose blocks only the snapshot holds) come
// back identical from edit log replay and from an image.
func TestFeaturesSurviveReplayAndImage(t *testing.T) {
	alice := namespace.Caller{User: "alice", Trusted: true}
	ops := []Record{
		&Mkdirs{Path: "/d/sub", Perm: 0o755, ParentPerm: 0o755, CreateParent: true, User: "alice", Now: 1},
		&ACL{Path: "/d", Op: namespace.ACLModify, Entries: []namespace.ACLEntry{{Type: namespace.ACLUser, Name: "bob", Perm: 5},
			{Scope: namespace.ScopeDefault, Type: namespace.ACLGroup, Name: "eng", Perm: 7}}},
		&Create{Path: "/d/sub/f", Perm: 0o644, Replication: 2, BlockSize: 1 << 20, User: "alice", Client: "c", Now: 2},
		&AddBlock{FileID: 4, Block: BlockRef{ID: 100, GS: 1000}},
		&Complete{FileID: 4, Blocks: []BlockRef{{100, 1000, 4096}}, Now: 3},
		&SetStoragePolicy{Path: "/d/sub", Policy: 12},
		&AllowSnapshot{Path: "/d"},
		&CreateSnapshot{Path: "/d", Snapshot: "s0", Now: 4},
		&Delete{Path: "/d/sub/f", Now: 5},
		&Create{Path: "/d/sub/f", Perm: 0o600, Replication: 1, BlockSize: 1 << 20, User: "alice", Client: "c", Now: 6},
		&AddBlock{FileID: 5, Block: BlockRef{ID: 101, GS: 1001}},
		&Complete{FileID: 5, Blocks: []BlockRef{{101, 1001, 10}}, Now: 7},
		&CreateSnapshot{Path: "/d", Snapshot: "s1", Now: 8},
		&RenameSnapshot{Path: "/d", Snapshot: "s1", NewName: "later"},
		&CreateSnapshot{Path: "/d", Snapshot: "gone", Now: 9},
		&DeleteSnapshot{Path: "/d", Snapshot: "gone"},
		&ACL{Path: "/d/sub/f", Op: namespace.ACLSet, Entries: []namespace.ACLEntry{{Type: namespace.ACLUser, Perm: 6},
			{Type: namespace.ACLGroup, Perm: 0}, {Type: namespace.ACLUser, Name: "carol", Perm: 4}, {Type: namespace.ACLOther, Perm: 0}}},
	}
	fs := journal.NewMemFS()
	j, err := journal.Open(fs, "/m", nil)
	if err != nil {
		t.Fatal(err)
	}
	src := newTestState()
	if _, _, err := j.Load(New(namespace.New(namespace.Config{}), blockmap.New(), nil)); err != nil {
		t.Fatal(err)
	}
	if err := j.SaveImage(src.Image(0)); err != nil {
		t.Fatal(err)
	}
	var last uint64
	for _, o := range ops {
		actAs(o, "alice")
		if _, err := src.Apply(o, alice); err != nil {
			t.Fatalf("%s: %v", o.Kind(), err)
		}
		last = j.Append(Encode(o))
	}
	if err := j.Sync(last); err != nil {
		t.Fatal(err)
	}
	want := dumpFeatures(src)
	for _, must := range []string{"/d/.snapshot/s0/sub/f", "/d/.snapshot/later/sub/f", "block 100 gs=1000 len=4096 file=4 refs=1", "block 101 gs=1001 len=10 file=5 refs=1", "policy=12", "carol"} {
		if !strings.Contains(want, must) {
			t.Fatalf("state lacks %q:\n%s", must, want)
		}
	}
	load := func(what string) {
		t.Helper()
		dst := newTestState()
		j2, err := journal.Open(fs, "/m", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := j2.Load(dst); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := dumpFeatures(dst); got != want {
			t.Fatalf("%s differs\n got:\n%s\nwant:\n%s", what, got, want)
		}
		j2.Close()
	}
	load("replay of the edit log")
	if err := j.SaveImage(src.Image(last)); err != nil {
		t.Fatal(err)
	}
	j.Close()
	load("the image")
	// Damaged feature records are errors, not panics.
	recs := imageRecords(t, src)
	for i, r := range recs {
		if isFeatureRecord(r) && len(r) > 2 {
			bad := slices.Clone(recs)
			bad[i] = r[:len(r)-1]
			if err := (New(namespace.New(namespace.Config{}), blockmap.New(), nil)).LoadImage(last, bad); err == nil {
				t.Errorf("truncated %c record accepted", r[0])
			}
		}
	}
}
