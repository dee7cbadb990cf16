package fsshell_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/client/fsshell"
)

func statTimes(t *testing.T, e *env, p string) (mtime, atime time.Time) {
	t.Helper()
	st, err := e.sh.FS.Stat(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return st.ModTime, st.AccessTime
}

// TestTouchAndPreservedTimes: touch with -a -m -t -c as hdfs dfs -touch;
// put -p and cp -p keep times; all of it is still there after the
// namenode restarts.
func TestTouchAndPreservedTimes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	t1 := time.Date(2024, 1, 31, 23, 59, 59, 0, time.Local)
	t2 := time.Date(2023, 6, 1, 12, 0, 0, 0, time.Local)

	if err := e.sh.Touch(ctx, []string{"/t/new"}, fsshell.TouchOptions{}); !errors.Is(err, fs.ErrNotExist) || err.Error() != "touch: `/t/new': No such file or directory" {
		t.Fatalf("touch with a missing parent: %v", err)
	}
	must(t, e.sh.FS.Mkdir(ctx, "/t", 0o755, true))
	must(t, e.sh.Touch(ctx, []string{"/t/a"}, fsshell.TouchOptions{Timestamp: "20240131:235959"}))
	if m, a := statTimes(t, e, "/t/a"); !m.Equal(t1) || !a.Equal(t1) {
		t.Fatalf("touch -t on a new file: mtime %v atime %v, want %v", m, a, t1)
	}
	must(t, e.sh.Touch(ctx, []string{"/t/a"}, fsshell.TouchOptions{ModOnly: true, Timestamp: "20230601:120000"}))
	if m, a := statTimes(t, e, "/t/a"); !m.Equal(t2) || !a.Equal(t1) {
		t.Fatalf("touch -m: mtime %v atime %v, want %v %v", m, a, t2, t1)
	}
	must(t, e.sh.Touch(ctx, []string{"/t/a"}, fsshell.TouchOptions{AccessOnly: true, Timestamp: "20230601:120000"}))
	if m, a := statTimes(t, e, "/t/a"); !m.Equal(t2) || !a.Equal(t2) {
		t.Fatalf("touch -a: mtime %v atime %v, want both %v", m, a, t2)
	}
	before := time.Now().Add(-time.Second)
	must(t, e.sh.Touch(ctx, []string{"/t/a"}, fsshell.TouchOptions{}))
	if m, a := statTimes(t, e, "/t/a"); m.Before(before) || a.Before(before) {
		t.Fatalf("touch: mtime %v atime %v, want now", m, a)
	}
	must(t, e.sh.Touch(ctx, []string{"/t/nothing"}, fsshell.TouchOptions{NoCreate: true}))
	if _, err := e.sh.FS.Stat(ctx, "/t/nothing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("touch -c created the file: %v", err)
	}
	if err := e.sh.Touch(ctx, []string{"/t"}, fsshell.TouchOptions{}); !errors.Is(err, client.ErrIsDir) {
		t.Fatalf("touch of a directory: %v", err)
	}
	if err := e.sh.Touch(ctx, []string{"/t/a"}, fsshell.TouchOptions{Timestamp: "2024-01-31"}); !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf("touch -t with a bad timestamp: %v", err)
	}

	// put -p keeps the local times; cp -p keeps the source's.
	dir := t.TempDir()
	local := filepath.Join(dir, "f")
	must(t, os.WriteFile(local, []byte("data"), 0o640))
	must(t, os.Chtimes(local, t2, t1))
	attrs, err := fsshell.SnapLocal(local)
	must(t, err)
	must(t, e.sh.Put(ctx, []string{local}, "/t/put", fsshell.PutOptions{}))
	must(t, e.sh.KeepLocalModes(ctx, attrs, "/t/put"))
	if m, a := statTimes(t, e, "/t/put"); !m.Equal(t1) || !a.Equal(t2) {
		t.Fatalf("put -p: mtime %v atime %v, want %v %v", m, a, t1, t2)
	}
	must(t, e.sh.Cp(ctx, []string{"/t/put"}, "/t/cp", fsshell.CpOptions{Preserve: true}))
	if m, a := statTimes(t, e, "/t/cp"); !m.Equal(t1) || !a.Equal(t2) {
		t.Fatalf("cp -p: mtime %v atime %v, want %v %v", m, a, t1, t2)
	}

	e.c.RestartNameNode()
	if m, a := statTimes(t, e, "/t/cp"); !m.Equal(t1) || !a.Equal(t2) {
		t.Fatalf("after a namenode restart: cp -p's copy has mtime %v atime %v", m, a)
	}
}
