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

// createRefusingFS refuses to create files with ENOSPC while refuse is
// set, as a file system out of space (or inodes) does.
type createRefusingFS struct {
	FS
	refuse bool
}

func (f *createRefusingFS) Create(name string) (File, error) {
	if f.refuse {
		return nil, &os.PathError{Op: "open", Path: name, Err: syscall.ENOSPC}
	}
	return f.FS.Create(name)
}

// A roll that cannot create the next segment for lack of space is refused
// with an error naming the directory, and the edit log goes on in the
// current segment: appends are still made durable, the journal is not
// broken (Err stays nil), no empty segment is left behind, and a later
// roll works. Before, the current segment was closed first and the failed
// create broke the journal until a restart.
func TestRollWithoutSpaceKeepsTheCurrentSegment(t *testing.T) {
	fs := &createRefusingFS{FS: NewMemFS()}
	j, _, _ := open(t, fs, "/edits")
	format(t, j)
	appendSync(t, j, "a")
	fs.refuse = true
	if _, err := j.Roll(); !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "/edits") {
		t.Fatalf("Roll without space = %v, want ENOSPC naming /edits", err)
	}
	if j.Err() != nil {
		t.Fatalf("Err() = %v after a refused roll: the journal must go on", j.Err())
	}
	appendSync(t, j, "b")
	fs.refuse = false
	if _, err := j.Roll(); err != nil {
		t.Fatalf("Roll once space is back: %v", err)
	}
	appendSync(t, j, "c")
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	_, s, _ := open(t, fs, "/edits")
	if got := s.all(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("reopened log = %q, want a, b, c", got)
	}
}
