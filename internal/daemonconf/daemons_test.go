package daemonconf_test

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"smarth/internal/daemonconf"
	"smarth/internal/datanode"
	"smarth/internal/namenode"
	"smarth/internal/nodemanager"
	"smarth/internal/resourcemanager"
)

// Each daemon's Config has exactly the keys daemonconf knows for its role:
// a key added to a daemon's Config beside the embedded type would be one
// the daemon reads but the launchers refuse.
func TestDaemonConfigsHaveTheKnownKeys(t *testing.T) {
	for role, cfg := range map[string]any{
		daemonconf.NameNode: namenode.DefaultConfig(), daemonconf.DataNode: datanode.DefaultConfig(),
		daemonconf.ResourceManager: resourcemanager.DefaultConfig(), daemonconf.NodeManager: nodemanager.DefaultConfig(),
	} {
		b, err := yaml.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if got, want := slices.Sorted(maps.Keys(m)), daemonconf.Known(role); !slices.Equal(got, want) {
			t.Errorf("%s: the daemon's Config has keys %v\ndaemonconf knows %v", role, got, want)
		}
	}
}

// What a launcher writes with daemonconf.Marshal, the daemon's loader
// (daemonconf.Load over its DefaultConfig, as `smarth namenode --config`
// does) reads as intended: the fields set, the overrides over them (a
// zero one too), and the daemon's defaults for everything else.
func TestMarshalThenDaemonLoad(t *testing.T) {
	dir := t.TempDir()
	// load writes the file Marshal made (b, err) and loads it into into.
	load := func(t *testing.T, b []byte, err error, into any) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "conf.yaml")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := daemonconf.Load(path, into); err != nil {
			t.Fatal(err)
		}
	}

	nn := daemonconf.NameNodeConfig{MetaDir: "/m", Replication: 2, Racks: map[string]string{"dn1": "/r1"}}
	gotNN := namenode.DefaultConfig()
	b, err := daemonconf.Marshal(nn, map[string]any{"permissions_enabled": false})
	load(t, b, err, &gotNN)
	wantNN := namenode.DefaultConfig()
	wantNN.MetaDir, wantNN.Replication, wantNN.Racks, wantNN.PermissionsEnabled = "/m", 2, nn.Racks, false
	if !reflect.DeepEqual(gotNN, wantNN) {
		t.Errorf("namenode loaded %+v\nwant %+v", gotNN, wantNN)
	}

	dn := daemonconf.DataNodeConfig{NameNode: "10.0.0.1:8020", DataDir: "/d", CacheCapacity: 1 << 28}
	gotDN := datanode.DefaultConfig()
	b, err = daemonconf.Marshal(dn, map[string]any{"heartbeat_interval": "1s"})
	load(t, b, err, &gotDN)
	wantDN := datanode.DefaultConfig()
	wantDN.NameNode, wantDN.DataDir, wantDN.CacheCapacity, wantDN.HeartbeatInterval = "10.0.0.1:8020", "/d", 1<<28, 1e9
	if !reflect.DeepEqual(gotDN.DataNodeConfig, wantDN.DataNodeConfig) {
		t.Errorf("datanode loaded %+v\nwant %+v", gotDN.DataNodeConfig, wantDN.DataNodeConfig)
	}

	rm := daemonconf.ResourceManagerConfig{NameNode: "10.0.0.1:8020", AllowStreaming: true}
	gotRM := resourcemanager.DefaultConfig()
	b, err = daemonconf.Marshal(rm, map[string]any{"cache_skips": 0})
	load(t, b, err, &gotRM)
	wantRM := resourcemanager.DefaultConfig()
	wantRM.NameNode, wantRM.AllowStreaming, wantRM.CacheSkips = "10.0.0.1:8020", true, 0
	if !reflect.DeepEqual(gotRM.ResourceManagerConfig, wantRM.ResourceManagerConfig) {
		t.Errorf("resource manager loaded %+v\nwant %+v", gotRM.ResourceManagerConfig, wantRM.ResourceManagerConfig)
	}

	nm := daemonconf.NodeManagerConfig{WorkDir: "/w", Hostname: "dn1"}
	gotNM := nodemanager.DefaultConfig()
	b, err = daemonconf.Marshal(nm, map[string]any{"run_as_user": "alice"})
	load(t, b, err, &gotNM)
	wantNM := nodemanager.DefaultConfig()
	wantNM.WorkDir, wantNM.Hostname, wantNM.Containers.RunAsUser = "/w", "dn1", "alice"
	if !reflect.DeepEqual(gotNM.NodeManagerConfig, wantNM.NodeManagerConfig) {
		t.Errorf("node manager loaded %+v\nwant %+v", gotNM.NodeManagerConfig, wantNM.NodeManagerConfig)
	}
}
