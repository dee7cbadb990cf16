package diskperm

import (
	"bytes"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// seed writes a data directory as an older release left it: directories
// 0755, files 0644, under a umask that would not have narrowed them.
func seed(t testing.TB, root string, files int) {
	t.Helper()
	for _, d := range []string{"current/finalized", "rbw", "tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range files {
		for _, name := range []string{fmt.Sprintf("blk_%d", i), fmt.Sprintf("blk_%d_1001.meta", i)} {
			if err := os.WriteFile(filepath.Join(root, "current/finalized", name), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	widen(t, root)
}

// widen sets every directory under root 0755 and every file 0644, past
// the umask.
func widen(t testing.TB, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, 0o755)
		}
		return os.Chmod(p, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// modes lists every path under root with its mode.
func modes(t *testing.T, root string) map[string]fs.FileMode {
	t.Helper()
	m := map[string]fs.FileMode{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		m[rel] = fi.Mode()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFixNarrowsOldTree: a tree left 0755/0644 comes out 0700/0600, each
// change is a WARN naming the path and both modes, and a second run finds
// nothing to do and says nothing.
func TestFixNarrowsOldTree(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	seed(t, root, 2)
	var log bytes.Buffer
	n, err := Fix(root, Dir, slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	got := modes(t, root)
	if n != len(got) {
		t.Errorf("Fix narrowed %d paths; %d were wide", n, len(got))
	}
	for p, m := range got {
		want := File
		if m.IsDir() {
			want = Dir
		}
		if m.Perm() != want {
			t.Errorf("%s: mode %04o after Fix, want %04o", p, m.Perm(), want)
		}
	}
	blk := filepath.Join(root, "current/finalized/blk_1")
	if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "path="+blk+" old_mode=0644 new_mode=0600") {
		t.Errorf("no WARN naming %s 0644 -> 0600 in:\n%s", blk, log.String())
	}
	log.Reset()
	if n, err := Fix(root, Dir, slog.New(slog.NewTextHandler(&log, nil))); err != nil || n != 0 || log.Len() != 0 {
		t.Errorf("second Fix: %d narrowed, %v, log %q; want nothing to do", n, err, log.String())
	}
}

// TestFixKeepsWhatIsAllowed: with data_dir_perm 750 the group keeps read
// (and search) and loses write; others lose all; files lose execute. The
// root gets exactly the mode, as HDFS sets its data directories.
func TestFixKeepsWhatIsAllowed(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(filepath.Join(root, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"f", "d/g"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for p, m := range map[string]fs.FileMode{"d": 0o777, "f": 0o777, "d/g": 0o604} {
		if err := os.Chmod(filepath.Join(root, p), m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Fix(root, 0o750, nil); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]fs.FileMode{".": 0o750, "d": 0o750, "f": 0o640, "d/g": 0o600} {
		if m := modes(t, root)[p]; m.Perm() != want {
			t.Errorf("%s: %04o, want %04o", p, m.Perm(), want)
		}
	}
}

// TestFixLeavesSymlinkTargets: a link inside the data directory to a file
// outside it is not followed; the file outside keeps its mode.
func TestFixLeavesSymlinkTargets(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	if err := os.WriteFile(outside, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(outside, 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "data")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := Fix(root, Dir, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("file outside the data dir: %v %v; want 0644 untouched", fi.Mode(), err)
	}
}

// TestFixRefusesSharedDir: a sticky directory such as /tmp named as a
// daemon's own is refused, naming it, and nothing in it is changed.
func TestFixRefusesSharedDir(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o777|fs.ModeSticky); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(root, "someone-elses")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(other, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Fix(root, Dir, nil); err == nil || !strings.Contains(err.Error(), root+" is a shared directory") {
		t.Fatalf("Fix(sticky %s) = %v; want refused naming it", root, err)
	}
	if m := modes(t, root); m["."].Perm() != 0o777 || m["someone-elses"].Perm() != 0o644 {
		t.Errorf("refused Fix changed modes: %v", m)
	}
}

// TestFixSummarizesManyPaths: past warnEach paths, one summary WARN
// counts the rest instead of a WARN per replica.
func TestFixSummarizesManyPaths(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	seed(t, root, 20)
	var log bytes.Buffer
	n, err := Fix(root, Dir, slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(log.String(), "\n")
	if lines != warnEach+1 || !strings.Contains(log.String(), fmt.Sprintf("paths=%d", n)) {
		t.Errorf("%d narrowed paths logged in %d lines, want %d and a count:\n%s", n, lines, warnEach+1, log.String())
	}
}

// TestFixCreatesRootExactly: a missing root is made with the mode even
// under a umask that would narrow it (Passage under 077).
func TestFixCreatesRootExactly(t *testing.T) {
	old := umask(0o077)
	defer umask(old)
	root := filepath.Join(t.TempDir(), "home")
	if _, err := Fix(root, Passage, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(root); err != nil || fi.Mode().Perm() != Passage {
		t.Fatalf("%s: %v %v, want %04o", root, fi.Mode(), err, Passage)
	}
	other := filepath.Join(t.TempDir(), "other")
	if err := MkdirAll(other, Passage); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(other); err != nil || fi.Mode().Perm() != Passage {
		t.Fatalf("MkdirAll %s: %v %v, want %04o", other, fi.Mode(), err, Passage)
	}
}

// TestParseMode: octal as HDFS writes it; what would lock the daemon out
// of its own directory, or is no permission, is refused with the value.
func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"700": 0o700, "0700": 0o700, "0o750": 0o750, "755": 0o755} {
		if m, err := ParseMode(in); err != nil || m != want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", in, m, err, want)
		}
	}
	for _, in := range []string{"", "rwx", "800", "600", "1700", "0", "-700"} {
		if _, err := ParseMode(in); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", in)) {
			t.Errorf("ParseMode(%q) = %v; want an error naming the value", in, err)
		}
	}
	var c struct {
		Perm Mode `yaml:"data_dir_perm"`
	}
	if err := yaml.Unmarshal([]byte("data_dir_perm: 750\n"), &c); err != nil || c.Perm != 0o750 {
		t.Errorf("yaml 750 = %v, %v; want octal 750", c.Perm, err)
	}
	if err := yaml.Unmarshal([]byte("data_dir_perm: 644\n"), &c); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("yaml 644 = %v; want refused with its line", err)
	}
	if err := Mode(0o600).Validate("data_dir_perm"); err == nil || !strings.Contains(err.Error(), "data_dir_perm: 600") {
		t.Errorf("Validate(600) = %v; want refused naming the key", err)
	}
}

// BenchmarkFix10kReplicas measures the start-time walk over 10,000
// replicas (20,000 files): "narrow" finds every file 0644 (the first start
// after this change), "clean" finds them private (every later start).
func BenchmarkFix10kReplicas(b *testing.B) {
	root := filepath.Join(b.TempDir(), "data")
	seed(b, root, 10000)
	b.Run("narrow", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			widen(b, root)
			b.StartTimer()
			if _, err := Fix(root, Dir, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("clean", func(b *testing.B) {
		for b.Loop() {
			if _, err := Fix(root, Dir, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestExposed: files with any group/other bit and directories others may
// list or write are reported; a passage (0711) and private paths are not;
// skipped subtrees are left out.
func TestExposed(t *testing.T) {
	root := t.TempDir()
	for p, m := range map[string]fs.FileMode{"pass": 0o711, "open": 0o755, "grp": 0o770, "drop": 0o733, "conf": 0o755} {
		if err := os.Mkdir(filepath.Join(root, p), m); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(root, p), m); err != nil {
			t.Fatal(err)
		}
	}
	for p, m := range map[string]fs.FileMode{"pass/a": 0o600, "pass/b": 0o640, "pass/c": 0o604, "pass/d": 0o602, "conf/x.yaml": 0o644} {
		if err := os.WriteFile(filepath.Join(root, p), nil, m); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(root, p), m); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(root, 0o700); err != nil {
		t.Fatal(err)
	}
	got, err := Exposed(root, func(p string) bool { return p == filepath.Join(root, "conf") })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{root + "/drop 0733", root + "/grp 0770", root + "/open 0755", root + "/pass/b 0640", root + "/pass/c 0604", root + "/pass/d 0602"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Exposed = %q, want %q", got, want)
	}
}
