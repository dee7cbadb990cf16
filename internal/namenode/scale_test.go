package namenode

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/journal"
	"smarth/internal/namenode/namespace"
)

// TestScaleImage writes a namenode meta dir for the "Namenode scale"
// measurements of docs/benchmarks.md, when SMARTH_NN_SCALE_DIR is set (it
// is skipped otherwise): SMARTH_NN_SCALE_FILES files (default 1,000,000)
// of one complete block each, 1,000 per directory, saved as a checkpoint
// image by the journal's own SaveImage, then SMARTH_NN_SCALE_EDITS mkdirs
// (default 100,000) appended to the edit log after it. A namenode started
// on the directory loads the image and replays the edits, which is what a
// restart costs; building the namespace in memory takes seconds where
// creating it over RPC would take the better part of an hour.
func TestScaleImage(t *testing.T) {
	dir := os.Getenv("SMARTH_NN_SCALE_DIR")
	if dir == "" {
		t.Skip("set SMARTH_NN_SCALE_DIR (and SMARTH_NN_SCALE_FILES, SMARTH_NN_SCALE_EDITS) to build a scale image")
	}
	files := envInt(t, "SMARTH_NN_SCALE_FILES", 1_000_000)
	edits := envInt(t, "SMARTH_NN_SCALE_EDITS", 100_000)
	start := time.Now()
	j, err := journal.Open(journal.OS{}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	s := fsstate.New(namespace.New(namespace.Config{Superuser: cfg.Superuser, Supergroup: namespace.DefaultSupergroup, Permissions: true, Now: 1}),
		blockmap.New(), nil)
	hadImage, last, err := j.Load(s)
	if err != nil || hadImage || last != 0 {
		t.Fatalf("%s must be an empty directory (image %v, last txid %d, %v)", dir, hadImage, last, err)
	}
	fillScale(t, s, files)
	im := s.Image(0)
	if err := j.SaveImage(im); err != nil {
		t.Fatal(err)
	}
	t.Logf("image of %d files, %d dirs, %d blocks in %v", s.Tree().Files(), s.Tree().Dirs(), files, time.Since(start))
	start = time.Now()
	now := time.Now().UnixMilli()
	var tx uint64
	for i := range edits {
		op := &fsstate.Mkdirs{Path: fmt.Sprintf("/edits/e%03d/d%d", i/1000, i), Perm: 0o755, ParentPerm: 0o755,
			CreateParent: true, User: cfg.Superuser, Now: now}
		tx = j.Append(fsstate.Encode(op))
		if i%10_000 == 9_999 {
			if err := j.Sync(tx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := j.Sync(tx); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d mkdir edits after the image in %v", edits, time.Since(start))
}

// fillScale adds /scale/dNNNNN/fNNN files with one complete 64 MiB block
// each, through the same Restore and Add calls an image load makes.
func fillScale(t *testing.T, s *fsstate.State, files int) {
	id := uint64(namespace.RootID)
	next := func() uint64 { id++; return id }
	mkdir := func(parent uint64, name string) uint64 {
		n, err := namespace.NewINode(next(), name, true, 0o755, "hdfs", "supergroup", 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err = s.Tree().Restore(parent, n); err != nil {
			t.Fatal(err)
		}
		return n.ID
	}
	top := mkdir(namespace.RootID, "scale")
	var d uint64
	for i := range files {
		if i%1000 == 0 {
			d = mkdir(top, fmt.Sprintf("d%05d", i/1000))
		}
		n, err := namespace.NewINode(next(), fmt.Sprintf("f%03d", i%1000), false, 0o644, "hdfs", "supergroup", 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		n.SetReplication(3)
		n.SetBlockSize(64 << 20)
		b := &blockmap.Block{ID: uint64(1<<30 + i), GS: 1001, NumBytes: 64 << 20, State: blockmap.Complete, FileID: n.ID, Expected: 3}
		n.Blocks = []*blockmap.Block{b}
		if err = s.Tree().Restore(d, n); err != nil {
			t.Fatal(err)
		}
		s.Blocks().Add(b)
	}
	s.Tree().SetLastID(id)
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}

// TestScaleLoad loads the meta dir SMARTH_NN_SCALE_LOAD in process (a
// copy of it: loading may checkpoint), for profiling a restart with
// `go test -cpuprofile`.
func TestScaleLoad(t *testing.T) {
	dir := os.Getenv("SMARTH_NN_SCALE_LOAD")
	if dir == "" {
		t.Skip("set SMARTH_NN_SCALE_LOAD to a meta dir to profile its load")
	}
	cfg := DefaultConfig()
	cfg.MetaDir = dir
	start := time.Now()
	nn, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded in %v", time.Since(start))
	// The live heap per namespace object, the figure HDFS's rule of thumb
	// (about 150 bytes of heap per object) is about; resident memory adds
	// the collector's headroom on top.
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	nn.mu.RLock()
	objects := nn.state.Tree().Files() + nn.state.Tree().Dirs() + nn.state.Blocks().Len()
	nn.mu.RUnlock()
	t.Logf("live heap %d MiB for %d objects: %d bytes per object", ms.HeapAlloc>>20, objects, ms.HeapAlloc/uint64(objects))
	if f := os.Getenv("SMARTH_NN_SCALE_HEAPPROFILE"); f != "" {
		out, err := os.Create(f)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		if err := pprof.WriteHeapProfile(out); err != nil {
			t.Fatal(err)
		}
	}
	runtime.KeepAlive(nn)
	nn.unlockMeta()
}
