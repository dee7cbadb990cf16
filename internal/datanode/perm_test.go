package datanode

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"smarth/internal/diskperm"
)

// exposed fails t if anything under dir is open to group or others.
func exposed(t *testing.T, dir, when string) {
	t.Helper()
	open, err := diskperm.Exposed(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) > 0 {
		t.Errorf("%s, other OS users can reach under data_dir:\n%s", when, strings.Join(open, "\n"))
	}
}

// TestDataDirPrivate: a datanode keeps its replicas private (data_dir 0700,
// block and meta files 0600) under the usual umask 022, and a data
// directory an older release left 0755 with 0644 replicas is narrowed at
// start, with a WARN naming a block file and its old and new modes, and
// serves the same bytes after.
func TestDataDirPrivate(t *testing.T) {
	defer setUmask(0o022)()
	nn := startFakeNameNode(t)
	dir := filepath.Join(t.TempDir(), "dn")
	dn, _ := startDataNode(t, nn, dir, nil)
	data := randomData(5000, 7)
	writeBlock(t, 7, 1, data, dn)
	exposed(t, dir, "after a write")
	dn.Close()

	// What the release before this one left: everything 0755/0644.
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
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
	dn2, logs := startDataNode(t, nn, dir, nil)
	exposed(t, dir, "after a restart on a 0755/0644 data_dir")
	blk := filepath.Join(dir, "current", "finalized", "blk_7")
	if !strings.Contains(logs.String(), `"level":"WARN","msg":"permission wider than allowed; narrowed","key":"data_dir_perm","path":"`+blk+`","old_mode":"0644","new_mode":"0600"`) {
		t.Errorf("no WARN naming %s 0644 -> 0600 in the datanode's log:\n%s", blk, logs.String())
	}
	// The fake namenode counts the first start's registration: wait for
	// the restarted node's block keys before reading.
	waitFor(t, "the restarted datanode serves blk_7 (block keys from its new registration)", func() bool {
		_, err := readBlock(dn2.DataAddr(), 7, 1, 0, 1)
		return err == nil
	})
	mustRead(t, dn2, 7, 1, data)
}

// TestDataDirPermConfig: data_dir_perm reads as octal, as HDFS's
// dfs.datanode.data.dir.perm; a value that would lock the datanode out of
// its own directory or is no permission is refused naming the key.
func TestDataDirPermConfig(t *testing.T) {
	cfg := DefaultConfig()
	if cfg.DataDirPerm.Perm() != 0o700 {
		t.Fatalf("default data_dir_perm %v, want 700", cfg.DataDirPerm)
	}
	if err := yaml.Unmarshal([]byte("data_dir_perm: 750\n"), &cfg); err != nil || cfg.DataDirPerm.Perm() != 0o750 {
		t.Fatalf("data_dir_perm: 750 read as %v, %v", cfg.DataDirPerm, err)
	}
	if err := yaml.Unmarshal([]byte("data_dir_perm: 600\n"), &cfg); err == nil || !strings.Contains(err.Error(), `"600"`) {
		t.Errorf("data_dir_perm: 600 = %v; want refused naming the value", err)
	}
	cfg.DataDir, cfg.Auth = "/d", "simple"
	cfg.DataDirPerm = diskperm.Mode(0o1777)
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "data_dir_perm: 1777") {
		t.Errorf("Validate with data_dir_perm 1777 = %v; want refused naming the key", err)
	}
}
