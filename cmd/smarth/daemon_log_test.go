package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"smarth/internal/daemonconf"
	"smarth/internal/logfile"
	"smarth/internal/namenode"
)

// TestDaemonLogRotatesAsTheConfigSays: a namenode config with
// log_max_file_size and log_max_backup_index makes the daemon's
// --log-file rotate: after several MiB of records there is the log and
// at most that many backups, all 0600. Without the keys the defaults are
// Hadoop's (256 MiB, 20).
func TestDaemonLogRotatesAsTheConfigSays(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "nn.yaml")
	if err := os.WriteFile(conf, []byte("meta_dir: "+dir+"\nlog_max_file_size: 1048576\nlog_max_backup_index: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := namenode.DefaultConfig()
	if cfg.Log.MaxFileSize != 256<<20 || cfg.Log.MaxBackupIndex != 20 {
		t.Errorf("default rotation %+v, want Hadoop's 256 MiB and 20 backups", cfg.Log)
	}
	if err := daemonconf.Load(conf, &cfg); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "logs", "namenode.log")
	log, closer, err := daemonLogger(path, cfg.Log)
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	big := strings.Repeat("y", 32<<10)
	for i := range 100 { // about 3 MiB of records
		log.Info("filler", "i", i, "text", big)
	}
	files := func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, "logs", "namenode*.log"))
		return m
	}
	deadline := time.Now().Add(30 * time.Second) // the library prunes in its own goroutine
	for len(files()) != 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := files(); len(got) != 2 {
		t.Fatalf("waited for namenode.log and 1 backup, have %v", got)
	}
	for _, f := range files() {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %o, want 0600", f, st.Mode().Perm())
		}
	}
	if _, _, err := daemonLogger(filepath.Join(dir, "x.log"), daemonconfLog(-1)); err == nil || !strings.Contains(err.Error(), "log_max_backup_index") {
		t.Errorf("negative log_max_backup_index: %v, want it refused by name", err)
	}
}

func daemonconfLog(backups int) (r logfile.Rotation) {
	r.MaxBackupIndex = backups
	return r
}
