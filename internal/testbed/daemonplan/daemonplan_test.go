package daemonplan

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"smarth/internal/daemonconf"
	"smarth/internal/testbed/topo"
)

const two = `
name: two
daemons:
  namenode: {placement: speedaware, block_size: 8388608}
racks: [{name: rack-a}, {name: rack-b}]
hosts:
  - {name: nn, rack: rack-a, roles: [namenode, resourcemanager, client]}
  - {name: dn1, rack: rack-a, roles: [datanode, nodemanager], config: {datanode: {sync_on_close: true}}}
  - {name: dn2, rack: rack-b, roles: [datanode, nodemanager]}
`

func plan(t *testing.T, src string) []Daemon {
	t.Helper()
	top, err := topo.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Plan(top, "/w")
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestPlan(t *testing.T) {
	ds := plan(t, two)
	var got []string
	for _, d := range ds {
		got = append(got, d.Name())
	}
	want := "namenode@nn datanode@dn1 datanode@dn2 resourcemanager@nn nodemanager@dn1 nodemanager@dn2"
	if strings.Join(got, " ") != want {
		t.Fatalf("order %v, want %s", got, want)
	}
	nn, dn1, nm2 := ds[0], ds[1], ds[5]
	out, _ := yaml.Marshal(nn.Config)
	for _, line := range []string{
		"rpc_addr: 10.77.1.11:8020", "http_addr: 10.77.1.11:9870", "meta_dir: /w/nn/data/namenode",
		"placement: speedaware", "block_size: 8388608", "replication: 2",
		"dn2: /rack-b", "10.77.2.11: /rack-b", "nn: /rack-a",
	} {
		if !strings.Contains(string(out), line) {
			t.Errorf("namenode config lacks %q:\n%s", line, out)
		}
	}
	if dn1.Config["namenode"] != "10.77.1.11:8020" || dn1.Config["hostname"] != "dn1" || dn1.Config["rack"] != "/rack-a" ||
		dn1.Config["data_addr"] != "10.77.1.12:9866" || dn1.Config["sync_on_close"] != true || dn1.Config["advertise_ip"] != "10.77.1.12" {
		t.Errorf("dn1 config = %v", dn1.Config)
	}
	if _, ok := ds[2].Config["sync_on_close"]; ok {
		t.Error("dn1's host config leaked into dn2")
	}
	if nm2.Config["hostname"] != "dn2" || nm2.Config["resourcemanager"] != "10.77.1.11:8032" || nm2.Config["rack"] != "/rack-b" {
		t.Errorf("nm on dn2 config = %v", nm2.Config)
	}
	if a := strings.Join(nn.Args(), " "); a != "namenode --config /w/nn/conf/namenode.yaml --ready-file /w/nn/run/namenode.ready --log-file /w/nn/logs/namenode.log" {
		t.Errorf("args %q", a)
	}
	if len(nn.Proxies) != 0 {
		t.Errorf("proxies without proxy mode: %v", nn.Proxies)
	}
	if s := Summary(ds)[0]; !strings.Contains(s, "rpc 10.77.1.11:8020") {
		t.Errorf("summary %q", s)
	}
}

func TestPlanProxyMode(t *testing.T) {
	ds := plan(t, strings.Replace(two, "name: two\n", "name: two\nlatency_mode: proxy\n", 1))
	nn, dn1, nm1 := ds[0], ds[1], ds[4]
	if nn.Config["rpc_addr"] != "127.0.0.1:8020" || len(nn.Proxies) != 2 ||
		nn.Proxies[0] != (Proxy{Host: "nn", Listen: "10.77.1.11:8020", Target: "127.0.0.1:8020"}) {
		t.Errorf("namenode behind a proxy: config %v proxies %v", nn.Config["rpc_addr"], nn.Proxies)
	}
	if dn1.Config["advertise_ip"] != "10.77.1.12" || dn1.Config["data_addr"] != "127.0.0.1:9866" || dn1.Config["namenode"] != "10.77.1.11:8020" {
		t.Errorf("datanode behind a proxy: %v", dn1.Config)
	}
	if len(nm1.Proxies) != 0 || nm1.Config["rpc_addr"] != "10.77.1.12:8040" {
		t.Errorf("node manager should not be proxied: %v %v", nm1.Proxies, nm1.Config)
	}
	if s := Summary(ds)[0]; !strings.Contains(s, "rpc 10.77.1.11:8020") {
		t.Errorf("summary should show the public address: %q", s)
	}
}

func TestNoDaemons(t *testing.T) {
	ds := plan(t, "name: bare\nracks: [{name: a}]\nhosts: [{name: h1, rack: a}, {name: h2, rack: a, roles: [client]}]\n")
	if len(ds) != 0 {
		t.Errorf("plan for hosts without daemons: %v", ds)
	}
}

// The namenode resolves clients by the address their calls come from, so a
// host that only runs clients is in the racks map, by name and address.
func TestRacksMapHasClientOnlyHosts(t *testing.T) {
	ds := plan(t, "name: edge\nracks: [{name: a}, {name: b}]\nhosts: [{name: nn, rack: a, roles: [namenode]}, {name: dn1, rack: a, roles: [datanode]}, {name: edge, rack: b, roles: [client]}]\n")
	racks, _ := ds[0].Config["racks"].(map[string]any)
	if racks["edge"] != "/b" || racks["10.77.2.11"] != "/b" {
		t.Errorf("racks map %v lacks the client-only host edge (10.77.2.11) in /b", racks)
	}
}

// Every generated config is secure: the namenode and resource manager
// check credentials, each daemon names its host's copies of the secrets
// it needs and no others.
func TestPlanSecure(t *testing.T) {
	ds := plan(t, two)
	want := map[string]string{
		"namenode@nn":        "auth.key datanode.key",
		"datanode@dn1":       "datanode.key",
		"resourcemanager@nn": "auth.key service.token",
		"nodemanager@dn2":    "service.token",
	}
	for _, d := range ds {
		w, ok := want[d.Name()]
		if !ok {
			continue
		}
		if got := strings.Join(d.Secrets, " "); got != w {
			t.Errorf("%s needs secrets %q, want %q", d.Name(), got, w)
		}
	}
	nn, dn1, rm, nm2 := ds[0], ds[1], ds[3], ds[5]
	if nn.Config["auth"] != "secure" || rm.Config["auth"] != "secure" {
		t.Errorf("auth: namenode %v, resource manager %v; want secure", nn.Config["auth"], rm.Config["auth"])
	}
	if nn.Config["auth_secret_file"] != "/w/nn/keys/auth.key" || dn1.Config["datanode_key_file"] != "/w/dn1/keys/datanode.key" ||
		nm2.Config["token_file"] != "/w/dn2/keys/service.token" {
		t.Errorf("key paths: nn %v, dn1 %v, nm2 %v", nn.Config["auth_secret_file"], dn1.Config["datanode_key_file"], nm2.Config["token_file"])
	}
}

// What the plan gives each daemon's config file, the daemons' loader
// (daemonconf.Load, over defaults as the daemon holds them) reads as
// intended: the generated values, the topology's keys over them (the
// host's over the file's), and the daemon's defaults for the rest.
func TestPlanConfigsLoadAsIntended(t *testing.T) {
	// The host's keys win over the file's: dn1 syncs on close, dn2 not.
	ds := plan(t, strings.Replace(two, "block_size: 8388608}", "block_size: 8388608, permissions_enabled: false}\n  datanode: {sync_on_close: false, scan_interval: 1h}", 1))
	// loadAs loads d's config over into (stand-in defaults) and wants it
	// to equal want.
	loadAs := func(d Daemon, into, want any) {
		t.Helper()
		load(t, d, into)
		if got := reflect.ValueOf(into).Elem().Interface(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s config loads as\n%+v\nwant\n%+v", d.Name(), got, want)
		}
	}
	nn := daemonconf.NameNodeConfig{PermissionsEnabled: true, EditLogIO: "direct"} // stand-in defaults
	loadAs(ds[0], &nn, daemonconf.NameNodeConfig{RPCAddr: "10.77.1.11:8020", HTTPAddr: "10.77.1.11:9870", MetaDir: "/w/nn/data/namenode",
		EditLogIO: "direct", BlockSize: 8 << 20, Replication: 2, Placement: "speedaware", DefaultRack: "/default-rack",
		Racks: map[string]string{"nn": "/rack-a", "10.77.1.11": "/rack-a", "dn1": "/rack-a", "10.77.1.12": "/rack-a",
			"dn2": "/rack-b", "10.77.2.11": "/rack-b"},
		Auth: "secure", AuthSecretFile: "/w/nn/keys/auth.key", DatanodeKeyFile: "/w/nn/keys/datanode.key"})
	var dn1 daemonconf.DataNodeConfig
	loadAs(ds[1], &dn1, daemonconf.DataNodeConfig{NameNode: "10.77.1.11:8020", Hostname: "dn1", AdvertiseIP: "10.77.1.12",
		DataAddr: "10.77.1.12:9866", IPCAddr: "10.77.1.12:9867", HTTPAddr: "10.77.1.12:9864", DataDir: "/w/dn1/data/datanode",
		Rack: "/rack-a", DatanodeKeyFile: "/w/dn1/keys/datanode.key", SyncOnClose: true, ScanInterval: time.Hour})
	dn2 := daemonconf.DataNodeConfig{SyncOnClose: true} // stand-in default the file's false overrides
	load(t, ds[2], &dn2)
	if dn2.SyncOnClose || dn2.ScanInterval != time.Hour {
		t.Errorf("dn2 config loads as %+v, want the file-wide sync_on_close: false and scan_interval: 1h", dn2)
	}
	var rm daemonconf.ResourceManagerConfig
	loadAs(ds[3], &rm, daemonconf.ResourceManagerConfig{RPCAddr: "10.77.1.11:8032", HTTPAddr: "10.77.1.11:8088", NameNode: "10.77.1.11:8020",
		Auth: "secure", AuthSecretFile: "/w/nn/keys/auth.key", TokenFile: "/w/nn/keys/service.token"})
	var nm2 daemonconf.NodeManagerConfig
	loadAs(ds[5], &nm2, daemonconf.NodeManagerConfig{ResourceManager: "10.77.1.11:8032", NameNode: "10.77.1.11:8020", Hostname: "dn2",
		Rack: "/rack-b", RPCAddr: "10.77.2.11:8040", ShuffleAddr: "10.77.2.11:13562", HTTPAddr: "10.77.2.11:8042",
		WorkDir: "/w/dn2/data/nodemanager", TokenFile: "/w/dn2/keys/service.token", NameNodeHTTP: "10.77.1.11:9870"})
}

const haTopology = `
name: ha
latency_mode: proxy
racks: [{name: rack-a}, {name: rack-b}]
hosts:
  - {name: nn, rack: rack-a, roles: [namenode, resourcemanager]}
  - {name: dn1, rack: rack-a, roles: [datanode, nodemanager, namenode]}
  - {name: dn2, rack: rack-b, roles: [datanode, namenode]}
`

// An HA group on the testbed: each namenode host runs a member named
// nn1..nnN in file order (the first bootstraps), every member knows every
// other by its public addresses and binds its raft port on its host's own
// address (even behind a delay proxy), and every daemon speaks TLS with a
// certificate of its own, the members' named after their ids (what the
// raft port admits). Clients and daemons get the members as a list.
func TestPlanHAGroup(t *testing.T) {
	ds := plan(t, haTopology)
	var got []string
	for _, d := range ds {
		got = append(got, d.Name())
	}
	if want := "namenode@nn namenode@dn1 namenode@dn2 datanode@dn1 datanode@dn2 resourcemanager@nn nodemanager@dn1"; strings.Join(got, " ") != want {
		t.Fatalf("order %v, want %s", got, want)
	}
	list := "10.77.1.11:8020,10.77.1.12:8020,10.77.2.11:8020"
	peers := map[string]daemonconf.NameNodeHAPeer{
		"nn1": {RPC: "10.77.1.11:8020", HTTP: "10.77.1.11:9870", Raft: "10.77.1.11:8485"},
		"nn2": {RPC: "10.77.1.12:8020", HTTP: "10.77.1.12:9870", Raft: "10.77.1.12:8485"},
		"nn3": {RPC: "10.77.2.11:8020", HTTP: "10.77.2.11:9870", Raft: "10.77.2.11:8485"},
	}
	for i, id := range []string{"nn1", "nn2", "nn3"} {
		var c daemonconf.NameNodeConfig
		load(t, ds[i], &c)
		if c.HA.ID != id || c.HA.Bootstrap != (i == 0) || !reflect.DeepEqual(c.HA.Peers, peers) {
			t.Errorf("%s: ha %+v, want id %s, bootstrap %v, peers %v", ds[i].Name(), c.HA, id, i == 0, peers)
		}
		if c.RPCAddr != "127.0.0.1:8020" {
			t.Errorf("%s binds %s, want loopback behind its proxy", ds[i].Name(), c.RPCAddr)
		}
		host := ds[i].Host
		if ds[i].Cert == nil || ds[i].Cert.Name != id || !slices.Contains(ds[i].Cert.Hosts, peers[id].Raft[:len(peers[id].Raft)-5]) ||
			!slices.Contains(ds[i].Cert.Hosts, host) {
			t.Errorf("%s: certificate %+v, want one named %s for the host's name and address", ds[i].Name(), ds[i].Cert, id)
		}
		if want := "/w/" + host + "/keys/" + id + ".pem"; !c.Wire.TLS || c.Wire.CertFile != want || c.Wire.CAFile != "/w/"+host+"/keys/ca.pem" {
			t.Errorf("%s: tls %+v, want on with %s", ds[i].Name(), c.Wire, want)
		}
	}
	for _, d := range ds[3:] {
		if d.Config["namenode"] != list {
			t.Errorf("%s: namenode %v, want every member: %s", d.Name(), d.Config["namenode"], list)
		}
		if d.Config["tls"] != true || d.Cert == nil || d.Cert.Name == "nn1" || !slices.Contains(d.Secrets, "ca.pem") || slices.Contains(d.Secrets, "ca.key") {
			t.Errorf("%s: tls %v, certificate %+v, secrets %v: want TLS with a certificate of its own and the CA's certificate only", d.Name(), d.Config["tls"], d.Cert, d.Secrets)
		}
	}
	if nm := ds[6]; nm.Config["namenode_http"] != "10.77.1.11:9870,10.77.1.12:9870,10.77.2.11:9870" {
		t.Errorf("node manager's namenode_http %v, want every member's web address", nm.Config["namenode_http"])
	}
	// A single namenode has no ha keys and, without tls: true, no TLS.
	for _, d := range plan(t, two) {
		if d.Cert != nil || d.Config["tls"] == true || d.Config["ha_id"] != nil {
			t.Errorf("%s without HA: certificate %v, tls %v, ha_id %v", d.Name(), d.Cert, d.Config["tls"], d.Config["ha_id"])
		}
	}
}

// load writes d's config as the testbed does and loads it over into with
// the daemons' loader.
func load(t *testing.T, d Daemon, into any) {
	t.Helper()
	b, err := yaml.Marshal(d.Config)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := daemonconf.Load(path, into); err != nil {
		t.Fatal(err)
	}
}

// A topology built in code (not through topo.Parse) with a misspelt key
// still fails the plan, naming the daemon and the key.
func TestPlanRefusesUnknownKey(t *testing.T) {
	top, err := topo.Parse([]byte(two))
	if err != nil {
		t.Fatal(err)
	}
	top.Daemons["datanode"] = map[string]any{"sync_on_clos": true}
	if _, err := Plan(top, "/w"); err == nil || !strings.Contains(err.Error(), `datanode@dn1: datanode: unknown config key "sync_on_clos"`) {
		t.Errorf("Plan = %v, want the misspelt key refused", err)
	}
}
