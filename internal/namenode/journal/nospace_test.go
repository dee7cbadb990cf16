package journal

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"smarth/internal/testfs"
)

// On a real file system with less room than one preallocation chunk, a
// group commit fails with ENOSPC before any record is written: Sync says
// so, naming the directory, the journal is not broken for good (Err stays
// nil), records appended meanwhile queue behind the held ones, and once
// space is freed the next Sync writes them all. Reopened, the log holds
// every record in order and nothing torn.
func TestJournalOutOfSpaceHoldsRecordsUntilSpaceReturns(t *testing.T) {
	for _, mode := range []struct {
		name string
		fs   OS
	}{{"buffered", OS{Buffered: true}}, {"direct-or-fallback", OS{}}} {
		t.Run(mode.name, func(t *testing.T) {
			root := testfs.Tmpfs(t, "4m")
			dir := filepath.Join(root, "edits")
			j, _, _ := open(t, mode.fs, dir)
			format(t, j)
			appendSync(t, j, "before")
			// Use up the preallocated zeros so that the next flush
			// needs another chunk, then leave less room than that.
			big := strings.Repeat("x", 64<<10)
			fillers := 0
			for j.segAlloc-j.segOff >= 64<<10 {
				appendSync(t, j, big)
				fillers++
			}
			filler := filepath.Join(root, "filler")
			if err := os.WriteFile(filler, make([]byte, testfs.Free(t, root)-(256<<10)), 0o644); err != nil {
				t.Fatal(err)
			}

			tx := j.Append([]byte("held-1"))
			j.Append([]byte(big))
			err := j.Sync(tx)
			if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("Sync on a full file system = %v, want ENOSPC naming %s", err, dir)
			}
			if j.Err() != nil || j.NoSpace() == nil {
				t.Fatalf("after ENOSPC: Err() = %v (want nil: nothing torn), NoSpace() = %v (want set)", j.Err(), j.NoSpace())
			}
			last := j.Append([]byte("held-3"))
			if err := j.Sync(last); !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("Sync while still full = %v, want ENOSPC", err)
			}

			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			if err := j.Sync(last); err != nil {
				t.Fatalf("Sync after space was freed: %v", err)
			}
			if j.NoSpace() != nil {
				t.Fatalf("NoSpace() = %v after the held records were written", j.NoSpace())
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			_, s, _ := open(t, mode.fs, dir)
			want := []string{"before"}
			for range fillers {
				want = append(want, big)
			}
			want = append(want, "held-1", big, "held-3")
			if !slices.Equal(s.all(), want) {
				t.Fatalf("reopened log has %d records, want %d in order (the fillers, then held-1, a filler, held-3)", len(s.all()), len(want))
			}
		})
	}
}
