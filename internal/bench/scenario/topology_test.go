package scenario

import (
	"strings"
	"testing"

	"smarth/internal/testbed/topo"
)

const twoRack = `
name: two-rack-50
description: "two racks"
defaults: {nic: 216mbit, cross_rack: 50mbit}
daemons:
  namenode: {block_size: 4194304, replication: 3}
  datanode: {per_client_buffer: 4194304}
racks: [{name: rack-a}, {name: rack-b}]
hosts:
  - {name: nn, rack: rack-a, roles: [namenode, client], config: {namenode: {placement: rackaware}}}
  - {name: dn1, rack: rack-a, roles: [datanode]}
  - {name: dn2, rack: rack-b, roles: [datanode]}
  - {name: dn3, rack: rack-b, roles: [datanode], nic: 100mbit}
`

func TestDerive(t *testing.T) {
	out, tp, err := Derive([]byte(twoRack), Overrides{Placement: "speedaware", BlockSize: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if tp.Name != "sc-two-rack-50" {
		t.Errorf("name %q, want sc-two-rack-50", tp.Name)
	}
	nn := tp.Daemons["namenode"]
	if nn["placement"] != "speedaware" || nn["block_size"] != 16<<20 || nn["replication"] != 3 {
		t.Errorf("namenode keys %v", nn)
	}
	if dn := tp.Daemons["datanode"]; dn["per_client_buffer"] != 16<<20 {
		t.Errorf("datanode keys %v: the per-client buffer follows the block size", dn)
	}
	// The host's own setting would win over daemons:, so it is overridden too.
	h, _ := tp.Host("nn")
	if h.Config["namenode"]["placement"] != "speedaware" {
		t.Errorf("host nn config %v", h.Config)
	}
	// The derived file is a topology file that testbed up accepts.
	if _, err := topo.Parse(out); err != nil {
		t.Errorf("derived file does not parse: %v\n%s", err, out)
	}

	// Nothing to override: only the name changes.
	_, tp, err = Derive([]byte(twoRack), Overrides{})
	if err != nil || tp.Daemons["datanode"]["per_client_buffer"] != 4194304 || tp.Daemons["namenode"]["placement"] != nil {
		t.Errorf("no overrides: %v %v", err, tp.Daemons)
	}
	if _, _, err := Derive([]byte("name: x\nnic: 5mbit\n"), Overrides{}); err == nil || !strings.Contains(err.Error(), "bad YAML") {
		t.Errorf("unknown key: %v, want a bad YAML error", err)
	}
	if got := TestbedName("a-name-of-exactly-thirty-one-ch"); len(got) > 31 || !strings.HasPrefix(got, NamePrefix) {
		t.Errorf("long name became %q", got)
	}
}

func TestLayoutOf(t *testing.T) {
	tp, err := topo.Parse([]byte(twoRack))
	if err != nil {
		t.Fatal(err)
	}
	l, err := LayoutOf(tp)
	if err != nil {
		t.Fatal(err)
	}
	if l.ClientHost != "nn" || l.ClientAddr != "10.77.1.11" || l.LinkRateBits != 216e6 || l.LinkBound != "nic nn" {
		t.Errorf("layout %+v", l)
	}
	for host, slow := range map[string]bool{"dn1": false, "dn2": true, "dn3": true, "nn": false, "dn9": false} {
		if l.SlowFirst(host) != slow {
			t.Errorf("SlowFirst(%s) = %v, want %v (first hops %v)", host, !slow, slow, l.FirstHop)
		}
	}
	if l.FirstHop["dn2"] != 50e6 {
		t.Errorf("first hop to dn2 %v, want the cross-rack 50 Mbit/s", l.FirstHop["dn2"])
	}

	// Unlimited links: no bound, no slow first node.
	tp, _ = topo.Parse([]byte("name: flat\nracks: [{name: r}]\nhosts:\n  - {name: c, rack: r, roles: [client]}\n  - {name: d, rack: r, roles: [datanode, namenode]}\n"))
	if l, err := LayoutOf(tp); err != nil || l.ClientHost != "c" || l.LinkRateBits != 0 || l.SlowFirst("d") {
		t.Errorf("unlimited layout %+v %v", l, err)
	}
	tp, _ = topo.Parse([]byte("name: lone\nracks: [{name: r}]\nhosts:\n  - {name: n, rack: r, roles: [namenode, datanode]}\n"))
	if _, err := LayoutOf(tp); err == nil || !strings.Contains(err.Error(), "no datanode apart from the client host") {
		t.Errorf("a cluster without other datanodes: %v", err)
	}
}
