package nodemanager_test

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/mapreduce"
	"smarth/internal/nodemanager"
)

func TestConfigValidate(t *testing.T) {
	cfg := nodemanager.DefaultConfig()
	err := cfg.Validate()
	for _, want := range []string{"work_dir is required", "no app registry"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate of the defaults = %v, want it to say %q", err, want)
		}
	}
	cfg.WorkDir, cfg.Registry = t.TempDir(), mapreduce.NewRegistry()
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate of a complete config = %v", err)
	}
	cfg.MapSlots = 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "map_slots") {
		t.Errorf("Validate with no map slots = %v", err)
	}
}

// The HTTP port serves metrics and Go profiles of the tasks the node
// runs (how the shuffle and sort were profiled).
func TestHTTPServesMetricsAndProfiles(t *testing.T) {
	lfs, err := mapreduce.NewLocalFS(filepath.Join(t.TempDir(), "fs"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := nodemanager.DefaultConfig()
	cfg.ResourceManager = "127.0.0.1:1" // never answers: heartbeats fail, which is fine here
	cfg.FS, cfg.Registry, cfg.WorkDir, cfg.Hostname = lfs, mapreduce.NewRegistry(), t.TempDir(), "dn1"
	nm, err := nodemanager.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := nm.Start(); err != nil {
		t.Fatal(err)
	}
	defer nm.Close()
	if nm.Rack() != "/default-rack" {
		t.Errorf("rack without a namenode = %q, want the configured /default-rack", nm.Rack())
	}
	for path, want := range map[string]string{
		"/metrics":                       "smarth_nm_tasks_launched_total",
		"/debug/pprof/":                  "goroutine",
		"/debug/pprof/heap?debug=1":      "heap profile",
		"/debug/pprof/cmdline":           "",
		"/debug/pprof/profile?seconds=1": "",
	} {
		resp, err := http.Get("http://" + nm.HTTPAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %s, %d bytes; want 200 containing %q", path, resp.Status, len(b), want)
		}
	}
}
