package store

import (
	"errors"
	"strings"
	"testing"

	"smarth/internal/datanode/store/vfs"
	"smarth/internal/testfs"
	"smarth/internal/units"
)

// A store whose reserve exceeds its free space reports nothing remaining
// and refuses new replicas, naming the data directory and du_reserved;
// without a reserve the same directory takes them.
func TestReserveRefusesNewReplicas(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{Reserve: units.Reserve{Bytes: 1 << 62}})
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if u.Remaining != 0 || u.Reserved != 1<<62 {
		t.Fatalf("usage with a reserve larger than the disk: remaining %d reserved %d, want 0 and %d", u.Remaining, u.Reserved, int64(1<<62))
	}
	for _, create := range []func() (*Writer, error){
		func() (*Writer, error) { return s.CreateRBW(1, 1001, bpc, false, 0) },
		func() (*Writer, error) { return s.CreateRBW(2, 1001, bpc, true, 0) },
		func() (*Writer, error) { return s.CreateTransferRBW(3, 1001, bpc, 0) },
	} {
		_, err := create()
		if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "du_reserved") {
			t.Fatalf("create on a volume below its reserve: %v, want ErrNoSpace naming %s and du_reserved", err, dir)
		}
	}
	if n := len(s.Replicas()); n != 0 {
		t.Fatalf("%d replicas after refused creates, want 0", n)
	}

	s2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s2.CreateRBW(1, 1001, bpc, false, 0)
	if err != nil {
		t.Fatalf("create without a reserve: %v", err)
	}
	_ = w.Abort()
}

// On a real 4 MiB file system with 1 MiB reserved, 512 KiB replicas
// created with their expected size are taken while one more fits above the
// reserve and refused after that: the free space never goes below the
// reserve, and the remaining space reported is the free space less it.
func TestReserveKeepsSmallFileSystemFromFilling(t *testing.T) {
	dir := testfs.Tmpfs(t, "4m")
	s, err := Open(dir, Options{Reserve: units.Reserve{Percent: 25}})
	if err != nil {
		t.Fatal(err)
	}
	data := pattern(512<<10, 3)
	created := 0
	for id := uint64(1); ; id++ {
		w, err := s.CreateRBW(id, 1001, bpc, false, int64(len(data)))
		if errors.Is(err, ErrNoSpace) {
			break
		}
		if err != nil {
			t.Fatalf("replica %d of 512 KiB on a 4 MiB tmpfs: %v (the reserve should have refused it before the disk filled)", id, err)
		}
		writeAll(t, w, data, 64<<10)
		if _, err := w.Finalize(); err != nil {
			t.Fatal(err)
		}
		created++
		if created > 8 {
			t.Fatalf("%d replicas of 512 KiB on a 4 MiB tmpfs and still not refused", created)
		}
	}
	free := testfs.Free(t, dir)
	u, err := s.Usage()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d replicas taken, then refused; free %d, reserved %d, remaining reported %d", created, free, u.Reserved, u.Remaining)
	if created < 5 {
		t.Fatalf("only %d replicas of 512 KiB fitted on an empty 4 MiB tmpfs with 1 MiB reserved", created)
	}
	if free < u.Reserved {
		t.Fatalf("free space %d went below the reserve %d", free, u.Reserved)
	}
	if u.Remaining != max(free-u.Reserved, 0) {
		t.Fatalf("remaining %d, want free %d less reserve %d", u.Remaining, free, u.Reserved)
	}
}

// Replicas being written are promised the room their expected size still
// needs: on a file system with room for three 1 MiB replicas above the
// reserve, a fourth started beside three open ones is refused, naming what
// is promised, even though the open ones have written nothing yet. A
// finished replica's space stays taken (now on disk, no longer promised);
// an aborted one gives its promise back. Created without an expected
// size, the same fourth replica is taken, as before.
func TestCreatePromisesRoomToReplicasBeingWritten(t *testing.T) {
	dir := testfs.Tmpfs(t, "5m")
	_, avail, err := vfs.OS.Statfs(dir)
	if err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	need := allocated(mib) + allocated(metaLen(mib, bpc))
	// Room for three such replicas and half of a fourth.
	s, err := Open(dir, Options{Reserve: units.Reserve{Bytes: avail - 3*need - need/2}})
	if err != nil {
		t.Fatal(err)
	}
	var open []*Writer
	for id := uint64(1); id <= 3; id++ {
		w, err := s.CreateRBW(id, 1001, bpc, false, mib)
		if err != nil {
			t.Fatalf("replica %d of three that fit: %v", id, err)
		}
		open = append(open, w)
	}
	_, err = s.CreateRBW(4, 1001, bpc, false, mib)
	if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "promised to replicas being written") {
		t.Fatalf("a fourth 1 MiB replica beside three being written: %v, want ErrNoSpace naming the promised space", err)
	}
	writeAll(t, open[0], pattern(mib, 1), 64<<10)
	open[0].SetVisible(mib)
	if _, err := open[0].Finalize(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateRBW(4, 1001, bpc, false, mib); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("a fourth replica after the first was written: %v, want ErrNoSpace (its space is on disk now)", err)
	}
	if err := open[1].Abort(); err != nil {
		t.Fatal(err)
	}
	w, err := s.CreateRBW(4, 1001, bpc, false, mib)
	if err != nil {
		t.Fatalf("a fourth replica after one being written was aborted: %v", err)
	}
	_ = w.Abort()
	w, err = s.CreateRBW(5, 1001, bpc, false, 0)
	if err != nil {
		t.Fatalf("a replica of unknown size with room left: %v", err)
	}
	_ = w.Abort()
	_ = open[2].Abort()
}
