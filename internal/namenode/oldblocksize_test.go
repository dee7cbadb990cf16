package namenode

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/journal"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/syncbuf"
)

// encodeFileAsOlderBuild is a file's image record as builds before the
// packed inode wrote it: the layout encodeINode still writes (the test
// checks they agree), with any replication and block size.
func encodeFileAsOlderBuild(n *namespace.INode, repl uint64, bs int64) []byte {
	var e enc
	e.b = append(e.b, recImageINode)
	e.u(n.ID)
	e.u(n.Parent.ID)
	e.s(n.Name)
	e.bool(false)
	e.u(uint64(n.Perm()))
	e.s(n.Owner())
	e.s(n.Group())
	e.i(n.MTime)
	e.i(n.ATime)
	e.u(0) // extended attributes
	e.u(repl)
	e.i(bs)
	e.bool(false) // closed
	e.u(uint64(len(n.Blocks)))
	for _, b := range n.Blocks {
		encRef(&e, blockRef{ID: b.ID, GS: b.GS, Len: b.NumBytes})
		e.u(uint64(b.State))
	}
	return e.b
}

// oldBuildState is a namespace with /old/big, a closed file of two
// blocks (1 MiB and 1000 bytes, replication 3) and /old/small.
func oldBuildState(t *testing.T) *fsState {
	t.Helper()
	s := &fsState{tree: namespace.New(namespace.Config{Superuser: "hdfs", Now: 1}), blocks: blockmap.New(), cache: newCacheDirs()}
	c := namespace.Caller{User: "alice", Trusted: true}
	for _, o := range []*editOp{
		{Kind: opMkdirs, Path: "/old", Perm: 0o755, ParentPerm: 0o755, CreateParent: true, User: "alice", Now: 2},
		{Kind: opCreate, Path: "/old/big", Perm: 0o644, Replication: 3, BlockSize: 1 << 20, User: "alice", Client: "c", Now: 3},
		{Kind: opAddBlock, FileID: 3, Block: blockRef{ID: 1 << 30, GS: 1000}},
		{Kind: opAddBlock, FileID: 3, Prev: &blockRef{ID: 1 << 30, GS: 1000, Len: 1 << 20}, Block: blockRef{ID: 1<<30 + 1, GS: 1001}},
		{Kind: opComplete, FileID: 3, Blocks: []blockRef{{1 << 30, 1000, 1 << 20}, {1<<30 + 1, 1001, 1000}}, Now: 4},
		{Kind: opCreate, Path: "/old/small", Perm: 0o644, Replication: 1, BlockSize: 1 << 20, User: "alice", Client: "c", Now: 5},
		{Kind: opComplete, FileID: 4, Now: 6},
	} {
		if _, err := s.apply(o, c); err != nil {
			t.Fatalf("%s: %v", o.Kind, err)
		}
	}
	return s
}

// oldImageRecords is s's image with /old/big's replication and block size
// set to repl and bs.
func oldImageRecords(t *testing.T, s *fsState, repl uint64, bs int64) [][]byte {
	t.Helper()
	big, err := s.tree.Lookup("/old/big")
	if err != nil {
		t.Fatal(err)
	}
	var now enc
	encodeINode(&now, big)
	if !bytes.Equal(now.b, encodeFileAsOlderBuild(big, uint64(big.Replication()), big.BlockSize())) {
		t.Fatal("encodeFileAsOlderBuild no longer writes what encodeINode writes; update it")
	}
	recs := imageRecords(t, s)
	for i, r := range recs {
		if bytes.Equal(r, now.b) {
			recs[i] = encodeFileAsOlderBuild(big, repl, bs)
			return recs
		}
	}
	t.Fatal("no image record of /old/big")
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
	if _, _, err := j.Load(&fsState{tree: namespace.New(namespace.Config{}), blocks: blockmap.New(), cache: newCacheDirs()}); err != nil {
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
	edit := &editOp{Kind: opCreate, Path: "/old/edit", Perm: 0o644, Replication: 2, BlockSize: huge, User: "bob", Client: "c9", Host: "h", Now: 7}
	if err := j.Sync(j.Append(edit.encode())); err != nil {
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
	var got []blockRef
	for _, lb := range lbs.GetLocations().GetBlocks() {
		b := lb.GetBlock()
		got = append(got, blockRef{ID: b.GetBlockId(), GS: b.GetGenerationStamp(), Len: b.GetNumBytes()})
	}
	if want := []blockRef{{1 << 30, 1000, 1 << 20}, {1<<30 + 1, 1001, 1000}}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
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
		err := (&fsState{tree: namespace.New(namespace.Config{}), blocks: blockmap.New(), cache: newCacheDirs()}).LoadImage(9, recs)
		if err == nil || !strings.Contains(err.Error(), "/old/big") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error naming /old/big", c.want, err)
		}
	}
}
