package namenode

import (
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"smarth/internal/diskperm"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/syncbuf"
)

// TestMetaDirPrivate: the namenode's edits, image, lock and key files are
// its alone (meta_dir 0700, files 0600) under the usual umask 022, and a
// meta_dir an older release left 0755 with 0644 files is narrowed at
// start with a WARN naming an edit log segment and its modes; the
// namespace loads as it was.
func TestMetaDirPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	cfg := testConfig(t)
	cfg.MetaDir = filepath.Join(t.TempDir(), "meta")
	nn, err := New(cfg, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := nn.Start(); err != nil {
		t.Fatal(err)
	}
	c := dial(t, nn.Addr(), "hdfs")
	if _, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: "/kept", CreateParent: true}); err != nil {
		t.Fatal(err)
	}
	nn.Close()
	exposedMeta(t, cfg.MetaDir, "after a mkdir")

	err = filepath.WalkDir(cfg.MetaDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
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
	logs := &syncbuf.Buffer{}
	nn2, err := New(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer nn2.Close()
	exposedMeta(t, cfg.MetaDir, "after a restart on a 0755/0644 meta_dir")
	want := "key=meta_dir path=" + filepath.Join(cfg.MetaDir, "edits_")
	if !strings.Contains(logs.String(), want) || !strings.Contains(logs.String(), "old_mode=0644 new_mode=0600") {
		t.Errorf("no WARN naming an edits segment 0644 -> 0600 (%q) in:\n%s", want, logs.String())
	}
	if err := nn2.Start(); err != nil {
		t.Fatal(err)
	}
	c2 := dial(t, nn2.Addr(), "hdfs")
	if r, err := c2.cp.GetFileInfo(c2.ctx(), &dfspb.GetFileInfoRequest{Path: "/kept"}); err != nil || r.GetStatus() == nil {
		t.Fatalf("/kept after the restart: %v, %v", r, err)
	}
}

func exposedMeta(t *testing.T, dir, when string) {
	t.Helper()
	open, err := diskperm.Exposed(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) > 0 {
		t.Errorf("%s, other OS users can reach under meta_dir:\n%s", when, strings.Join(open, "\n"))
	}
}
