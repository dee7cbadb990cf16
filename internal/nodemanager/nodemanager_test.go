package nodemanager_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/auth"
	"smarth/internal/mapreduce"
	"smarth/internal/nodemanager"
)

func TestConfigValidate(t *testing.T) {
	t.Setenv("SMARTH_TOKEN_FILE", filepath.Join(t.TempDir(), "no-token"))
	cfg := nodemanager.DefaultConfig()
	err := cfg.Validate()
	// Secure by default: no credential for the namenode stops it at
	// start, saying how to get one.
	for _, want := range []string{"work_dir is required", "no app registry", "token_file: not set", "smarth login"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate of the defaults = %v, want it to say %q", err, want)
		}
	}
	cfg.WorkDir, cfg.Registry = t.TempDir(), mapreduce.NewRegistry()
	cfg.TokenFile = filepath.Join(t.TempDir(), "nm.token")
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), cfg.TokenFile+" does not exist") {
		t.Errorf("Validate with a missing token file = %v, want its path named", err)
	}
	if err := auth.WriteTokenFile(cfg.TokenFile, "yarn:0123"); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate of a complete config = %v", err)
	}
	cfg.MapSlots = 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "map_slots") {
		t.Errorf("Validate with no map slots = %v", err)
	}
}

// The HTTP port serves metrics and, with pprof: true, Go profiles of the
// tasks the node runs (how the shuffle and sort were profiled); without it
// (the default) no profiles.
func TestHTTPServesMetricsAndProfiles(t *testing.T) {
	off := startBareNodeManager(t, false)
	resp, err := http.Get("http://" + off.HTTPAddr() + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("profiles without pprof: true: %s, want 404", resp.Status)
	}
	nm := startBareNodeManager(t, true)
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

// startBareNodeManager starts a node manager on a local file system whose
// resource manager never answers (heartbeats fail, which is fine for its
// HTTP port).
func startBareNodeManager(t *testing.T, pprof bool) *nodemanager.NodeManager {
	t.Helper()
	lfs, err := mapreduce.NewLocalFS(filepath.Join(t.TempDir(), "fs"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := nodemanager.DefaultConfig()
	cfg.ResourceManager = "127.0.0.1:1" // never answers: heartbeats fail, which is fine here
	cfg.FS, cfg.Registry, cfg.WorkDir, cfg.Hostname = lfs, mapreduce.NewRegistry(), t.TempDir(), "dn1"
	cfg.Pprof = pprof
	nm, err := nodemanager.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := nm.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nm.Close() })
	return nm
}

// auth: simple is opt-in: no credential needed, and a warning at start.
func TestSimpleNodeManagerWarns(t *testing.T) {
	t.Setenv("SMARTH_TOKEN_FILE", filepath.Join(t.TempDir(), "no-token"))
	var logs bytes.Buffer
	cfg := nodemanager.DefaultConfig()
	cfg.Auth, cfg.Registry, cfg.WorkDir, cfg.Hostname = auth.Simple, mapreduce.NewRegistry(), t.TempDir(), "dn1"
	if _, err := nodemanager.New(cfg, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "auth is simple") {
		t.Fatalf("no warning for auth: simple:\n%s", logs.String())
	}
}
