package journal

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// state is a Loader that keeps the image and edits as strings.
type state struct {
	imageTx uint64
	image   []string
	edits   []string
	lastTx  uint64
}

func (s *state) LoadImage(txid uint64, recs [][]byte) error {
	s.imageTx = txid
	for _, r := range recs {
		s.image = append(s.image, string(r))
	}
	s.lastTx = txid
	return nil
}

func (s *state) ApplyEdit(txid uint64, p []byte) error {
	if txid != s.lastTx+1 {
		return fmt.Errorf("txid %d after %d", txid, s.lastTx)
	}
	s.edits = append(s.edits, string(p))
	s.lastTx = txid
	return nil
}

func (s *state) all() []string { return append(append([]string(nil), s.image...), s.edits...) }

func open(t *testing.T, fs FS, dir string) (*Journal, *state, bool) {
	t.Helper()
	j, err := Open(fs, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &state{}
	had, last, err := j.Load(s)
	if err != nil {
		t.Fatal(err)
	}
	if last != s.lastTx {
		t.Fatalf("Load says last txid %d, loader saw %d", last, s.lastTx)
	}
	return j, s, had
}

// format writes the initial empty image, as the namenode does on a fresh
// directory.
func format(t *testing.T, j *Journal) {
	t.Helper()
	tx, err := j.Roll()
	if err != nil {
		t.Fatal(err)
	}
	if err := j.SaveImage(NewImage(tx)); err != nil {
		t.Fatal(err)
	}
}

func appendSync(t *testing.T, j *Journal, recs ...string) {
	t.Helper()
	var tx uint64
	for _, r := range recs {
		tx = j.Append([]byte(r))
	}
	if err := j.Sync(tx); err != nil {
		t.Fatal(err)
	}
}

func TestRoundTripOnDisk(t *testing.T) {
	dir := t.TempDir()
	j, _, had := open(t, OS{}, dir)
	if had {
		t.Fatal("fresh directory reported an image")
	}
	format(t, j)
	appendSync(t, j, "mkdir /a", "create /a/f")
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j, s, had := open(t, OS{}, dir)
	if !had || strings.Join(s.all(), ",") != "mkdir /a,create /a/f" {
		t.Fatalf("reloaded: had image %v, records %v", had, s.all())
	}
	appendSync(t, j, "delete /a")
	j.Close()
	_, s, _ = open(t, OS{}, dir)
	if strings.Join(s.all(), ",") != "mkdir /a,create /a/f,delete /a" || s.lastTx != 3 {
		t.Fatalf("second reload: %v last %d", s.all(), s.lastTx)
	}
}

func TestGroupCommitSurvivesCrash(t *testing.T) {
	fs := NewMemFS()
	j, _, _ := open(t, fs, "/meta")
	format(t, j)
	var mu sync.Mutex
	const writers, per = 8, 50
	acked := make(chan string, writers*per)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				rec := fmt.Sprintf("w%d-%d", w, i)
				mu.Lock() // the caller's state lock orders appends
				tx := j.Append([]byte(rec))
				mu.Unlock()
				if err := j.Sync(tx); err != nil {
					t.Error(err)
					return
				}
				acked <- rec
			}
		}()
	}
	wg.Wait()
	close(acked)
	after := fs.Crash(rand.New(rand.NewSource(1)))
	_, s, _ := open(t, after, "/meta")
	have := map[string]bool{}
	for _, r := range s.all() {
		have[r] = true
	}
	for r := range acked {
		if !have[r] {
			t.Errorf("acknowledged record %s lost", r)
		}
	}
}

func TestTornTailIsCut(t *testing.T) {
	for seed := int64(1); seed <= 30; seed++ {
		fs := NewMemFS()
		j, _, _ := open(t, fs, "/m")
		format(t, j)
		appendSync(t, j, "a", "b")
		// Appended and written but never synced: may be torn.
		j.mu.Lock()
		j.buf = appendRecord(j.buf, 3, []byte("cccccccccccccccccccc"))
		j.lastTx = 3
		seg := j.seg
		buf := j.buf
		j.mu.Unlock()
		seg.Write(buf)
		after := fs.Crash(rand.New(rand.NewSource(seed)))
		j2, s, _ := open(t, after, "/m")
		got := strings.Join(s.all(), ",")
		if got != "a,b" && got != "a,b,cccccccccccccccccccc" {
			t.Fatalf("seed %d: after torn tail: %q", seed, got)
		}
		// The log keeps working after the cut.
		appendSync(t, j2, "d")
		j2.Close()
		_, s, _ = open(t, after, "/m")
		if !strings.HasSuffix(strings.Join(s.all(), ","), ",d") {
			t.Fatalf("seed %d: after reopen: %v", seed, s.all())
		}
	}
}

func TestCorruptionInTheMiddleIsAnError(t *testing.T) {
	fs := NewMemFS()
	j, _, _ := open(t, fs, "/m")
	format(t, j)
	appendSync(t, j, "a", "b")
	j.Close()
	// A second run adds a segment after the first.
	j, _, _ = open(t, fs, "/m")
	appendSync(t, j, "c")
	j.Close()
	name := filepath.Join("/m", segmentName(1))
	fs.mu.Lock()
	fs.files[name].data[headerLen+2] ^= 0xff // flip a byte of "a"
	fs.mu.Unlock()
	j, err := Open(fs, "/m", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = j.Load(&state{})
	if err == nil || !strings.Contains(err.Error(), "corrupt in the middle") {
		t.Fatalf("Load of a log corrupt in the middle: %v", err)
	}
}

func TestCheckpointPurgesAndReloads(t *testing.T) {
	fs := NewMemFS()
	j, _, _ := open(t, fs, "/m")
	format(t, j)
	appendSync(t, j, "e1", "e2")
	tx, err := j.Roll()
	if err != nil || tx != 2 {
		t.Fatalf("Roll: %d %v", tx, err)
	}
	im := NewImage(tx)
	im.Add([]byte("state-after-e2"))
	appendSync(t, j, "e3") // an edit after the roll, before the image is saved
	if err := j.SaveImage(im); err != nil {
		t.Fatal(err)
	}
	names, _ := fs.List("/m")
	if strings.Join(names, " ") != segmentName(3)+" "+imageName(2) {
		t.Errorf("files after purge: %v", names)
	}
	j.Close()
	_, s, _ := open(t, fs, "/m")
	if strings.Join(s.all(), ",") != "state-after-e2,e3" || s.imageTx != 2 {
		t.Fatalf("reload after checkpoint: %v (image at %d)", s.all(), s.imageTx)
	}
}

func TestCrashDuringCheckpointKeepsOldImage(t *testing.T) {
	fs := NewMemFS()
	j, _, _ := open(t, fs, "/m")
	format(t, j)
	appendSync(t, j, "e1")
	tx, _ := j.Roll()
	// The image is written but the crash comes before it is renamed.
	f, _ := fs.Create(filepath.Join("/m", imageName(tx)+tmpSuffix))
	f.Write([]byte("partial"))
	after := fs.Crash(nil)
	_, s, _ := open(t, after, "/m")
	if strings.Join(s.all(), ",") != "e1" {
		t.Fatalf("reload: %v", s.all())
	}
}

func TestSyncFailureIsSticky(t *testing.T) {
	fs := NewMemFS()
	j, _, _ := open(t, fs, "/m")
	format(t, j)
	fs.FailSync = errors.New("disk on fire")
	tx := j.Append([]byte("x"))
	if err := j.Sync(tx); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("Sync: %v", err)
	}
	fs.FailSync = nil
	tx = j.Append([]byte("y"))
	if err := j.Sync(tx); err == nil {
		t.Fatal("Sync succeeded after an earlier failure")
	}
}

func TestSegmentsWithoutImageRefused(t *testing.T) {
	fs := NewMemFS()
	j, _, _ := open(t, fs, "/m")
	appendSync(t, j, "x") // never formatted
	j.Close()
	j, _ = Open(fs, "/m", nil)
	if _, _, err := j.Load(&state{}); err == nil {
		t.Fatal("Load accepted segments without an image")
	}
}

func FuzzReadRecords(f *testing.F) {
	f.Add(appendRecord(appendRecord(nil, 1, []byte("hello")), 2, []byte("world")))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		var n int
		off, err := readRecords(strings.NewReader(string(data)), func(uint64, []byte) error { n++; return nil })
		if off > int64(len(data)) {
			t.Fatalf("good offset %d beyond %d bytes", off, len(data))
		}
		if err != nil && !errors.Is(err, errTorn) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		// Re-reading the good prefix gives the same records and no error.
		var m int
		if _, err := readRecords(strings.NewReader(string(data[:off])), func(uint64, []byte) error { m++; return nil }); err != nil || m != n {
			t.Fatalf("good prefix: %d records, %v; first pass %d", m, err, n)
		}
	})
}

func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	release, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockDir(dir); err == nil || !strings.Contains(err.Error(), "in use by another namenode (pid ") {
		t.Fatalf("second lock: %v", err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	release, err = LockDir(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	release()
}

// TestTornTailIsCutOnDisk: the OS file system cuts a torn tail too, and the
// segment opened after the cut follows it without a gap on the next start.
func TestTornTailIsCutOnDisk(t *testing.T) {
	dir := t.TempDir()
	j, _, _ := open(t, OS{}, dir)
	format(t, j)
	appendSync(t, j, "a", "b")
	j.mu.Lock()
	seg := filepath.Join(dir, segmentName(j.segFirst))
	used := j.segOff
	j.mu.Unlock()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	// The records, then the preallocated zeros.
	if len(file) != PreallocChunk || !bytes.Equal(file[used:], make([]byte, len(file)-int(used))) {
		t.Fatalf("segment is %d bytes with %d of records; want %d, zeros after the records", len(file), used, PreallocChunk)
	}
	good := file[:used]
	// A record torn in the preallocated space: its first bytes over the
	// zeros, as a crash in the middle of the write leaves it.
	torn := appendRecord(nil, 3, []byte("cccccccc"))
	copy(file[used:], torn[:len(torn)-3])
	if err := os.WriteFile(seg, file, 0o644); err != nil {
		t.Fatal(err)
	}
	j, s, _ := open(t, OS{}, dir)
	if got := strings.Join(s.all(), ","); got != "a,b" {
		t.Fatalf("after a torn tail: %q, want a,b", got)
	}
	if b, _ := os.ReadFile(seg); !bytes.Equal(b, good) {
		t.Fatalf("torn segment is %d bytes after the cut, want %d", len(b), len(good))
	}
	appendSync(t, j, "d")
	j.Close()
	if _, s, _ = open(t, OS{}, dir); strings.Join(s.all(), ",") != "a,b,d" {
		t.Fatalf("after reopen: %v", s.all())
	}
}

// A preallocated segment reads back whole across several chunks, the
// zeros after the last record taken as the end of the log.
func TestPreallocatedSegmentsReload(t *testing.T) {
	dir := t.TempDir()
	j, _, _ := open(t, OS{}, dir)
	format(t, j)
	big := strings.Repeat("x", 300<<10)
	var want []string
	for i := range 8 { // 2.4 MiB: three chunks
		r := fmt.Sprintf("%d%s", i, big)
		appendSync(t, j, r)
		want = append(want, r)
	}
	j.mu.Lock()
	off, alloc := j.segOff, j.segAlloc
	j.mu.Unlock()
	if alloc < off || alloc%PreallocChunk != 0 || alloc-off >= PreallocChunk {
		t.Fatalf("records %d bytes, preallocated %d: want whole chunks just covering them", off, alloc)
	}
	j.Close()
	j, s, _ := open(t, OS{}, dir)
	if got := s.all(); len(got) != len(want) || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("reloaded %d records, want %d", len(got), len(want))
	}
	appendSync(t, j, "after")
	j.Close()
	if _, s, _ = open(t, OS{}, dir); s.all()[len(s.all())-1] != "after" || s.lastTx != 9 {
		t.Fatalf("after a second segment: last txid %d", s.lastTx)
	}
}
