package datanode

import (
	"net"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"smarth/internal/auth"
)

func TestConfigYAMLAndValidate(t *testing.T) {
	cfg := DefaultConfig()
	err := yaml.Unmarshal([]byte(`
namenode: "10.0.0.1:8020"
data_dir: /data/dn1
heartbeat_interval: "1500ms"
scan_interval: "2h"
per_client_buffer: 1048576
sync_on_close: true
auth: simple
`), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HeartbeatInterval != 1500*time.Millisecond || cfg.ScanInterval != 2*time.Hour || !cfg.SyncOnClose {
		t.Fatalf("decoded %+v", cfg)
	}
	// Exposure is opt-in: every port on loopback, no profiles.
	for key, addr := range map[string]string{"data_addr": cfg.DataAddr, "ipc_addr": cfg.IPCAddr, "http_addr": cfg.HTTPAddr} {
		if host, _, _ := net.SplitHostPort(addr); !net.ParseIP(host).IsLoopback() {
			t.Errorf("default %s %s is not loopback", key, addr)
		}
	}
	if cfg.Pprof {
		t.Error("pprof on by default")
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := cfg
	bad.NameNode, bad.DataDir, bad.HeartbeatInterval, bad.PerClientBuffer, bad.AdvertiseIP = "nohost", "", 0, 10, "x.y"
	bad.ReceiveBufferBudget = 5
	err = bad.Validate()
	for _, want := range []string{"namenode:", "data_dir:", "heartbeat_interval:", "per_client_buffer:", "advertise_ip:", "receive_buffer_budget:"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want a complaint about %s", err, want)
		}
	}
}

func TestAdvertiseIP(t *testing.T) {
	cfg := DefaultConfig()
	if got := advertiseIP(cfg, &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 1}); got != "10.1.2.3" {
		t.Errorf("bound to a specific address: %s", got)
	}
	cfg.AdvertiseIP = "192.168.9.9"
	if got := advertiseIP(cfg, &net.TCPAddr{IP: net.IPv4zero, Port: 1}); got != "192.168.9.9" {
		t.Errorf("configured: %s", got)
	}
	cfg.AdvertiseIP = ""
	if got := advertiseIP(cfg, &net.TCPAddr{IP: net.IPv4zero, Port: 1}); net.ParseIP(got) == nil || net.ParseIP(got).IsUnspecified() {
		t.Errorf("wildcard bind advertised %q", got)
	}
}

func TestLifecycle(t *testing.T) {
	nn := startFakeNameNode(t)
	cfg := DefaultConfig()
	cfg.Auth = auth.Simple // the fake namenode checks no datanode key
	cfg.NameNode, cfg.DataDir = nn.addr, t.TempDir()
	cfg.DataAddr, cfg.IPCAddr, cfg.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	d, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil { // never started
		t.Fatal(err)
	}
	d, _ = New(cfg, nil)
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	if err := d.Start(); err == nil {
		t.Fatal("second Start succeeded")
	}
	d.Kill()
	d.Kill()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// A port in use makes Start fail cleanly; Close is then a no-op.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cfg.HTTPAddr = busy.Addr().String()
	d2, _ := New(cfg, nil)
	if err := d2.Start(); err == nil || !strings.Contains(err.Error(), "http_addr") {
		t.Fatalf("Start with http_addr in use: %v", err)
	}
	if err := d2.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCacheCapacityMustFitTheMemoryBudget(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Auth = auth.Simple
	cfg.DataDir = "/data/dn1"
	cfg.CacheCapacity, cfg.MemoryBudget = 256<<20, 256<<20
	err := cfg.Validate()
	if err == nil {
		t.Fatal("cache_capacity equal to memory_budget accepted, with no room for per_client_buffer")
	}
	for _, want := range []string{"cache_capacity: 268435456 bytes", "memory_budget 268435456 bytes", "per_client_buffer 67108864 bytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	cfg.MemoryBudget = 320 << 20
	if err := cfg.Validate(); err != nil {
		t.Errorf("256 MiB cache in a 320 MiB budget with a 64 MiB write buffer: %v", err)
	}
	cfg.MemoryBudget = 0 // unlimited
	if err := cfg.Validate(); err != nil {
		t.Errorf("no memory budget: %v", err)
	}
	cfg.MemoryBudget = -1
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "memory_budget") {
		t.Errorf("negative memory_budget: %v", err)
	}
}

func TestCacheCapacityMustFitPhysicalMemory(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = "/data/dn1"
	cfg.CacheCapacity = 64 << 30
	if err := cfg.validateMemory(16 << 30); err == nil || !strings.Contains(err.Error(), "physical memory") {
		t.Errorf("64 GiB cache on a 16 GiB machine: %v", err)
	}
	if phys := physicalMemory(); phys > 0 {
		cfg.CacheCapacity = phys + 1
		if err := cfg.Validate(); err == nil {
			t.Errorf("cache_capacity above this machine's %d bytes accepted", phys)
		}
	}
}

// du_reserved takes a size or a percentage, defaults to 5% and names
// itself when it cannot be read.
func TestDuReservedConfig(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir, cfg.Auth = "/data/dn1", auth.Simple
	if got := cfg.withDefaults().DuReserved; got != "5%" {
		t.Errorf("default du_reserved %q, want 5%%", got)
	}
	for _, ok := range []string{"10GiB", "0", "5%", "0.5%", "1048576"} {
		cfg.DuReserved = ok
		if err := cfg.Validate(); err != nil {
			t.Errorf("du_reserved %q: %v", ok, err)
		}
	}
	for _, bad := range []string{"lots", "100%", "-1%", "5 parsecs"} {
		cfg.DuReserved = bad
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "du_reserved:") {
			t.Errorf("du_reserved %q: Validate() = %v, want a complaint naming du_reserved", bad, err)
		}
	}
}

// data_dirs replaces data_dir (not both), lists no directory twice, and
// failed_volumes_tolerated must leave one directory in service.
func TestDataDirsConfig(t *testing.T) {
	base := DefaultConfig()
	base.Auth = auth.Simple
	for _, c := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"both", func(c *Config) { c.DataDir, c.DataDirs = "/a", []string{"/b"} }, "data_dir and data_dirs"},
		{"twice", func(c *Config) { c.DataDirs = []string{"/a", "/a/"} }, "data_dirs:"},
		{"tolerate all", func(c *Config) { c.DataDirs, c.FailedVolumesTolerated = []string{"/a", "/b"}, 2 }, "failed_volumes_tolerated:"},
		{"negative", func(c *Config) { c.DataDir, c.FailedVolumesTolerated = "/a", -1 }, "failed_volumes_tolerated:"},
		{"policy", func(c *Config) { c.DataDir, c.VolumeChoosingPolicy = "/a", "fullest" }, "volume_choosing_policy:"},
		{"none", func(c *Config) {}, "data_dir: required"},
	} {
		cfg := base
		c.set(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate() = %v, want a complaint with %q", c.name, err, c.want)
		}
	}
	ok := base
	ok.DataDirs, ok.FailedVolumesTolerated, ok.VolumeChoosingPolicy = []string{"/a", "/b"}, 1, "available_space"
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := ok.dataDirs(); len(got) != 2 {
		t.Fatalf("dataDirs() = %v", got)
	}
}
