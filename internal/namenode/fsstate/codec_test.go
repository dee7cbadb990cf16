package fsstate

import (
	"reflect"
	"testing"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/journal"
	"smarth/internal/namenode/namespace"
)

// sampleOps has one record of every kind with every field it uses set.
func sampleOps() []Record {
	return []Record{
		&Mkdirs{Path: "/a/b", Perm: 0o755, ParentPerm: 0o755, CreateParent: true, User: "alice", Now: 1700000000000},
		&Create{Path: "/a/f", Perm: 0o644, ParentPerm: 0o755, CreateParent: true, Overwrite: true, Replication: 3,
			BlockSize: 64 << 20, User: "bob", Client: "c1", Host: "10.0.0.1", Now: -5},
		&AddBlock{FileID: 7, Prev: &BlockRef{ID: 1 << 30, GS: 1001, Len: 64 << 20}, Block: BlockRef{ID: 1<<30 + 1, GS: 1002}},
		&AddBlock{FileID: 7, Block: BlockRef{ID: 1 << 30, GS: 1001}},
		&Complete{FileID: 7, Blocks: []BlockRef{{1, 2, 3}, {4, 5, 6}}, Now: 9},
		&Complete{FileID: 8, Now: 9},
		&AbandonBlock{FileID: 7, BlockID: 99},
		&AllocGS{GS: 123456},
		&UpdateBlock{Block: BlockRef{ID: 5, GS: 6, Len: 7}},
		&Delete{Path: "/a", Recursive: true, Now: 3},
		&Rename{Path: "/a", Dst: "/b/c", Now: 4},
		&SetReplication{Path: "/f", Replication: 2},
		&SetPermission{Path: "/f", Perm: 0o1777},
		&SetOwner{Path: "/f", Owner: "o", Group: "g"},
		&CommitSync{FileID: 3, Block: BlockRef{ID: 1, GS: 2, Len: 3}, Delete: true, Close: true, Now: 8},
		&CloseFile{FileID: 3, Keep: 2, Now: 8},
		&AddCachePool{Pool: "hot", Owner: "o", Group: "g", Perm: 0o755, Limit: 1 << 30},
		&RemoveCachePool{Pool: "hot"},
		&AddCacheDirective{DirectiveID: 7, Path: "/data/in", Pool: "hot", Replication: 2},
		&RemoveCacheDirective{DirectiveID: 7},
		&SetTimes{Path: "/f", MTime: 1700000000000, ATime: -1},
		&SetQuota{Path: "/d", NSQuota: 100, DSQuota: -1},
		&SetTypeQuota{Path: "/d", StorageType: "DISK", Quota: 1 << 40},
		&SetXAttr{Path: "/f", XAttr: namespace.XAttr{Name: "user.k", Value: []byte{0, 1, 0xff}}, Flags: namespace.XAttrCreate | namespace.XAttrReplace},
		&RemoveXAttr{Path: "/f", Name: "user.k"},
		&Append{Path: "/f", Client: "c", Host: "h", Now: 5, User: "alice"},
		&Truncate{Path: "/f", NewLength: 1 << 40, Client: "c", Host: "h", Now: 6},
		&Concat{Path: "/d/t", Srcs: []string{"/d/s1", "/d/s2"}, Now: 7},
		&Rename2{Path: "/a", Dst: "/b", Overwrite: true, Now: 8},
		&RenewToken{Seq: 1 << 62, Expiry: 1700086400000, Now: 1700000000000},
		&CancelToken{Seq: 5, MaxDate: 1700604800000, Now: -1},
	}
}

// decoded keeps only what the encoding of o's kind carries (the other
// fields are zero after a round trip).
func TestEditOpRoundTrip(t *testing.T) {
	seen := map[Kind]bool{}
	for _, o := range append(sampleOps(), featureSampleOps()...) {
		seen[o.Kind()] = true
		got, err := Decode(Encode(o))
		if err != nil {
			t.Fatalf("%s: %v", o.Kind(), err)
		}
		if !reflect.DeepEqual(got, o) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", o.Kind(), got, o)
		}
	}
	for k := range kinds {
		if !seen[k] {
			t.Errorf("no sample of %s", k)
		}
	}
	if _, err := Decode([]byte{byte(kindConcat + 1)}); err == nil {
		t.Error("unknown op decoded")
	}
	if _, err := Decode(append(Encode(sampleOps()[0]), 0)); err == nil {
		t.Error("trailing byte accepted")
	}
}

// FuzzDecodeOp: every payload decodes to a record or an error, never a
// panic, and what decodes survives an encode.
func FuzzDecodeOp(f *testing.F) {
	for _, o := range append(sampleOps(), featureSampleOps()...) {
		f.Add(Encode(o))
	}
	f.Add([]byte{})
	f.Add([]byte{byte(kindComplete), 1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := Decode(b)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to a record that decodes the same
		// (varints may have had a longer, non-canonical form).
		again, err := Decode(Encode(o))
		if err != nil || !reflect.DeepEqual(again, o) {
			t.Fatalf("decode/encode/decode changed the record %x: %+v -> %+v (%v)", b, o, again, err)
		}
	})
}

func TestImageRoundTrip(t *testing.T) {
	src := newTestState()
	c := namespace.Caller{User: "alice", Trusted: true}
	ops := []Record{
		&Mkdirs{Path: "/d/e", Perm: 0o700, ParentPerm: 0o755, CreateParent: true, User: "alice", Now: 2},
		&Create{Path: "/d/f", Perm: 0o600, Replication: 2, BlockSize: 1 << 20, User: "alice", Client: "c", Host: "h", Now: 3},
		&AddBlock{FileID: 4, Block: BlockRef{ID: 1 << 30, GS: 1000}},
		&AddBlock{FileID: 4, Prev: &BlockRef{ID: 1 << 30, GS: 1000, Len: 1 << 20}, Block: BlockRef{ID: 1<<30 + 1, GS: 1001}},
		&Create{Path: "/g", Perm: 0o644, Replication: 3, BlockSize: 1 << 20, User: "bob", Client: "c2", Now: 4},
		&Complete{FileID: 5, Now: 5},
		&AddCachePool{Pool: "hot", Owner: "alice", Group: "g", Perm: 0o755},
		&AddCachePool{Pool: "gone", Owner: "bob", Limit: 10},
		&AddCacheDirective{DirectiveID: 1, Path: "/d", Pool: "hot", Replication: 2},
		&AddCacheDirective{DirectiveID: 2, Path: "/g", Pool: "gone", Replication: 1},
		&AddCacheDirective{DirectiveID: 3, Path: "/g", Pool: "hot", Replication: 1},
		&RemoveCachePool{Pool: "gone"},
		&RemoveCacheDirective{DirectiveID: 3},
	}
	for _, o := range ops {
		if _, err := src.Apply(o, c); err != nil {
			t.Fatalf("%s: %v", o.Kind(), err)
		}
	}
	// Through the journal: save the image, load it into an empty state.
	fs := journal.NewMemFS()
	j, _ := journal.Open(fs, "/m", nil)
	if _, _, err := j.Load(New(namespace.New(namespace.Config{}), blockmap.New(), nil)); err != nil {
		t.Fatal(err)
	}
	if err := j.SaveImage(src.Image(42)); err != nil {
		t.Fatal(err)
	}
	dst := New(namespace.New(namespace.Config{Superuser: "other"}), blockmap.New(), nil)
	j2, _ := journal.Open(fs, "/m", nil)
	if _, last, err := j2.Load(dst); err != nil || last != 42 {
		t.Fatalf("load image: last txid %d, %v", last, err)
	}
	recs := imageRecords(t, src)
	if a, b := dumpFS(src), dumpFS(dst); a != b {
		t.Fatalf("image round trip\nsrc:\n%s\ndst:\n%s", a, b)
	}
	if !reflect.DeepEqual(dst.cache, src.cache) || src.cache.lastID != 3 || len(src.cache.directives) != 1 {
		t.Errorf("cache pools and directives after the image round trip: %+v, want %+v", dst.cache, src.cache)
	}
	if dst.blocks.LastID() != src.blocks.LastID() || dst.blocks.LastGS() != src.blocks.LastGS() || dst.tree.LastID() != src.tree.LastID() {
		t.Error("counters differ after the image round trip")
	}
	// A damaged inode record is an error, not a panic.
	recs[2] = recs[2][:len(recs[2])-1]
	if err := (New(namespace.New(namespace.Config{}), blockmap.New(), nil)).LoadImage(42, recs); err == nil {
		t.Error("truncated inode record accepted")
	}
}

func FuzzDecodeINode(f *testing.F) {
	src := New(namespace.New(namespace.Config{Superuser: "hdfs"}), blockmap.New(), nil)
	src.Apply(&Create{Path: "/f", Perm: 0o644, Replication: 3, BlockSize: 512, Client: "c"}, namespace.Caller{Trusted: true})
	src.Apply(&AddBlock{FileID: 2, Block: BlockRef{ID: 1 << 30, GS: 1000}}, namespace.Caller{Trusted: true})
	// A directory with the newer image fields: quotas, times, xattrs.
	for _, o := range []Record{
		&Mkdirs{Path: "/d", Perm: 0o1777, ParentPerm: 0o755, CreateParent: true, User: "alice", Now: 7},
		&SetQuota{Path: "/d", NSQuota: 100, DSQuota: 1 << 30},
		&SetTimes{Path: "/f", MTime: 1700000000000, ATime: 1700000000001},
		&SetXAttr{Path: "/d", XAttr: namespace.XAttr{Name: "user.k", Value: []byte{0, 1, 0xff}}, Flags: namespace.XAttrCreate},
		&SetXAttr{Path: "/f", XAttr: namespace.XAttr{Name: "trusted.t"}, Flags: namespace.XAttrCreate},
	} {
		if _, err := src.Apply(o, namespace.Caller{Trusted: true}); err != nil {
			f.Fatalf("%s: %v", o.Kind(), err)
		}
	}
	for _, r := range imageRecords(f, src) {
		f.Add(r)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, n, blocks, _, err := decodeINode(b, imageVersion)
		if err == nil && (n == nil || (n.IsDir() && len(blocks) > 0)) {
			t.Fatalf("decoded an impossible inode: %+v", n)
		}
	})
}
