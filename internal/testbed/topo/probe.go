package topo

import (
	"fmt"
	"strings"
)

// Probe classes, as `smarth testbed check` prints them.
const (
	ClassSameRack  = "same-rack"
	ClassCrossRack = "cross-rack"
	ClassNICIn     = "nic-in"  // two senders into one host at once
	ClassNICOut    = "nic-out" // one host sending to two at once
)

// Probe is one throughput measurement: flows from every sender to every
// receiver at once (one side has a single host), and what they should
// reach together.
type Probe struct {
	Class     string
	Senders   []string
	Receivers []string
	Expect    Expectation
}

func (p Probe) String() string {
	return fmt.Sprintf("%s %s -> %s", p.Class, strings.Join(p.Senders, ","), strings.Join(p.Receivers, ","))
}

// Probes chooses the measurements that show every configured limit at
// work: one pair per distinct combination of class (same rack, cross rack)
// and the two hosts' limits, plus, for each distinct host profile whose NIC
// is below what its classes together allow, a fan-in and a fan-out that
// must stop at the NIC. With all, every ordered pair of hosts is measured
// instead of one per combination.
func (t *Topology) Probes(all bool) []Probe {
	var ps []Probe
	seen := map[string]bool{}
	for i := range t.Hosts {
		for j := range t.Hosts {
			src, dst := &t.Hosts[i], &t.Hosts[j]
			if i == j {
				continue
			}
			class := ClassCrossRack
			if SameRack(src, dst) {
				class = ClassSameRack
			}
			key := class + "|" + t.profile(src) + "|" + t.profile(dst)
			if !all && seen[key] {
				continue
			}
			seen[key] = true
			ps = append(ps, Probe{Class: class, Senders: []string{src.Name}, Receivers: []string{dst.Name}, Expect: t.PathRate(src, dst)})
		}
	}
	return append(ps, t.nicProbes()...)
}

// profile names what makes a host's traffic behave as it does: its rates
// and its rack's uplink (latency does not change a long flow's rate).
func (t *Topology) profile(h *Host) string {
	r, _ := t.Rack(h.Rack)
	s := h.Shape
	return fmt.Sprintf("%d/%d/%d/%d", s.NIC, s.SameRack, s.CrossRack, r.Uplink)
}

func (t *Topology) nicProbes() []Probe {
	var ps []Probe
	seen := map[string]bool{}
	for i := range t.Hosts {
		h := &t.Hosts[i]
		key := t.profile(h)
		if h.Shape.NIC == 0 || seen[key] {
			continue
		}
		seen[key] = true
		peers := t.nicPeers(h)
		if len(peers) < 2 {
			continue
		}
		names := []string{peers[0].Name, peers[1].Name}
		if e, err := t.FanIn(h, peers); err == nil && e.Rate == h.Shape.NIC {
			ps = append(ps, Probe{Class: ClassNICIn, Senders: names, Receivers: []string{h.Name}, Expect: e})
		}
		if e, err := t.FanOut(h, peers); err == nil && e.Rate == h.Shape.NIC {
			ps = append(ps, Probe{Class: ClassNICOut, Senders: []string{h.Name}, Receivers: names, Expect: e})
		}
	}
	return ps
}

// nicPeers picks two partners for h's NIC probes: one in its rack and one
// in another when it can (so both classes share the NIC), else any two,
// preferring the fastest.
func (t *Topology) nicPeers(h *Host) []*Host {
	var same, other *Host
	for i := range t.Hosts {
		p := &t.Hosts[i]
		if p.Name == h.Name {
			continue
		}
		if SameRack(p, h) {
			if same == nil || faster(t.PathRate(p, h).Rate, t.PathRate(same, h).Rate) {
				same = p
			}
		} else if other == nil || faster(t.PathRate(p, h).Rate, t.PathRate(other, h).Rate) {
			other = p
		}
	}
	if same != nil && other != nil {
		return []*Host{same, other}
	}
	var ps []*Host
	for i := range t.Hosts {
		if p := &t.Hosts[i]; p.Name != h.Name && len(ps) < 2 {
			ps = append(ps, p)
		}
	}
	return ps
}

// faster orders rates where 0 means unlimited.
func faster(a, b Rate) bool {
	if a == 0 {
		return b != 0
	}
	return b != 0 && a > b
}
