package nodemanager

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"smarth/internal/mapreduce"
)

// TestContainerConfigKeys: the container keys are read from YAML as the
// daemon reads its config (unknown keys refused), and Validate refuses
// an executor it does not know and a run_as_user that is root or banned,
// naming the key.
func TestContainerConfigKeys(t *testing.T) {
	load := func(text string) Config {
		t.Helper()
		cfg := DefaultConfig()
		dec := yaml.NewDecoder(bytes.NewReader([]byte(text)))
		dec.KnownFields(true)
		if err := dec.Decode(&cfg); err != nil {
			t.Fatal(err)
		}
		cfg.WorkDir, cfg.Registry = t.TempDir(), mapreduce.NewRegistry()
		cfg.NameNode = "127.0.0.1:1"
		return cfg
	}
	cfg := load("container_executor: linux\nrun_as: local-user\nrun_as_user: daemon\nmin_user_id: 500\nbanned_users: [bin, games]\nmax_memory_mb: 2048\nnamenode_http: 127.0.0.1:9870\n")
	if cfg.Containers.RunAs != "local-user" || cfg.Containers.RunAsUser != "daemon" || cfg.Containers.MinUserID != 500 ||
		!slices.Equal(cfg.Containers.BannedUsers, []string{"bin", "games"}) || cfg.MaxMemoryMB != 2048 || cfg.NameNodeHTTP != "127.0.0.1:9870" {
		t.Fatalf("decoded %+v", cfg)
	}
	cfg.Auth = "simple"
	if err := cfg.Validate(); err != nil {
		t.Fatalf("valid config refused: %v", err)
	}
	for text, want := range map[string]string{
		"container_executor: lxc\n": `container_executor "lxc"`,
		"run_as_user: root\n":       "run_as_user: Requested user root has id 0",
		"run_as_user: bin\n":        "run_as_user: Requested user bin is banned",
		"run_as: anyone\n":          `run_as "anyone"`,
		"max_memory_mb: 0\n":        "max_memory_mb and max_vcores must be at least 1",
	} {
		cfg := load("auth: simple\n" + text)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}
