package namenode

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"strings"
	"testing"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/journal"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/syncbuf"
)

// encodeFileAsOlderBuild is a file's image record as builds before the
// packed inode wrote it (uvarints, zigzag varints, length-prefixed
// strings): the layout the state's image still writes (oldImageRecords
// checks they agree), with any replication and block size.
func encodeFileAsOlderBuild(n *namespace.INode, repl uint64, bs int64) []byte {
	b := []byte{'I'}
	str := func(s string) { b = append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	b = binary.AppendUvarint(b, n.ID)
	b = binary.AppendUvarint(b, n.Parent.ID)
	str(n.Name)
	b = append(b, 0) // not a directory
	b = binary.AppendUvarint(b, uint64(n.Perm()))
	str(n.Owner())
	str(n.Group())
	b = binary.AppendVarint(b, n.MTime)
	b = binary.AppendVarint(b, n.ATime)
	b = binary.AppendUvarint(b, 0) // extended attributes
	b = binary.AppendUvarint(b, repl)
	b = binary.AppendVarint(b, bs)
	b = append(b, 0) // closed
	b = binary.AppendUvarint(b, uint64(len(n.Blocks)))
	for _, blk := range n.Blocks {
		b = binary.AppendUvarint(b, blk.ID)
		b = binary.AppendUvarint(b, blk.GS)
		b = binary.AppendVarint(b, blk.NumBytes)
		b = binary.AppendUvarint(b, uint64(blk.State))
	}
	return b
}

// cappedBlockSize is what a block size above 48 bits loads as.
const cappedBlockSize = namespace.MaxBlockSize &^ 511

// oldBuildState is a namespace with /old/big, a closed file of two
// blocks (1 MiB and 1000 bytes, replication 3) and /old/small.
func oldBuildState(t *testing.T) *fsstate.State {
	t.Helper()
	s := fsstate.New(namespace.New(namespace.Config{Superuser: "hdfs", Now: 1}), blockmap.New(), nil)
	c := namespace.Caller{User: "alice", Trusted: true}
	for _, o := range []fsstate.Record{
		&fsstate.Mkdirs{Path: "/old", Perm: 0o755, ParentPerm: 0o755, CreateParent: true, User: "alice", Now: 2},
		&fsstate.Create{Path: "/old/big", Perm: 0o644, Replication: 3, BlockSize: 1 << 20, User: "alice", Client: "c", Now: 3},
		&fsstate.AddBlock{FileID: 3, Block: fsstate.BlockRef{ID: 1 << 30, GS: 1000}},
		&fsstate.AddBlock{FileID: 3, Prev: &fsstate.BlockRef{ID: 1 << 30, GS: 1000, Len: 1 << 20}, Block: fsstate.BlockRef{ID: 1<<30 + 1, GS: 1001}},
		&fsstate.Complete{FileID: 3, Blocks: []fsstate.BlockRef{{ID: 1 << 30, GS: 1000, Len: 1 << 20}, {ID: 1<<30 + 1, GS: 1001, Len: 1000}}, Now: 4},
		&fsstate.Create{Path: "/old/small", Perm: 0o644, Replication: 1, BlockSize: 1 << 20, User: "alice", Client: "c", Now: 5},
		&fsstate.Complete{FileID: 4, Now: 6},
	} {
		if _, err := s.Apply(o, c); err != nil {
			t.Fatalf("%s: %v", o.Kind(), err)
		}
	}
	return s
}

// oldImageRecords is s's image with /old/big's replication and block size
// set to repl and bs.
func oldImageRecords(t *testing.T, s *fsstate.State, repl uint64, bs int64) [][]byte {
	t.Helper()
	big, err := s.Tree().Lookup("/old/big")
	if err != nil {
		t.Fatal(err)
	}
	now := encodeFileAsOlderBuild(big, uint64(big.Replication()), big.BlockSize())
	var recs [][]byte
	s.EachImageRecord(func(b []byte) { recs = append(recs, bytes.Clone(b)) })
	for i, r := range recs {
		if bytes.Equal(r, now) {
			recs[i] = encodeFileAsOlderBuild(big, repl, bs)
			return recs
		}
	}
	t.Fatal("no image record of /old/big is what encodeFileAsOlderBuild writes; update it")
	return nil
}

// TestOlderBuildsBlockSizeLoadsCapped: an image and an edit log written
// by an older build with block sizes above 48 bits (it accepted any) load
// into a real namenode: the sizes are capped at 2^48-512, each file is
// named in a warning with its old size, and no block, length or other
// file changes. A checkpoint keeps the cap, and the next start warns no
// more.
func TestOlderBuildsBlockSizeLoadsCapped(t *testing.T) {
	const huge = 1 << 50
	cfg := testConfig(t)
	src := oldBuildState(t)
	j, err := journal.Open(journal.OS{}, cfg.MetaDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := j.Load(fsstate.New(namespace.New(namespace.Config{}), blockmap.New(), nil)); err != nil {
		t.Fatal(err)
	}
	tx, err := j.Roll()
	if err != nil {
		t.Fatal(err)
	}
	im := journal.NewImage(tx)
	for _, r := range oldImageRecords(t, src, 3, huge+512) {
		im.Add(r)
	}
	if err := j.SaveImage(im); err != nil {
		t.Fatal(err)
	}
	// And an older build's create, logged after the image.
	edit := &fsstate.Create{Path: "/old/edit", Perm: 0o644, Replication: 2, BlockSize: huge, User: "bob", Client: "c9", Host: "h", Now: 7}
	if err := j.Sync(j.Append(fsstate.Encode(edit))); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}

	var log syncbuf.Buffer
	nn, err := New(cfg, slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatalf("an older build's image and edits do not load: %v", err)
	}
	if err := nn.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nn.Close() })
	c := dial(t, nn.Addr(), "hdfs")
	for path, want := range map[string]int64{"/old/big": cappedBlockSize, "/old/edit": cappedBlockSize, "/old/small": 1 << 20} {
		st, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		if got := st.GetStatus().GetBlockSize(); got != want {
			t.Errorf("%s: block size %d, want %d", path, got, want)
		}
	}
	st, _ := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: "/old/big"})
	if fs := st.GetStatus(); fs.GetLength() != 1<<20+1000 || fs.GetReplication() != 3 || fs.GetOwner() != "alice" {
		t.Errorf("/old/big changed beyond its block size: length %d replication %d owner %s", fs.GetLength(), fs.GetReplication(), fs.GetOwner())
	}
	lbs, err := c.cp.GetBlockLocations(c.ctx(), &dfspb.GetBlockLocationsRequest{Path: "/old/big"})
	if err != nil {
		t.Fatal(err)
	}
	var got []fsstate.BlockRef
	for _, lb := range lbs.GetLocations().GetBlocks() {
		b := lb.GetBlock()
		got = append(got, fsstate.BlockRef{ID: b.GetBlockId(), GS: b.GetGenerationStamp(), Len: b.GetNumBytes()})
	}
	if want := []fsstate.BlockRef{{ID: 1 << 30, GS: 1000, Len: 1 << 20}, {ID: 1<<30 + 1, GS: 1001, Len: 1000}}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("/old/big blocks after the load: %+v, want %+v", got, want)
	}
	for _, want := range []string{
		"path=/old/big", "block_size=1125899906843136", // 2^50+512
		"path=/old/edit", "block_size=1125899906842624", // 2^50
		"capped_to=281474976710144",
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the load's log does not say %q:\n%s", want, log.String())
		}
	}
	const capped = "block size of a file from an older build"
	if n := strings.Count(log.String(), capped); n != 2 {
		t.Errorf("%d warnings, want one per file:\n%s", n, log.String())
	}
	if err := nn.checkpoint(); err != nil {
		t.Fatal(err)
	}
	before := dumpState(nn)
	nn.Close()

	var log2 syncbuf.Buffer
	nn2, err := New(cfg, slog.New(slog.NewTextHandler(&log2, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer nn2.Close()
	if after := dumpState(nn2); after != before {
		t.Errorf("the capped namespace changed across a checkpoint and restart\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if strings.Contains(log2.String(), capped) {
		t.Errorf("a restart from the capped image still warns:\n%s", log2.String())
	}
}

// TestBadFileRecordNamesPath: an inode record that cannot be loaded (a
// negative block size, a replication above 16 bits) fails the load with
// the file's path.
func TestBadFileRecordNamesPath(t *testing.T) {
	src := oldBuildState(t)
	for _, c := range []struct {
		repl uint64
		bs   int64
		want string
	}{
		{3, -512, "negative block size -512"},
		{namespace.MaxReplication + 1, 1 << 20, "replication 65536 is above 65535"},
	} {
		recs := oldImageRecords(t, src, c.repl, c.bs)
		err := (fsstate.New(namespace.New(namespace.Config{}), blockmap.New(), nil)).LoadImage(9, recs)
		if err == nil || !strings.Contains(err.Error(), "/old/big") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error naming /old/big", c.want, err)
		}
	}
}
