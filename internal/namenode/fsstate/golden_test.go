package fsstate

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/callid"
)

// The golden files pin the on-disk format of edit records and images as
// the build before the edit log's records got a type each (6b20b3b) wrote
// them: a change of the codec that alters a byte fails here, and the bytes
// of that build must still decode to the same state. Never regenerate them
// to make a codec change pass: old journals on disk do not change.
var updateGolden = flag.Bool("update-golden", false, "rewrite the golden edit-record and image files")

const goldenDir = "testdata/golden"

// goldenRecords has one record of every kind with every field it uses set
// to a value other than zero.
func goldenRecords() []Record {
	acl := []namespace.ACLEntry{{Type: namespace.ACLUser, Name: "bob", Perm: 5},
		{Scope: namespace.ScopeDefault, Type: namespace.ACLGroup, Name: "staff", Perm: 7}, {Type: namespace.ACLMask, Perm: 6}}
	return []Record{
		&Mkdirs{Path: "/a/b", Perm: 0o750, ParentPerm: 0o755, CreateParent: true, User: "alice", Now: 1700000000001},
		&Create{Path: "/a/f", Perm: 0o640, ParentPerm: 0o755, CreateParent: true, Overwrite: true, Replication: 3,
			BlockSize: 128 << 20, User: "alice", Client: "DFSClient_1", Host: "10.0.0.1", Now: 1700000000002},
		&AddBlock{FileID: 16387, Prev: &BlockRef{ID: 1<<30 + 7, GS: 1001, Len: 128 << 20}, Block: BlockRef{ID: 1<<30 + 8, GS: 1002}},
		&Complete{FileID: 16387, Blocks: []BlockRef{{1 << 30, 1000, 1 << 27}, {1<<30 + 1, 1003, 77}}, Now: 1700000000003},
		&AbandonBlock{FileID: 16387, BlockID: 1<<30 + 9},
		&AllocGS{GS: 123456},
		&UpdateBlock{Block: BlockRef{ID: 1<<30 + 5, GS: 2001, Len: 4097}},
		&Delete{Path: "/a/old", Recursive: true, Now: 1700000000004},
		&Rename{Path: "/a/f", Dst: "/b/g", Now: 1700000000005},
		&SetReplication{Path: "/b/g", Replication: 5},
		&SetPermission{Path: "/b/g", Perm: 0o1777},
		&SetOwner{Path: "/b/g", Owner: "carol", Group: "staff"},
		&CommitSync{FileID: 16388, Block: BlockRef{ID: 1<<30 + 3, GS: 3001, Len: 999}, Delete: true, Close: true, Now: 1700000000006},
		&CloseFile{FileID: 16389, Keep: 2, Now: 1700000000007},
		&AddCachePool{Pool: "hot", Owner: "alice", Group: "staff", Perm: 0o755, Limit: 1 << 30},
		&RemoveCachePool{Pool: "cold"},
		&AddCacheDirective{DirectiveID: 17, Path: "/data/in", Pool: "hot", Replication: 2},
		&RemoveCacheDirective{DirectiveID: 18},
		&SetTimes{Path: "/b/g", MTime: 1700000000008, ATime: 1700000000009},
		&SetQuota{Path: "/b", NSQuota: 1000, DSQuota: 1 << 40},
		&SetXAttr{Path: "/b/g", XAttr: namespace.XAttr{Name: "user.k", Value: []byte{0, 1, 0xff}}, Flags: namespace.XAttrCreate | namespace.XAttrReplace},
		&RemoveXAttr{Path: "/b/g", Name: "user.gone"},
		&Append{Path: "/b/g", Client: "DFSClient_2", Host: "10.0.0.2", Now: 1700000000010, User: "bob"},
		&Truncate{Path: "/b/h", NewLength: 1<<20 + 5, Client: "DFSClient_3", Host: "10.0.0.3", Block: BlockRef{ID: 1<<30 + 11, GS: 4001, Len: 1<<20 + 5}, Now: 1700000000011},
		&Concat{Path: "/b/t", Srcs: []string{"/b/s1", "/b/s2", "/b/s3"}, Now: 1700000000012},
		&ACL{Path: "/b", Op: namespace.ACLModify, Entries: acl},
		&SetStoragePolicy{Path: "/b", Policy: 12},
		&AllowSnapshot{Path: "/b"},
		&DisallowSnapshot{Path: "/c"},
		&CreateSnapshot{Path: "/b", Snapshot: "s0", Now: 1700000000013},
		&DeleteSnapshot{Path: "/b", Snapshot: "s1"},
		&RenameSnapshot{Path: "/b", Snapshot: "s0", NewName: "later"},
		&Rename2{Path: "/b/x", Dst: "/b/y", Overwrite: true, Now: 1700000000014},
		&SetTypeQuota{Path: "/b", StorageType: "SSD", Quota: 1 << 35},
		&Call{ID: callid.ID{Client: [16]byte{0xc1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0xc2}, Call: 1 << 33},
			User: "alice", Op: &Rename2{Path: "/b/y", Dst: "/b/z", Overwrite: true, Now: 1700000000015}},
		&RenewToken{Seq: 1<<62 + 3, Expiry: 1700086400016, Now: 1700000000016},
		&CancelToken{Seq: 1<<62 + 4, MaxDate: 1700604800017, Now: 1700000000017},
	}
}

// goldenHistory builds a small namespace with every feature an image
// holds: directories and files with blocks, an open file being appended
// to, a copy-on-truncate under way, snapshots (one holding a deleted
// file's blocks), ACLs, xattrs, quotas with a type quota, a storage policy,
// cache pools and directives.
func goldenHistory() []Record {
	const bs = 1 << 20
	return []Record{
		&Mkdirs{Path: "/d/sub", Perm: 0o755, ParentPerm: 0o755, CreateParent: true, User: "alice", Now: 1},
		&Create{Path: "/d/sub/f", Perm: 0o644, ParentPerm: 0o755, Replication: 2, BlockSize: bs, User: "alice", Client: "c", Host: "h", Now: 2},
		&AddBlock{FileID: 4, Block: BlockRef{ID: 100, GS: 1000}},
		&AddBlock{FileID: 4, Prev: &BlockRef{ID: 100, GS: 1000, Len: bs}, Block: BlockRef{ID: 101, GS: 1001}},
		&Complete{FileID: 4, Blocks: []BlockRef{{100, 1000, bs}, {101, 1001, 3000}}, Now: 3},
		&SetQuota{Path: "/d", NSQuota: 100, DSQuota: 1 << 40},
		&SetTypeQuota{Path: "/d", StorageType: "SSD", Quota: 1 << 35},
		&SetXAttr{Path: "/d/sub", XAttr: namespace.XAttr{Name: "user.k", Value: []byte{0, 1, 0xff}}, Flags: namespace.XAttrCreate},
		&ACL{Path: "/d", Op: namespace.ACLModify, Entries: []namespace.ACLEntry{{Type: namespace.ACLUser, Name: "bob", Perm: 5},
			{Scope: namespace.ScopeDefault, Type: namespace.ACLUser, Name: "bob", Perm: 7}}},
		&SetStoragePolicy{Path: "/d/sub", Policy: 12},
		&AllowSnapshot{Path: "/d"},
		&CreateSnapshot{Path: "/d", Snapshot: "s0", Now: 4},
		&Create{Path: "/d/g", Perm: 0o600, Replication: 3, BlockSize: bs, User: "alice", Client: "c", Host: "h", Now: 5},
		&AddBlock{FileID: 5, Block: BlockRef{ID: 102, GS: 1002}},
		&Complete{FileID: 5, Blocks: []BlockRef{{102, 1002, 500}}, Now: 6},
		&Delete{Path: "/d/sub/f", Recursive: true, Now: 7},
		&CreateSnapshot{Path: "/d", Snapshot: "s1", Now: 8},
		&RenameSnapshot{Path: "/d", Snapshot: "s1", NewName: "later"},
		&Append{Path: "/d/g", Client: "c2", Host: "h2", Now: 9, User: "bob"},
		&Create{Path: "/d/h", Perm: 0o644, Replication: 1, BlockSize: bs, User: "alice", Client: "c", Host: "h", Now: 10},
		&AddBlock{FileID: 6, Block: BlockRef{ID: 103, GS: 1003}},
		&Complete{FileID: 6, Blocks: []BlockRef{{103, 1003, 700}}, Now: 11},
		&CreateSnapshot{Path: "/d", Snapshot: "s2", Now: 12},
		&Truncate{Path: "/d/h", NewLength: 200, Client: "tr", Host: "h3", Block: BlockRef{ID: 200, GS: 1005}, Now: 13},
		&Mkdirs{Path: "/x", Perm: 0o700, ParentPerm: 0o755, User: "carol", Now: 14},
		&SetOwner{Path: "/x", Owner: "carol", Group: "staff"},
		&SetPermission{Path: "/x", Perm: 0o1777},
		&SetTimes{Path: "/x", MTime: 15, ATime: 16},
		&Rename{Path: "/x", Dst: "/y", Now: 17},
		&AddCachePool{Pool: "hot", Owner: "alice", Group: "g", Perm: 0o755, Limit: 1 << 30},
		&AddCachePool{Pool: "gone", Owner: "bob", Group: "g", Perm: 0o700, Limit: 10},
		&AddCacheDirective{DirectiveID: 1, Path: "/d", Pool: "hot", Replication: 2},
		&AddCacheDirective{DirectiveID: 2, Path: "/d/g", Pool: "gone", Replication: 1},
		&AddCacheDirective{DirectiveID: 3, Path: "/y", Pool: "hot", Replication: 1},
		&RemoveCachePool{Pool: "gone"},
		&RemoveCacheDirective{DirectiveID: 3},
	}
}

// checkGolden compares lines with the golden file name, or rewrites it
// under -update-golden.
func checkGolden(t *testing.T, name string, lines []string) {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	got := strings.Join(lines, "\n") + "\n"
	if *updateGolden {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s: the bytes written differ from the golden file\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

// readGolden returns the hex payloads of a golden file (the last field of
// each line).
func readGolden(t *testing.T, name string) [][]byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(goldenDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Fields(l)
		b, err := hex.DecodeString(f[len(f)-1])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, b)
	}
	return out
}

// TestGoldenRecords: every kind encodes to the golden bytes, and the
// golden bytes decode to a record that encodes to them again.
func TestGoldenRecords(t *testing.T) {
	var lines []string
	seen := map[Kind]bool{}
	for _, o := range goldenRecords() {
		seen[o.Kind()] = true
		lines = append(lines, fmt.Sprintf("%s %x", o.Kind(), Encode(o)))
	}
	for k := range kinds {
		if !seen[k] {
			t.Errorf("no golden record of %s", k)
		}
	}
	checkGolden(t, "records.hex", lines)
	for _, b := range readGolden(t, "records.hex") {
		o, err := Decode(b)
		if err != nil {
			t.Fatalf("golden record %x: %v", b, err)
		}
		if again := Encode(o); !bytes.Equal(again, b) {
			t.Errorf("%s: golden %x decodes and encodes to %x", o.Kind(), b, again)
		}
	}
}

// TestGoldenImage: the history's records and the image of the state they
// build are the golden bytes; replaying the golden records, and loading
// the golden image, each give a state whose image is the golden image.
func TestGoldenImage(t *testing.T) {
	src := newTestState()
	var edits []string
	for _, o := range goldenHistory() {
		if _, err := src.Apply(o, replayCaller(o)); err != nil {
			t.Fatalf("%s %+v: %v", o.Kind(), o, err)
		}
		edits = append(edits, fmt.Sprintf("%s %x", o.Kind(), Encode(o)))
	}
	checkGolden(t, "edits.hex", edits)
	var image []string
	for _, r := range imageRecords(t, src) {
		image = append(image, fmt.Sprintf("%c %x", r[0], r))
	}
	checkGolden(t, "image.hex", image)
	want := readGolden(t, "image.hex")
	wantDump := dumpFeatures(src)

	replayed := newTestState()
	for i, b := range readGolden(t, "edits.hex") {
		if err := replayed.ApplyEdit(uint64(i+1), b); err != nil {
			t.Fatalf("replay of golden edit %d: %v", i+1, err)
		}
	}
	loaded := newTestState()
	if err := loaded.LoadImage(36, want); err != nil {
		t.Fatalf("load of the golden image: %v", err)
	}
	for what, s := range map[string]*State{"replay of the golden edits": replayed, "load of the golden image": loaded} {
		if got := imageRecords(t, s); !equalRecords(got, want) {
			t.Errorf("%s: its image differs from the golden image", what)
		}
		if got := dumpFeatures(s); got != wantDump {
			t.Errorf("%s differs\n got:\n%s\nwant:\n%s", what, got, wantDump)
		}
		if got, want := dumpFS(s), dumpFS(src); got != want {
			t.Errorf("%s differs\n got:\n%s\nwant:\n%s", what, got, want)
		}
	}
}

func equalRecords(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
