package store

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"smarth/internal/datanode/store/vfs"
	"smarth/internal/testfs"
	"smarth/internal/units"
)

func putReplica(t *testing.T, s *Store, id uint64, data []byte) Replica {
	t.Helper()
	w, err := s.CreateRBW(id, 1001, bpc, false, 0)
	if err != nil {
		t.Fatalf("create blk_%d: %v", id, err)
	}
	writeAll(t, w, data, 64<<10)
	r, err := w.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// dirOf is the data directory whose finalized/ holds replica id.
func dirOf(t *testing.T, dirs []string, id uint64) string {
	t.Helper()
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "current", "finalized", "blk_"+strconv.FormatUint(id, 10))); err == nil {
			return d
		}
	}
	t.Fatalf("blk_%d is in none of %v", id, dirs)
	return ""
}

// Round robin spreads new replicas over the data directories in turn;
// reopened, the store finds each replica in its directory, and every
// directory carries the same datanode id.
func TestVolumesRoundRobinAndReopen(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	s, err := OpenVolumes(dirs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := pattern(10_000, 1)
	for id := uint64(1); id <= 4; id++ {
		putReplica(t, s, id, data)
	}
	for id := uint64(1); id <= 4; id++ {
		if got, want := dirOf(t, dirs, id), dirs[(id-1)%2]; got != want {
			t.Errorf("blk_%d in %s, want %s (round robin)", id, got, want)
		}
	}
	s2, err := OpenVolumes(dirs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s2.ID() != s.ID() || len(s2.Replicas()) != 4 {
		t.Fatalf("reopened: id %s (want %s), %d replicas (want 4)", s2.ID(), s.ID(), len(s2.Replicas()))
	}
	for id := uint64(1); id <= 4; id++ {
		if got := readAll(t, s2, id, 1001); string(got) != string(data) {
			t.Fatalf("blk_%d read back wrong after reopen", id)
		}
	}
	if other, _ := readID(vfs.OS, dirs[1]); other != s.ID() {
		t.Fatalf("second directory's VERSION has id %q, want %s", other, s.ID())
	}
	// A directory of another datanode is refused.
	stranger := t.TempDir()
	if err := writeID(vfs.OS, stranger, "someone-else"); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenVolumes([]string{dirs[0], stranger}, Options{}); err == nil || !strings.Contains(err.Error(), "someone-else") {
		t.Fatalf("opening a directory of another datanode: %v", err)
	}
}

// A volume at its reserve takes no new replica while another has room;
// with both at it, the refusal names both.
func TestFullVolumeTakesNoNewReplicas(t *testing.T) {
	small := testfs.Tmpfs(t, "4m")
	// A tmpfs too, not the test's temp dir: a 25% reserve on the host's
	// disk would make the result depend on how full that disk is.
	roomy := testfs.Tmpfs(t, "16m")
	s, err := OpenVolumes([]string{small, roomy}, Options{Reserve: units.Reserve{Percent: 25}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(small, "filler"), make([]byte, testfs.Free(t, small)-(512<<10)), 0o644); err != nil {
		t.Fatal(err)
	}
	for id := uint64(1); id <= 4; id++ {
		putReplica(t, s, id, pattern(1000, 2))
		if d := dirOf(t, []string{small, roomy}, id); d != roomy {
			t.Fatalf("blk_%d went to the full volume %s", id, d)
		}
	}
	s.opts.Reserve = units.Reserve{Bytes: 1 << 62}
	_, err = s.CreateRBW(9, 1001, bpc, false, 0)
	if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), small) || !strings.Contains(err.Error(), roomy) {
		t.Fatalf("create with every volume at its reserve: %v, want ErrNoSpace naming both directories", err)
	}
}

// A data directory that disappears fails its check: its replicas are
// returned as lost and forgotten, a write on it is stopped, and the other
// directory keeps serving and takes the new replicas.
func TestCheckVolumesTakesGoneDirectoryOutOfService(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	s, err := OpenVolumes(dirs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := pattern(5000, 3)
	for id := uint64(1); id <= 4; id++ {
		putReplica(t, s, id, data)
	}
	w, err := s.CreateRBW(5, 1001, bpc, false, 0) // round robin: dirs[0]
	if err != nil {
		t.Fatal(err)
	}
	if lost, failed := s.CheckVolumes(); len(lost)+len(failed) != 0 {
		t.Fatalf("healthy volumes: lost %v, failed %v", lost, failed)
	}
	if err := os.RemoveAll(dirs[0]); err != nil {
		t.Fatal(err)
	}
	lost, failed := s.CheckVolumes()
	var ids []uint64
	for _, r := range lost {
		ids = append(ids, r.BlockID)
	}
	if len(failed) != 1 || failed[0].Dir != dirs[0] || len(ids) != 3 || ids[0] != 1 || ids[1] != 3 || ids[2] != 5 {
		t.Fatalf("after removing %s: failed %v, lost %v; want that directory, blocks 1, 3 and 5", dirs[0], failed, ids)
	}
	select {
	case <-w.Done():
	default:
		t.Fatal("the write on the failed volume was not stopped")
	}
	if got := s.Dirs(); len(got) != 1 || got[0] != dirs[1] {
		t.Fatalf("in service: %v, want only %s", got, dirs[1])
	}
	for _, id := range []uint64{2, 4} {
		if got := readAll(t, s, id, 1001); string(got) != string(data) {
			t.Fatalf("blk_%d on the healthy volume read back wrong", id)
		}
	}
	if _, ok := s.Get(1); ok {
		t.Fatal("a replica of the failed volume is still listed")
	}
	putReplica(t, s, 6, data)
	if d := dirOf(t, dirs[1:], 6); d != dirs[1] {
		t.Fatalf("new replica in %s", d)
	}
	u, err := s.Usage()
	if err != nil || u.Volumes != 1 || u.Failed != 1 {
		t.Fatalf("usage %+v, %v: want 1 volume in service and 1 failed", u, err)
	}
}
