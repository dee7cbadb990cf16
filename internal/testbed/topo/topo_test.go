package topo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const small = `
name: small
defaults: {nic: 200mbit, same_rack: 200mbit, cross_rack: 50Mbit/s}
racks:
  - {name: rack-a}
  - {name: rack-b, uplink: 40mbit}
hosts:
  - {name: nn, rack: rack-a, roles: [namenode, client]}
  - {name: dn1, rack: rack-a, roles: [datanode], nic: 100mbit, disk_write: 20MB/s}
  - {name: dn2, rack: rack-b, roles: [datanode], latency: 5ms, loss: 0.5%}
  - {name: dn3, rack: /rack-b, roles: [datanode, nodemanager]}
  - {name: rm, rack: rack-a, roles: [resourcemanager]}
`

func mustParse(t *testing.T, s string) *Topology {
	t.Helper()
	top, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return top
}

func TestParseAssignsAddressesAndLimits(t *testing.T) {
	top := mustParse(t, small)
	want := map[string]string{"nn": "10.77.1.11", "dn1": "10.77.1.12", "dn2": "10.77.2.11", "dn3": "10.77.2.12", "rm": "10.77.1.13"}
	for name, addr := range want {
		h, ok := top.Host(name)
		if !ok {
			t.Fatalf("host %s missing", name)
		}
		if h.Addr.String() != addr {
			t.Errorf("%s: addr %s, want %s", name, h.Addr, addr)
		}
	}
	b, _ := top.Rack("rack-b")
	if b.Subnet.String() != "10.77.2.0/24" || b.Gateway.String() != "10.77.2.1" || b.Uplink != 40e6 || b.Path() != "/rack-b" {
		t.Errorf("rack-b = %+v", b)
	}
	dn1, _ := top.Host("dn1")
	if dn1.Shape.NIC != 100e6 || dn1.Shape.SameRack != 200e6 || dn1.Shape.CrossRack != 50e6 || dn1.Shape.DiskWrite != 20e6 {
		t.Errorf("dn1 shape = %+v", dn1.Shape)
	}
	dn2, _ := top.Host("dn2")
	if dn2.Shape.Latency != 5*time.Millisecond || dn2.Shape.LossPct != 0.5 || !dn2.Shape.Delayed() {
		t.Errorf("dn2 shape = %+v", dn2.Shape)
	}
	if !top.Delayed() || !top.Lossy() || !top.DiskCapped() {
		t.Errorf("Delayed/Lossy/DiskCapped = %v/%v/%v", top.Delayed(), top.Lossy(), top.DiskCapped())
	}
	if got := len(top.WithRole(DataNode)); got != 3 {
		t.Errorf("%d datanodes, want 3", got)
	}
	if top.LatencyMode != LatencyNetem {
		t.Errorf("latency mode %q", top.LatencyMode)
	}
}

func TestParseErrors(t *testing.T) {
	base := "name: x\nracks: [{name: a}, {name: b}]\n"
	cases := []struct{ name, yaml, want string }{
		{"unknown rack", base + "hosts: [{name: h1, rack: c}]", `host h1: unknown rack "c" (racks: a, b)`},
		{"no rack", base + "hosts: [{name: h1}]", `host h1: no rack given`},
		{"duplicate host", base + "hosts: [{name: h1, rack: a}, {name: h1, rack: b}]", `duplicate host "h1"`},
		{"rate without unit", base + "hosts: [{name: h1, rack: a, nic: 50}]", `host h1: nic: rate "50" has no unit`},
		{"ambiguous mbps", base + "hosts: [{name: h1, rack: a, cross_rack: 50mbps}]", `ambiguous`},
		{"bytes for network", base + "hosts: [{name: h1, rack: a, nic: 50MB/s}]", `in bytes`},
		{"disk without unit", base + "hosts: [{name: h1, rack: a, disk_read: 40}]", `disk_read: disk rate "40" has no unit`},
		{"bad latency", base + "hosts: [{name: h1, rack: a, latency: 5}]", `latency: "5" is not a duration`},
		{"bad loss", base + "hosts: [{name: h1, rack: a, loss: 0.5}]", `loss: "0.5": write a percentage`},
		{"unknown key", base + "hosts: [{name: h1, rack: a, nicc: 1gbit}]", `field nicc not found`},
		{"unknown role", base + "hosts: [{name: h1, rack: a, roles: [master]}]", `unknown role "master"`},
		{"two namenodes", base + "hosts: [{name: h1, rack: a, roles: [namenode]}, {name: h2, rack: a, roles: [namenode]}]", `2 hosts have the namenode role (h1, h2): give it to 1 host, or to 3 or 5`},
		{"an HA group without TLS", base + "tls: false\nhosts: [{name: h1, rack: a, roles: [namenode]}, {name: h2, rack: a, roles: [namenode]}, {name: h3, rack: a, roles: [namenode]}]", `tls: false, but 3 hosts have the namenode role`},
		{"datanode alone", base + "hosts: [{name: h1, rack: a, roles: [datanode]}]", `datanodes but no namenode`},
		{"nm alone", base + "hosts: [{name: h0, rack: a, roles: [namenode]}, {name: h1, rack: a, roles: [nodemanager]}]", `no resourcemanager`},
		{"duplicate rack", "name: x\nracks: [{name: a}, {name: a}]\nhosts: [{name: h1, rack: a}]", `duplicate rack "a"`},
		{"bad name", "name: X_1\nracks: [{name: a}]\nhosts: [{name: h1, rack: a}]", `name "X_1"`},
		{"public subnet", "name: x\nsubnet: 8.8.0.0/16\nracks: [{name: a}]\nhosts: [{name: h1, rack: a}]", `private IPv4 /16`},
		{"no hosts", "name: x\nracks: [{name: a}]\n", `no hosts`},
		{"no racks", "name: x\nhosts: [{name: h1, rack: a}]\n", `no racks`},
		{"bad latency mode", "name: x\nlatency_mode: tc\nracks: [{name: a}]\nhosts: [{name: h1, rack: a}]", `latency_mode "tc"`},
		{"bad uplink", "name: x\nracks: [{name: a, uplink: fast}]\nhosts: [{name: h1, rack: a}]", `rack a: uplink`},
		{"config for missing role", base + "hosts: [{name: h1, rack: a, roles: [client], config: {datanode: {x: 1}}}]", `config for role "datanode"`},
		{"daemon role", "name: x\ndaemons: {nn: {}}\nracks: [{name: a}]\nhosts: [{name: h1, rack: a}]", `daemons: unknown role "nn"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded, want error containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q\nwant it to contain %q", err, c.want)
			}
		})
	}
}

func TestParseRate(t *testing.T) {
	good := map[string]Rate{"50mbit": 50e6, "50Mbit/s": 50e6, "216 Mbit/s": 216e6, "1gbit": 1e9, "1.5Gbit/s": 1.5e9, "800kbit": 800e3, "100Mb/s": 100e6}
	for s, want := range good {
		got, err := ParseRate(s)
		if err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "50", "fast", "50Mbps", "50mbps", "50MB/s", "50furlongs", "1bit", "1e3mbit"} {
		if r, err := ParseRate(s); err == nil {
			t.Errorf("ParseRate(%q) = %v, want an error", s, r)
		}
	}
	if got := Rate(216e6).String(); got != "216Mbit/s" {
		t.Errorf("String = %q", got)
	}
	if got := Rate(2e9).String(); got != "2Gbit/s" {
		t.Errorf("String = %q", got)
	}
	if got := Rate(50e6).TC(); got != "50000000bit" {
		t.Errorf("TC = %q", got)
	}
	if got, err := ParseByteRate("50MiB/s"); err != nil || got != 50<<20 {
		t.Errorf("ParseByteRate = %v, %v", got, err)
	}
}

func TestPathRate(t *testing.T) {
	top := mustParse(t, small)
	h := func(n string) *Host { x, _ := top.Host(n); return x }
	cases := []struct {
		src, dst string
		want     string
	}{
		{"nn", "rm", "200Mbit/s (nic nn, same_rack nn, nic rm, same_rack rm)"},
		{"nn", "dn1", "100Mbit/s (nic dn1)"},
		{"dn1", "nn", "100Mbit/s (nic dn1)"},
		{"nn", "dn2", "40Mbit/s (uplink rack-b)"},
		{"dn2", "dn3", "200Mbit/s (nic dn2, same_rack dn2, nic dn3, same_rack dn3)"},
	}
	for _, c := range cases {
		if got := top.PathRate(h(c.src), h(c.dst)).String(); got != c.want {
			t.Errorf("%s -> %s: %s, want %s", c.src, c.dst, got, c.want)
		}
	}
}

func TestFanIn(t *testing.T) {
	top := mustParse(t, `
name: fan
racks: [{name: a}, {name: b, uplink: 30mbit}]
hosts:
  - {name: h1, rack: a, nic: 100mbit, same_rack: 80mbit, cross_rack: 60mbit}
  - {name: h2, rack: a}
  - {name: h3, rack: a, nic: 10mbit}
  - {name: h4, rack: b}
  - {name: h5, rack: b}
`)
	h := func(n string) *Host { x, _ := top.Host(n); return x }
	cases := []struct {
		hub   string
		peers []string
		in    bool
		want  Rate
	}{
		{"h1", []string{"h2", "h4"}, true, 100e6},       // 80 same + 30 uplink, NIC 100
		{"h1", []string{"h3", "h4"}, true, 40e6},        // 10 + 30
		{"h1", []string{"h4", "h5"}, true, 30e6},        // both through b's uplink
		{"h1", []string{"h2", "h4"}, false, 100e6},      // symmetric
		{"h2", []string{"h1", "h3"}, true, 90e6},        // h1 sends 80 to its rack, h3 10
		{"h4", []string{"h5", "h1"}, true, 0},           // h5 unlimited: no limit at all
		{"h1", []string{"h2", "h3", "h4"}, true, 100e6}, // NIC
	}
	for _, c := range cases {
		var peers []*Host
		for _, p := range c.peers {
			peers = append(peers, h(p))
		}
		var e Expectation
		var err error
		if c.in {
			e, err = top.FanIn(h(c.hub), peers)
		} else {
			e, err = top.FanOut(h(c.hub), peers)
		}
		if err != nil || e.Rate != c.want {
			t.Errorf("fan %v %s %v = %v, %v; want %v", c.in, c.hub, c.peers, e.Rate, err, c.want)
		}
	}
	if _, err := top.FanIn(h("h1"), []*Host{h("h1")}); err == nil {
		t.Error("FanIn with itself succeeded")
	}
}

func TestProbes(t *testing.T) {
	top := mustParse(t, `
name: probes
defaults: {nic: 216mbit, cross_rack: 100mbit}
racks: [{name: a}, {name: b}]
hosts:
  - {name: h1, rack: a}
  - {name: h2, rack: a}
  - {name: h3, rack: b}
  - {name: h4, rack: b}
`)
	var got []string
	for _, p := range top.Probes(false) {
		got = append(got, p.String()+" "+p.Expect.Rate.String())
	}
	want := []string{
		"same-rack h1 -> h2 216Mbit/s",
		"cross-rack h1 -> h3 100Mbit/s",
		"nic-in h2,h3 -> h1 216Mbit/s",
		"nic-out h1 -> h2,h3 216Mbit/s",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("probes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(top.Probes(true)); n != 12+2 {
		t.Errorf("all probes: %d, want 14", n)
	}
}

// TestShippedTopologies checks that every file under testbed/ parses.
func TestShippedTopologies(t *testing.T) {
	files, _ := filepath.Glob("../../../testbed/*.yaml")
	if len(files) == 0 {
		t.Fatal("no topology files found under testbed/ (../../../testbed/*.yaml): they ship with the repo, so the glob or the files moved")
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%v", err)
		}
	}
	if _, err := os.Stat("../../../testbed/two-rack-100.yaml"); err != nil {
		t.Errorf("the two-rack scenario file is missing: %v", err)
	}
}

// The seed 003 keys (cache policy, cache capacity, scheduler, ...) are
// accepted under their own role, at the top and per host, and checked
// before anything is built.
func TestCacheKeys(t *testing.T) {
	good := `
name: x
daemons:
  namenode: {cache_policy: bg, cache_window: 30m, cache_ttl: 10m, cache_affinity: {grep: 0.638}}
  datanode: {cache_capacity: 268435456, drop_cache_behind_reads: true, drop_cache_behind_writes: true}
  resourcemanager: {scheduler: cachelocal, cache_skips: 3, max_allocations: 2}
racks: [{name: a}]
hosts:
  - {name: nn, rack: a, roles: [namenode, resourcemanager]}
  - {name: w1, rack: a, roles: [datanode, nodemanager], config: {datanode: {cache_capacity: 134217728}}}
`
	top := mustParse(t, good)
	if top.Daemons["namenode"]["cache_policy"] != "bg" || top.Daemons["resourcemanager"]["scheduler"] != "cachelocal" {
		t.Errorf("daemons = %v, want the cache policy and scheduler kept", top.Daemons)
	}
	base := "name: x\nracks: [{name: a}]\nhosts: [{name: h1, rack: a, roles: [namenode, datanode]}]\n"
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown policy", base + "daemons: {namenode: {cache_policy: lfu}}", `daemons: namenode: cache_policy: unknown cache policy "lfu" (known: bg, ca, lru, none, pinned)`},
		{"unknown scheduler", base + "daemons: {resourcemanager: {scheduler: fair}}", `unknown scheduler "fair" (known: cachelocal, delay, fifo)`},
		{"wrong role", base + "daemons: {datanode: {cache_policy: lru}}", `cache_policy is a namenode key, not a datanode one`},
		{"size as text", base + "daemons: {datanode: {cache_capacity: 256MiB}}", `cache_capacity: want a whole number (bytes for sizes)`},
		{"per host", "name: x\nracks: [{name: a}]\nhosts: [{name: h1, rack: a, roles: [namenode, datanode], config: {datanode: {drop_cache_behind_reads: maybe}}}]",
			`host h1: config: datanode: drop_cache_behind_reads: want true or false`},
		// A misspelt key is refused here, naming it; before, the daemon
		// refused it at start, once the namespaces were built.
		{"misspelt key", base + "daemons: {namenode: {replicaton: 2}}", `daemons: namenode: unknown config key "replicaton" (did you mean replication?`},
		{"misspelt host key", "name: x\nracks: [{name: a}]\nhosts: [{name: h1, rack: a, roles: [namenode, datanode], config: {datanode: {data_dri: /x}}}]",
			`host h1: config: datanode: unknown config key "data_dri" (did you mean data_dir?`},
		{"value of the wrong type", base + "daemons: {namenode: {replication: three}}", `daemons: namenode: replication: three does not fit`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestSetNameNodes checks how --namenodes grows the group: spread over the
// racks, hosts without a datanode first, the file's namenode kept first,
// TLS on for a group, and the refusals.
func TestSetNameNodes(t *testing.T) {
	const file = `name: x
racks: [{name: a}, {name: b}, {name: c}]
hosts:
  - {name: nn, rack: a, roles: [namenode, client]}
  - {name: dn1, rack: a, roles: [datanode]}
  - {name: edge, rack: a, roles: [client]}
  - {name: dn2, rack: b, roles: [datanode]}
  - {name: dn3, rack: b, roles: [datanode]}
  - {name: dn4, rack: c, roles: [datanode]}
  - {name: gw, rack: c, roles: [client]}
`
	cases := []struct {
		n    int
		want string // the namenode hosts in file order, or an error's text
	}{
		{1, "nn"},
		// b and c have none: one in each, c's without a datanode (gw,
		// not dn4).
		{3, "nn dn2 gw"},
		// Then a second in each of a and b (a: edge before dn1).
		{5, "nn edge dn2 dn3 gw"},
		{2, "must be 1, 3 or 5"},
		{7, "must be 1, 3 or 5"},
	}
	for _, c := range cases {
		top, err := Parse([]byte(file))
		if err != nil {
			t.Fatal(err)
		}
		err = top.SetNameNodes(c.n)
		got := strings.Join(hostNames(top.WithRole(NameNode)), " ")
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("SetNameNodes(%d): %q, want %q", c.n, got, c.want)
		}
		if err == nil && top.TLS != (c.n > 1) {
			t.Errorf("SetNameNodes(%d): TLS %v", c.n, top.TLS)
		}
	}
	// Fewer than the file gives is refused, not a removal; more than
	// the hosts too.
	three := strings.Replace(file, "{name: dn2, rack: b, roles: [datanode]}", "{name: dn2, rack: b, roles: [datanode, namenode]}", 1)
	three = strings.Replace(three, "{name: gw, rack: c, roles: [client]}", "{name: gw, rack: c, roles: [client, namenode]}", 1)
	top, err := Parse([]byte(three))
	if err != nil {
		t.Fatal(err)
	}
	if !top.TLS || !top.HA() {
		t.Errorf("three namenodes in the file: TLS %v, HA %v; want both", top.TLS, top.HA())
	}
	if err := top.SetNameNodes(1); err == nil || !strings.Contains(err.Error(), "already gives the namenode role to 3 hosts (nn, dn2, gw)") {
		t.Errorf("SetNameNodes(1) on a group of 3: %v", err)
	}
	small, _ := Parse([]byte("name: x\nracks: [{name: a}]\nhosts: [{name: h1, rack: a, roles: [namenode]}, {name: h2, rack: a}]\n"))
	if err := small.SetNameNodes(3); err == nil || !strings.Contains(err.Error(), "only 2 hosts") {
		t.Errorf("SetNameNodes(3) on 2 hosts: %v", err)
	}
	if small.TLS {
		t.Error("a single namenode without tls: true has TLS on")
	}
	off, _ := Parse([]byte("name: x\ntls: false\nracks: [{name: a}]\nhosts: [{name: h1, rack: a, roles: [namenode]}, {name: h2, rack: a}, {name: h3, rack: a}]\n"))
	if err := off.SetNameNodes(3); err == nil || !strings.Contains(err.Error(), "tls: false") {
		t.Errorf("SetNameNodes(3) with tls: false in the file: %v; want it refused", err)
	}
	on, _ := Parse([]byte("name: x\ntls: true\nracks: [{name: a}]\nhosts: [{name: h1, rack: a, roles: [namenode]}]\n"))
	if on == nil || !on.TLS {
		t.Error("tls: true did not turn TLS on")
	}
}
