package topo

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Expectation is the rate that traffic between hosts should reach, and the
// configured limits that bind it (e.g. "cross_rack dn1", "nic dn6").
type Expectation struct {
	Rate  Rate // 0 = nothing limits it
	Bound []string
}

func (e Expectation) String() string {
	if e.Rate == 0 {
		return "unlimited"
	}
	return e.Rate.String() + " (" + strings.Join(e.Bound, ", ") + ")"
}

// cap is one limit on a path: its rate and its name.
type cap struct {
	rate Rate
	name string
}

// inf stands for "no limit" inside the computations below, so that sums
// and minimums need no special cases.
const inf = math.MaxFloat64

func (c cap) value() float64 {
	if c.rate == 0 {
		return inf
	}
	return float64(c.rate)
}

// SameRack reports whether a and b are in the same rack.
func SameRack(a, b *Host) bool { return a.Rack == b.Rack }

// egress lists the limits on traffic leaving src towards dst.
func (t *Topology) egress(src, dst *Host) []cap {
	cs := []cap{{src.Shape.NIC, "nic " + src.Name}}
	if SameRack(src, dst) {
		return append(cs, cap{src.Shape.SameRack, "same_rack " + src.Name})
	}
	r, _ := t.Rack(src.Rack)
	return append(cs, cap{src.Shape.CrossRack, "cross_rack " + src.Name}, cap{r.Uplink, "uplink " + r.Name})
}

// ingress lists the limits on traffic entering dst from src.
func (t *Topology) ingress(src, dst *Host) []cap {
	cs := []cap{{dst.Shape.NIC, "nic " + dst.Name}}
	if SameRack(src, dst) {
		return append(cs, cap{dst.Shape.SameRack, "same_rack " + dst.Name})
	}
	r, _ := t.Rack(dst.Rack)
	return append(cs, cap{dst.Shape.CrossRack, "cross_rack " + dst.Name}, cap{r.Uplink, "uplink " + r.Name})
}

// PathRate is the rate one flow from src to dst should reach when nothing
// else runs: the smallest limit on its way.
func (t *Topology) PathRate(src, dst *Host) Expectation {
	return expect(append(t.egress(src, dst), t.ingress(src, dst)...))
}

func expect(cs []cap) Expectation {
	m := inf
	for _, c := range cs {
		m = math.Min(m, c.value())
	}
	if m == inf {
		return Expectation{}
	}
	e := Expectation{Rate: Rate(m)}
	for _, c := range cs {
		if c.value() == m && !slices.Contains(e.Bound, c.name) {
			e.Bound = append(e.Bound, c.name)
		}
	}
	return e
}

// FanIn is the total rate that flows from every sender into dst at once
// should reach. The limits form a tree (each sender's own limits, its
// rack's uplink shared by the senders of that rack, dst's rack uplink and
// class limits shared by the flows of that class, dst's NIC shared by all),
// so the total is computed bottom-up: sum the children, cap by the node.
func (t *Topology) FanIn(dst *Host, senders []*Host) (Expectation, error) {
	return t.fan(dst, senders, true)
}

// FanOut is the total rate of flows from src to every receiver at once.
func (t *Topology) FanOut(src *Host, receivers []*Host) (Expectation, error) {
	return t.fan(src, receivers, false)
}

func (t *Topology) fan(hub *Host, peers []*Host, in bool) (Expectation, error) {
	if len(peers) == 0 {
		return Expectation{}, fmt.Errorf("no peers for %s", hub.Name)
	}
	var same, cross float64
	crossByRack := map[string]float64{}
	var rackOrder []string
	for _, p := range peers {
		if p.Name == hub.Name {
			return Expectation{}, fmt.Errorf("%s cannot exchange with itself", hub.Name)
		}
		// The peer's own limits: its NIC and class limit.
		flow := inf
		for _, c := range []cap{{p.Shape.NIC, ""}, {classRate(p, hub), ""}} {
			flow = math.Min(flow, c.value())
		}
		if SameRack(p, hub) {
			same = addInf(same, flow)
			continue
		}
		if _, ok := crossByRack[p.Rack]; !ok {
			rackOrder = append(rackOrder, p.Rack)
		}
		crossByRack[p.Rack] = addInf(crossByRack[p.Rack], flow)
	}
	for _, name := range rackOrder {
		r, _ := t.Rack(name)
		cross = addInf(cross, math.Min(crossByRack[name], cap{r.Uplink, ""}.value()))
	}
	hubRack, _ := t.Rack(hub.Rack)
	if len(rackOrder) > 0 {
		cross = math.Min(cross, cap{hubRack.Uplink, ""}.value())
	}
	same = math.Min(same, cap{hub.Shape.SameRack, ""}.value())
	cross = math.Min(cross, cap{hub.Shape.CrossRack, ""}.value())
	total := math.Min(addInf(same, cross), cap{hub.Shape.NIC, ""}.value())
	if total == inf {
		return Expectation{}, nil
	}
	e := Expectation{Rate: Rate(total)}
	if hub.Shape.NIC != 0 && float64(hub.Shape.NIC) == total {
		e.Bound = []string{"nic " + hub.Name}
	} else {
		e.Bound = []string{"sum of the flows' limits"}
	}
	return e, nil
}

// classRate is the limit of p's class towards other: same_rack or
// cross_rack.
func classRate(p, other *Host) Rate {
	if SameRack(p, other) {
		return p.Shape.SameRack
	}
	return p.Shape.CrossRack
}

func addInf(a, b float64) float64 {
	if a == inf || b == inf {
		return inf
	}
	return a + b
}
