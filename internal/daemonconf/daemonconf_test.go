package daemonconf

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"smarth/internal/cache"
	"smarth/internal/pki"
	"smarth/internal/placement"
	"smarth/internal/sched"
)

func TestCheckAcceptsEveryKeyUnderItsRole(t *testing.T) {
	for _, c := range []struct {
		role string
		cfg  map[string]any
	}{
		{NameNode, map[string]any{"cache_policy": "bg", "cache_window": "30m", "cache_ttl": "10m",
			"cache_affinity": map[string]any{"grep": 0.638, "kmeans": 0}, "placement": "speedaware", "cache_affinity_source": "table"}},
		{NameNode, map[string]any{"cache_affinity": map[string]float64{"grep": 0.5}}},
		{DataNode, map[string]any{"cache_capacity": 268435456, "memory_budget": int64(1 << 30),
			"drop_cache_behind_reads": true, "drop_cache_behind_writes": false}},
		{ResourceManager, map[string]any{"scheduler": "cachelocal", "cache_skips": 3, "max_allocations": 2}},
	} {
		if err := Check(c.role, c.cfg); err != nil {
			t.Errorf("Check(%s, %v) = %v, want nil", c.role, c.cfg, err)
		}
	}
}

func TestCheckRefusesBadValuesClearly(t *testing.T) {
	for _, c := range []struct {
		role string
		cfg  map[string]any
		want string
	}{
		{NameNode, map[string]any{"cache_policy": "lfu"}, `unknown cache policy "lfu" (known: bg, ca, lru, none, pinned)`},
		{ResourceManager, map[string]any{"scheduler": "fair"}, `unknown scheduler "fair" (known: cachelocal, delay, fifo)`},
		{NameNode, map[string]any{"placement": "random"}, `unknown placement policy "random" (known: mincut, rackaware, speedaware, speedaware-paper)`},
		{DataNode, map[string]any{"placement": "rackaware"}, "placement is a namenode key"},
		{NameNode, map[string]any{"scheduler": "delay"}, "scheduler is a resourcemanager key, not a namenode one"},
		{DataNode, map[string]any{"cache_policy": "lru"}, "cache_policy is a namenode key"},
		{NameNode, map[string]any{"cache_window": "soon"}, "positive duration"},
		{NameNode, map[string]any{"cache_affinity_source": "guess"}, "want learned or table"},
		{NameNode, map[string]any{"cache_affinity": map[string]any{"grep": 1.5}}, "grep: want an affinity between 0 and 1"},
		{DataNode, map[string]any{"cache_capacity": "256MiB"}, "want a whole number (bytes for sizes)"},
		{DataNode, map[string]any{"cache_capacity": -1}, "want at least 0"},
		{DataNode, map[string]any{"drop_cache_behind_reads": "yes"}, "want true or false"},
		{DataNode, map[string]any{"cache_capacity": 2048, "memory_budget": 1024}, "cache_capacity 2048 is larger than memory_budget 1024"},
		{ResourceManager, map[string]any{"max_allocations": 0}, "max_allocations: want at least 1"},
	} {
		err := Check(c.role, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%s, %v) = %v, want an error containing %q", c.role, c.cfg, err, c.want)
		}
	}
}

// TestPolicyNamesComeFromThePolicyPackages: a policy registered in
// cache.Policies, sched.Policies or placement.Policies is accepted under
// its key with no change here, and a name they do not list is refused
// with the names they do.
func TestPolicyNamesComeFromThePolicyPackages(t *testing.T) {
	cache.Policies["test-cache"] = cache.Policies["lru"]
	sched.Policies["test-sched"] = sched.Policies["fifo"]
	placement.Policies["test-placement"] = placement.Policies["rackaware"]
	t.Cleanup(func() {
		delete(cache.Policies, "test-cache")
		delete(sched.Policies, "test-sched")
		delete(placement.Policies, "test-placement")
	})
	for _, c := range []struct {
		role, key string
		names     []string
	}{
		{NameNode, "cache_policy", cache.Names()},
		{ResourceManager, "scheduler", sched.Names()},
		{NameNode, "placement", placement.Names()},
	} {
		for _, name := range c.names {
			if err := Check(c.role, map[string]any{c.key: name}); err != nil {
				t.Errorf("%s: %s=%q, listed by its package: %v", c.role, c.key, name, err)
			}
		}
		err := Check(c.role, map[string]any{c.key: "nonesuch"})
		if err == nil || !strings.Contains(err.Error(), strings.Join(c.names, ", ")) {
			t.Errorf("%s: %s=nonesuch: %v, want an error listing %v", c.role, c.key, err, c.names)
		}
	}
}

// A misspelt or foreign key and a value of the wrong type are refused
// with the key named, and an unknown key's message lists the keys the
// daemon has, so the user can see what was meant.
func TestCheckRefusesUnknownKeysNamingTheValidOnes(t *testing.T) {
	err := Check(NameNode, map[string]any{"replicaton": 2})
	if err == nil || !strings.Contains(err.Error(), `namenode: unknown config key "replicaton" (did you mean replication?`) ||
		!strings.Contains(err.Error(), "the namenode's keys: access_time_precision, auth, ") || !strings.Contains(err.Error(), "replication, replication_interval") {
		t.Errorf("Check(namenode, replicaton) = %v, want it refused with the namenode's keys listed", err)
	}
	err = Check(DataNode, map[string]any{"meta_dir": "/x"})
	if err == nil || !strings.Contains(err.Error(), `datanode: unknown config key "meta_dir"`) {
		t.Errorf("Check(datanode, meta_dir) = %v, want a namenode key refused on a datanode", err)
	}
	err = Check(NameNode, map[string]any{"replication": "three"})
	if err == nil || !strings.Contains(err.Error(), "namenode: replication: three does not fit") {
		t.Errorf("Check(namenode, replication: three) = %v, want the value refused", err)
	}
	err = Check(ResourceManager, map[string]any{"node_timeout": "soon"})
	if err == nil || !strings.Contains(err.Error(), "resourcemanager: node_timeout: soon does not fit") {
		t.Errorf("Check(resourcemanager, node_timeout: soon) = %v, want the duration refused", err)
	}
	// A topology's client role runs no daemon: keys for it would be lost.
	if err := Check("client", map[string]any{"x": 1}); err == nil || !strings.Contains(err.Error(), "client: no daemon config of that name") {
		t.Errorf("Check(client) = %v, want the role refused", err)
	}
	// Every key of every role, inline ones (tls, http_*, run_as) too.
	for role, key := range map[string]string{NameNode: "tls_ca_file", DataNode: "http_read_header_timeout", NodeManager: "run_as", ResourceManager: "allow_streaming"} {
		if !slices.Contains(Known(role), key) {
			t.Errorf("Known(%s) lacks %s: %v", role, key, Known(role))
		}
	}
}

// Keys writes the fields the launcher set and nothing else (a zero field
// keeps the daemon's default), and the overrides over them, zero values
// included.
func TestKeysWritesSetFieldsAndOverrides(t *testing.T) {
	c := NameNodeConfig{RPCAddr: "127.0.0.1:0", Replication: 2, TrashInterval: 24 * time.Hour,
		Racks: map[string]string{"dn1": "/r1"}, Wire: pki.Config{TLS: true, CAFile: "/ca.pem"}}
	got, err := Keys(c, map[string]any{"replication": 3}, map[string]any{"permissions_enabled": false})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"rpc_addr": "127.0.0.1:0", "replication": 3, "trash_interval": "24h0m0s",
		"racks": map[string]any{"dn1": "/r1"}, "tls": true, "tls_ca_file": "/ca.pem", "permissions_enabled": false}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Keys = %v\nwant %v", got, want)
	}
	if _, err := Keys(c, map[string]any{"replicaton": 3}); err == nil || !strings.Contains(err.Error(), `unknown config key "replicaton"`) {
		t.Errorf("Keys with a misspelt override = %v, want it refused", err)
	}
}

// What Marshal writes, Load reads back into the same typed config, and
// only the keys written: the defaults already in the target stay.
func TestMarshalLoadRoundTrip(t *testing.T) {
	c := DataNodeConfig{NameNode: "10.0.0.1:8020", DataDir: "/d", CacheCapacity: 1 << 28,
		HeartbeatInterval: 200 * time.Millisecond, DataDirPerm: 0o750}
	b, err := Marshal(c, map[string]any{"drop_cache_behind_reads": true})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "datanode.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	got := DataNodeConfig{Rack: "/default-rack", MaxXceivers: 4096}
	if err := Load(path, &got); err != nil {
		t.Fatal(err)
	}
	want := c
	want.DropCacheBehindReads, want.Rack, want.MaxXceivers = true, "/default-rack", 4096
	if !reflect.DeepEqual(got, want) {
		t.Errorf("loaded %+v\nwant   %+v", got, want)
	}
	os.WriteFile(path, []byte("namenode: x:1\nhostnam: dn1\n"), 0o600)
	err = Load(path, &got)
	if err == nil || !strings.Contains(err.Error(), "config "+path+": line 2: unknown config key \"hostnam\" (did you mean hostname?); known keys: advertise_ip, auth, ") {
		t.Errorf("Load of a misspelt key = %v, want an error naming the file, the key, the nearest one and the known ones", err)
	}
	os.WriteFile(path, []byte("scan_interval: soon\n"), 0o600)
	if err := Load(path, &got); err == nil || !strings.Contains(err.Error(), "config "+path+": ") || !strings.Contains(err.Error(), "soon") {
		t.Errorf("Load of a bad duration = %v, want an error naming the file and the value", err)
	}
}
