package logfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"smarth/internal/units"
)

// TestRotatesKeepingAtMostTheBackupsPrivate: writing past the maximum
// size moves the log aside and starts a new one; after many rotations at
// most log_max_backup_index old files remain, and the log and every
// backup are 0600 even when the log an older release left was 0644.
func TestRotatesKeepingAtMostTheBackupsPrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "logs", "namenode.log")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("left by an older release\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const backups = 2
	w, err := Open(path, Rotation{MaxFileSize: units.MiB, MaxBackupIndex: backups})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	line := bytes.Repeat([]byte("x"), 64<<10-1)
	line = append(line, '\n')
	// 6 MiB through a 1 MiB file: five rotations or more.
	for range 6 * 16 {
		if _, err := w.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	logs := func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, "logs", "namenode*.log"))
		return m
	}
	// Old backups are removed by the library's own goroutine after a rotation.
	deadline := time.Now().Add(30 * time.Second)
	for len(logs()) != backups+1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	got := logs()
	if len(got) != backups+1 {
		t.Fatalf("waited for the log and %d backups, have %d files: %v", backups, len(got), got)
	}
	for _, f := range got {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %o, want 0600", f, st.Mode().Perm())
		}
		if st.Size() > units.MiB {
			t.Errorf("%s: %d bytes, over the 1 MiB maximum", f, st.Size())
		}
		if f != path && !strings.HasPrefix(filepath.Base(f), "namenode-") {
			t.Errorf("backup %s is not named after the log", f)
		}
	}
}

func TestRotationRefusesNegativeKeys(t *testing.T) {
	for _, c := range []struct {
		r    Rotation
		want string
	}{
		{Rotation{MaxFileSize: -1}, "log_max_file_size: -1 bytes cannot be negative"},
		{Rotation{MaxBackupIndex: -3}, "log_max_backup_index: -3 cannot be negative"},
		{Rotation{MaxAge: -time.Hour}, "log_max_age: -1h0m0s cannot be negative"},
	} {
		if _, err := Open(filepath.Join(t.TempDir(), "x.log"), c.r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open with %+v = %v, want an error containing %q", c.r, err, c.want)
		}
	}
}
