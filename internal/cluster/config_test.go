package cluster

import (
	"net"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"smarth/internal/auth"
	"smarth/internal/daemonconf"
	"smarth/internal/pki"
	"smarth/internal/ports"
)

// The namenode's console links to the resource manager's job pages
// (resourcemanager_web) whenever the launcher knows the resource
// manager's web address before the namenode starts, and never points at
// an address the resource manager does not listen on.
func TestNameNodeLinksToResourceManagerWeb(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		wantWeb string // "" = no resourcemanager_web key; "*" = the RM's own http_addr
	}{
		{"given address", Options{NodeManagers: true, ResourceManagerHTTP: "127.0.0.1:18088"}, "127.0.0.1:18088"},
		// Default: 8088 when free (a concrete port, linked), else port 0 (not linked).
		{"default", Options{NodeManagers: true}, "*"},
		// A namenode kept off well-known ports keeps the RM off them too:
		// port 0, unknown when the namenode starts.
		{"isolated", Options{NodeManagers: true, NameNodeRPC: "127.0.0.1:0", NameNodeHTTP: "127.0.0.1:0"}, ""},
		{"no MapReduce", Options{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.Home, o.Binary, o.DataNodes = t.TempDir(), "/bin/true", 2
			if err := o.setDefaults(); err != nil {
				t.Fatal(err)
			}
			nn := must(o.nameNodeConfig(layout{o.Home}))
			rmHTTP, _ := must(o.resourceManagerConfig(layout{o.Home}, "127.0.0.1:8020"))["http_addr"].(string)
			web, has := nn["resourcemanager_web"].(string)
			want := tc.wantWeb
			if want == "*" && anyPort(rmHTTP) {
				want = ""
			} else if want == "*" {
				want = rmHTTP
			}
			if want == "" && has {
				t.Errorf("namenode resourcemanager_web = %q, want none (resource manager http_addr %q)", web, rmHTTP)
			}
			if want != "" && (web != want || rmHTTP != want) {
				t.Errorf("namenode resourcemanager_web = %q, resource manager http_addr = %q; want both %q", web, rmHTTP, want)
			}
			if tc.name == "isolated" && rmHTTP != "127.0.0.1:0" {
				t.Errorf("resource manager http_addr = %q beside a port-0 namenode, want 127.0.0.1:0", rmHTTP)
			}
		})
	}
}

// What the launcher writes, the daemons' loader (daemonconf.Load, over
// defaults as the daemon holds them) reads as the launcher meant it: the
// generated values, the options' and the caller's keys over them, and the
// daemon's defaults for every key the launcher left alone.
func TestConfigsLoadAsIntended(t *testing.T) {
	o := Options{Home: t.TempDir(), Binary: "/bin/true", DataNodes: 2, NodeManagers: true, TLS: true,
		NameNodeRPC: "127.0.0.1:0", NameNodeHTTP: "127.0.0.1:0",
		Cache:    CacheOptions{CachePolicy: "bg", CacheCapacity: 64 << 20, DropBehind: true, Scheduler: "cachelocal"},
		NameNode: map[string]any{"permissions_enabled": false, "placement": "speedaware"},
		DataNode: map[string]any{"heartbeat_interval": "1s"},
	}
	if err := o.setDefaults(); err != nil {
		t.Fatal(err)
	}
	l := layout{o.Home}
	// load(o.xConfig(...))(&into) writes the keys as Up does and loads them.
	load := func(keys map[string]any, err error) func(into any) {
		return func(into any) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(o.Home, "conf", "x.yaml")
			if err := writeConfig(path, keys); err != nil {
				t.Fatal(err)
			}
			if err := daemonconf.Load(path, into); err != nil {
				t.Fatal(err)
			}
		}
	}
	tlsOf := func(name string) pki.Config {
		return pki.Config{TLS: true, CAFile: filepath.Join(o.Home, "tls", "ca.pem"),
			CertFile: filepath.Join(o.Home, "tls", name+".pem"), KeyFile: filepath.Join(o.Home, "tls", name+".key")}
	}

	// Stand-ins for the daemon's defaults: a key left alone keeps them.
	nn := daemonconf.NameNodeConfig{PermissionsEnabled: true, EditLogIO: "direct"}
	load(o.nameNodeConfig(l))(&nn)
	wantNN := daemonconf.NameNodeConfig{RPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", MetaDir: l.data("namenode"),
		EditLogIO: "direct", Replication: 2, Placement: "speedaware",
		Racks:         map[string]string{"dn1": "/rack-a", "dn2": "/rack-b", "127.0.0.1": "/rack-a"},
		TrashInterval: 24 * time.Hour, Auth: auth.Secure, AuthSecretFile: l.key("auth.key"), DatanodeKeyFile: l.key("datanode.key"),
		CachePolicy: "bg", Wire: tlsOf("namenode")}
	if !reflect.DeepEqual(nn, wantNN) {
		t.Errorf("namenode config loads as\n%+v\nwant\n%+v", nn, wantNN)
	}

	var dn daemonconf.DataNodeConfig
	load(o.dataNodeConfig(l, 1, "127.0.0.1:8020"))(&dn)
	wantDN := daemonconf.DataNodeConfig{NameNode: "127.0.0.1:8020", Hostname: "dn2", DataAddr: "127.0.0.1:0",
		IPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", DataDir: l.data("dn2"), Rack: "/rack-b",
		HeartbeatInterval: time.Second, CacheCapacity: 64 << 20, DropCacheBehindReads: true, DropCacheBehindWrites: true,
		DatanodeKeyFile: l.key("datanode.key"), Wire: tlsOf("dn2")}
	if !reflect.DeepEqual(dn, wantDN) {
		t.Errorf("datanode config loads as\n%+v\nwant\n%+v", dn, wantDN)
	}

	var rm daemonconf.ResourceManagerConfig
	load(o.resourceManagerConfig(l, "127.0.0.1:8020"))(&rm)
	if rm.Scheduler != "cachelocal" || !rm.AllowStreaming || rm.NameNode != "127.0.0.1:8020" || rm.Auth != auth.Secure ||
		rm.TokenFile != l.key("service.token") || len(rm.NodeManagerUsers) != 1 || rm.Wire != tlsOf("resourcemanager") {
		t.Errorf("resource manager config loads as %+v", rm)
	}

	var nm daemonconf.NodeManagerConfig
	load(o.nodeManagerConfig(l, 0, "127.0.0.1:8020", "127.0.0.1:9870", "127.0.0.1:8032"))(&nm)
	wantNM := daemonconf.NodeManagerConfig{ResourceManager: "127.0.0.1:8032", NameNode: "127.0.0.1:8020", Hostname: "dn1",
		Rack: "/rack-a", RPCAddr: "127.0.0.1:0", ShuffleAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", WorkDir: l.data("nm1"),
		TokenFile: l.key("service.token"), NameNodeHTTP: "127.0.0.1:9870", Wire: tlsOf("nm1")}
	if !reflect.DeepEqual(nm, wantNM) {
		t.Errorf("node manager config loads as\n%+v\nwant\n%+v", nm, wantNM)
	}
}

// A misspelt key given to `smarth cluster up --namenode-conf` (or any
// Options extra key) is refused before anything starts, naming the key,
// the one probably meant and the daemon's keys; before, the namenode
// exited at start with "field replicaton not found in type namenode.Config".
func TestMisspeltExtraKeyRefusedUpFront(t *testing.T) {
	for role, o := range map[string]Options{
		"namenode":        {NameNode: map[string]any{"replicaton": 2}},
		"datanode":        {DataNode: map[string]any{"cache_capacty": 1}},
		"resourcemanager": {ResourceManager: map[string]any{"schedular": "fifo"}},
		"nodemanager":     {NodeManager: map[string]any{"map_slot": 4}},
	} {
		o.Home, o.Binary, o.DataNodes = t.TempDir(), "/bin/true", 1
		err := o.setDefaults()
		if err == nil || !strings.Contains(err.Error(), role+": unknown config key") || !strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%s: setDefaults = %v, want the misspelt key refused", role, err)
		}
	}
}

// An HA group's ports, chosen before any member starts, are distinct and
// lie below the kernel's ephemeral range, where no outgoing connection's
// source port can take them before the member binds (ports.Listen).
func TestHAPortsBelowEphemeralRange(t *testing.T) {
	o := &Options{NameNodes: 5}
	ps, err := o.pickHAPorts()
	if err != nil {
		t.Fatal(err)
	}
	low := ports.EphemeralLow()
	seen := map[string]bool{}
	for _, p := range ps {
		for _, a := range []string{p.rpc, p.http, p.raft} {
			if seen[a] {
				t.Fatalf("%s given twice: %+v", a, ps)
			}
			seen[a] = true
			_, port, err := net.SplitHostPort(a)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := strconv.Atoi(port); low > 11000 && n >= low {
				t.Errorf("%s is in the ephemeral range (from %d)", a, low)
			}
		}
	}
}
