package store

import (
	"errors"
	"strings"
	"testing"

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
		func() (*Writer, error) { return s.CreateRBW(1, 1001, bpc, false) },
		func() (*Writer, error) { return s.CreateRBW(2, 1001, bpc, true) },
		func() (*Writer, error) { return s.CreateTransferRBW(3, 1001, bpc) },
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
	w, err := s2.CreateRBW(1, 1001, bpc, false)
	if err != nil {
		t.Fatalf("create without a reserve: %v", err)
	}
	_ = w.Abort()
}

// On a real 4 MiB file system with 1 MiB reserved, 512 KiB replicas are
// taken until the free space reaches the reserve and refused after that:
// the file system never fills, and the remaining space reported is the
// free space less the reserve.
func TestReserveKeepsSmallFileSystemFromFilling(t *testing.T) {
	dir := testfs.Tmpfs(t, "4m")
	s, err := Open(dir, Options{Reserve: units.Reserve{Percent: 25}})
	if err != nil {
		t.Fatal(err)
	}
	data := pattern(512<<10, 3)
	created := 0
	for id := uint64(1); ; id++ {
		w, err := s.CreateRBW(id, 1001, bpc, false)
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
	if created == 0 {
		t.Fatal("no replica fitted on an empty 4 MiB tmpfs with 1 MiB reserved")
	}
	if free <= u.Reserved-int64(len(data)) || free == 0 {
		t.Fatalf("free space %d went more than one replica below the reserve %d", free, u.Reserved)
	}
	if u.Remaining != max(free-u.Reserved, 0) {
		t.Fatalf("remaining %d, want free %d less reserve %d", u.Remaining, free, u.Reserved)
	}
}
