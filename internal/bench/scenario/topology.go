package scenario

import (
	"bytes"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"smarth/internal/testbed/topo"
)

// Overrides are the daemon settings one phase of a scenario changes.
type Overrides struct {
	Placement string // namenode placement policy ("rackaware", "speedaware")
	BlockSize int64  // namenode block size; 0 keeps the topology's
	// PerClientBuffer is the datanodes' per-client buffer; 0 keeps the
	// topology's, unless BlockSize is set: SMARTH sizes the buffer to one
	// block (section IV.C), so it follows the block size.
	PerClientBuffer int64
}

func (o Overrides) namenode() map[string]any {
	m := map[string]any{}
	if o.Placement != "" {
		m["placement"] = o.Placement
	}
	if o.BlockSize > 0 {
		m["block_size"] = o.BlockSize
	}
	return m
}

func (o Overrides) datanode() map[string]any {
	m := map[string]any{}
	switch {
	case o.PerClientBuffer > 0:
		m["per_client_buffer"] = o.PerClientBuffer
	case o.BlockSize > 0:
		m["per_client_buffer"] = o.BlockSize
	}
	return m
}

// NamePrefix starts the name of every testbed a scenario brings up, so a
// run never touches a testbed someone brought up by hand from the same file.
const NamePrefix = "sc-"

// TestbedName is the name a scenario gives the testbed of topology name.
func TestbedName(name string) string {
	n := NamePrefix + name
	if len(n) > 31 { // the testbed name limit
		n = strings.TrimRight(n[:31], "-")
	}
	return n
}

// Derive rewrites a topology file for one phase: the testbed is renamed
// (TestbedName) and the overrides are merged into the daemons' settings,
// both for every daemon of a role and where a host sets the key itself, so
// the override always wins. The result is checked as `testbed up` would.
func Derive(data []byte, o Overrides) ([]byte, *topo.Topology, error) {
	var f topo.File
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("bad YAML: %w", err)
	}
	f.Name = TestbedName(f.Name)
	if f.Daemons == nil {
		f.Daemons = map[string]map[string]any{}
	}
	for role, keys := range map[string]map[string]any{"namenode": o.namenode(), "datanode": o.datanode()} {
		if len(keys) == 0 {
			continue
		}
		if f.Daemons[role] == nil {
			f.Daemons[role] = map[string]any{}
		}
		for k, v := range keys {
			f.Daemons[role][k] = v
			for i := range f.Hosts {
				if c := f.Hosts[i].Config[role]; c != nil {
					if _, set := c[k]; set {
						c[k] = v
					}
				}
			}
		}
	}
	out, err := yaml.Marshal(&f)
	if err != nil {
		return nil, nil, err
	}
	t, err := topo.Parse(out)
	if err != nil {
		return nil, nil, err
	}
	return out, t, nil
}

// Layout is what a scenario needs to know about a cluster's shape: where
// the client runs and what its link allows.
type Layout struct {
	Name       string // the cluster (testbed) name
	ClientHost string
	ClientAddr string // the client host's address ("" on loopback)
	// LinkRateBits is the client's link rate, bit/s: the most the client
	// host can send to all datanodes at once (SMARTH III.D's bound of a
	// multi-pipeline write). 0 when nothing limits it (loopback).
	LinkRateBits float64
	LinkBound    string // which limit makes it ("nic nn")
	// FirstHop is the rate one flow from the client reaches to each
	// datanode host, bit/s (0 = unlimited): a block that starts on a
	// datanode below LinkRateBits cannot use the client's whole link.
	FirstHop map[string]float64
}

// SlowFirst reports whether a pipeline that starts on datanode host cannot
// carry the client's link rate on its first hop.
func (l Layout) SlowFirst(host string) bool {
	r, ok := l.FirstHop[host]
	return ok && r > 0 && l.LinkRateBits > 0 && r < l.LinkRateBits*0.99
}

// LayoutOf finds the client host of a topology (the first host with the
// client role, else the namenode's host) and its link rates.
func LayoutOf(t *topo.Topology) (Layout, error) {
	var cl *topo.Host
	for _, r := range []topo.Role{topo.Client, topo.NameNode} {
		if hs := t.WithRole(r); len(hs) > 0 {
			cl = hs[0]
			break
		}
	}
	if cl == nil {
		return Layout{}, fmt.Errorf("topology %s has no client or namenode host to write from", t.Name)
	}
	l := Layout{Name: t.Name, ClientHost: cl.Name, ClientAddr: cl.Addr.String(), FirstHop: map[string]float64{}}
	var dns []*topo.Host
	for _, h := range t.WithRole(topo.DataNode) {
		if h.Name != cl.Name {
			dns = append(dns, h)
			l.FirstHop[h.Name] = float64(t.PathRate(cl, h).Rate)
		}
	}
	if len(dns) == 0 {
		return Layout{}, fmt.Errorf("topology %s has no datanode apart from the client host %s", t.Name, cl.Name)
	}
	fan, err := t.FanOut(cl, dns)
	if err != nil {
		return Layout{}, err
	}
	l.LinkRateBits = float64(fan.Rate)
	l.LinkBound = strings.Join(fan.Bound, ", ")
	return l, nil
}
