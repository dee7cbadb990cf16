package journal

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// segmentBytes is the content of dir's only segment.
func segmentBytes(t *testing.T, dir string) []byte {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, segmentPrefix+"*"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no segment in %s (%v)", dir, err)
	}
	var newest []byte
	for _, n := range names { // the newest segment holds the records
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimRight(b, "\x00")) > 0 {
			newest = b
		}
	}
	return newest
}

// Direct and buffered segments hold the same bytes for the same appends,
// whatever the sizes of the group commits (records straddling 4 KiB
// blocks and 1 MiB preallocation chunks), and reload the same records.
func TestDirectSegmentsMatchBuffered(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	type commit []string
	var commits []commit
	total := 0
	for total < 2<<20+123 {
		var c commit
		for range 1 + rng.Intn(6) {
			n := 1 + rng.Intn(200)
			if rng.Intn(20) == 0 {
				n = 4000 + rng.Intn(9000) // bigger than a block
			}
			r := fmt.Sprintf("%d:%s", len(commits), strings.Repeat(string(rune('a'+rng.Intn(26))), n))
			c = append(c, r)
			total += len(r)
		}
		commits = append(commits, c)
	}
	var segs [2][]byte
	for i, fs := range []OS{{}, {Buffered: true}} {
		dir := t.TempDir()
		j, _, _ := open(t, fs, dir)
		format(t, j)
		if i == 0 {
			requireDirect(t, j)
		}
		var want []string
		for _, c := range commits {
			appendSync(t, j, c...)
			want = append(want, c...)
		}
		segs[i] = segmentBytes(t, dir)
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		_, s, _ := open(t, fs, dir)
		if got := s.all(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%+v: reloaded %d records, want %d", fs, len(got), len(want))
		}
	}
	if !bytes.Equal(segs[0], segs[1]) {
		t.Fatalf("direct segment (%d bytes) differs from buffered (%d bytes)", len(segs[0]), len(segs[1]))
	}
}

// requireDirect fails unless j's segment is written with direct I/O: the
// test machines' temp directories allow it, and a silent fallback would
// leave the direct path untested.
func requireDirect(t *testing.T, j *Journal) {
	t.Helper()
	j.mu.Lock()
	d, direct := j.seg.(*directFile)
	j.mu.Unlock()
	if !direct {
		t.Fatalf("segment is %T, not written with direct I/O (does %s's file system refuse O_DIRECT?)", j.seg, j.dir)
	}
	// The kernel's view of the descriptor: without O_DSYNC a direct write
	// returns before the device flushes its write cache, and no test that
	// kills a process would notice (the device's cache outlives it).
	flags, err := FDFlags(os.Getpid(), int(d.f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if flags&syscall.O_DIRECT == 0 || flags&syscall.O_DSYNC != syscall.O_DSYNC {
		t.Fatalf("segment descriptor flags %#o lack O_DIRECT (%#o) or O_DSYNC (%#o)", flags, syscall.O_DIRECT, syscall.O_DSYNC)
	}
}

// A file system that refuses O_DIRECT, at open or at the first write
// (the probe), gets buffered segments and a warning, and loses nothing.
func TestDirectRefusedFallsBackToBuffered(t *testing.T) {
	einval := func(op string) error { return &os.PathError{Op: op, Path: "x", Err: syscall.EINVAL} }
	for _, refuse := range []struct {
		name  string
		apply func() (undo func())
	}{
		{"at open", func() func() {
			orig := openDirect
			openDirect = func(string) (*os.File, error) { return nil, einval("open") }
			return func() { openDirect = orig }
		}},
		{"at the probe write", func() func() {
			orig := probeDirect
			probeDirect = func(*os.File, []byte) error { return einval("write") }
			return func() { probeDirect = orig }
		}},
	} {
		t.Run(refuse.name, func(t *testing.T) {
			undo := refuse.apply()
			t.Cleanup(undo)
			var logs bytes.Buffer
			dir := t.TempDir()
			j, err := Open(OS{}, dir, testLogger(&logs))
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := j.Load(&state{}); err != nil {
				t.Fatal(err)
			}
			format(t, j)
			appendSync(t, j, "mkdir /a", "mkdir /b")
			j.mu.Lock()
			seg := j.seg
			j.mu.Unlock()
			if _, ok := seg.(osFile); !ok || !strings.Contains(logs.String(), "refuses direct I/O") {
				t.Fatalf("segment %T, log %q: want the buffered fallback and its warning", seg, logs.String())
			}
			j.Close()
			undo()
			if _, s, _ := open(t, OS{}, dir); strings.Join(s.all(), ",") != "mkdir /a,mkdir /b" {
				t.Fatalf("reloaded %v", s.all())
			}
		})
	}
}

func testLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// BenchmarkGroupCommit: appenders each appending a 120-byte record and
// waiting for it to be durable, through the real journal on the test
// machine's disk, with segments written directly and buffered (HDFS's
// write + fdatasync). Reported per acknowledged record; the ratio of the
// two is what edit_log_io changes:
//
//	go test -run '^$' -bench GroupCommit -benchtime 20000x ./internal/namenode/journal
func BenchmarkGroupCommit(b *testing.B) {
	rec := bytes.Repeat([]byte("r"), 120)
	for _, appenders := range []int{1, 8, 64} {
		for _, mode := range []struct {
			name string
			fs   OS
		}{{"direct", OS{}}, {"buffered", OS{Buffered: true}}} {
			b.Run(fmt.Sprintf("%s/%d", mode.name, appenders), func(b *testing.B) {
				j, err := Open(mode.fs, b.TempDir(), nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := j.Load(&state{}); err != nil {
					b.Fatal(err)
				}
				defer j.Close()
				var syncs, records int
				j.OnSync = func(_ time.Duration, n int) { syncs++; records += n }
				var mu sync.Mutex // the caller's lock: appends are ordered under it
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ResetTimer()
				for range appenders {
					wg.Go(func() {
						for next.Add(1) <= int64(b.N) {
							mu.Lock()
							tx := j.Append(rec)
							mu.Unlock()
							if err := j.Sync(tx); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				j.mu.Lock()
				if syncs > 0 {
					b.ReportMetric(float64(records)/float64(syncs), "records/sync")
				}
				j.mu.Unlock()
			})
		}
	}
}
