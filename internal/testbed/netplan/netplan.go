package netplan

import (
	"fmt"
	"strconv"
	"strings"

	"smarth/internal/testbed/topo"
)

// Cmd is one command line, iproute2 or sysctl inside a namespace.
type Cmd []string

func (c Cmd) String() string { return strings.Join(c, " ") }

// HostDev is the name of every host's interface inside its namespace.
const HostDev = "eth0"

// Unlimited is the rate tc gets for a limit the topology leaves open: far
// above what veth pairs carry on a small machine, so it never binds.
const Unlimited topo.Rate = 40e9

// quantum is the htb quantum (bytes a class may send per round when
// borrowing). htb derives it from the rate and warns when that is huge; a
// fixed value above the MTU keeps the classes fair and the output quiet.
const quantum = "60000"

// Names are the names of everything one testbed creates. Namespaces carry
// the prefix "smarth.<testbed>." and a testbed name cannot contain dots,
// so two testbeds never share a name and cleanup by prefix is exact.
type Names struct{ Testbed string }

// NetnsPrefix is the prefix of every namespace of testbed name.
func NetnsPrefix(name string) string { return "smarth." + name + "." }

// Prefix is the prefix of this testbed's namespaces.
func (n Names) Prefix() string { return NetnsPrefix(n.Testbed) }

// Host is the namespace of host h.
func (n Names) Host(h string) string { return n.Prefix() + h }

// Core is the namespace holding the bridges and the router. Host names
// cannot contain '_', so it never collides with a host.
func (n Names) Core() string { return n.Prefix() + "_core" }

// HostPort is host i's veth end in the core namespace.
func HostPort(i int) string { return fmt.Sprintf("h%d", i) }

// Bridge is rack i's bridge in the core namespace.
func Bridge(i int) string { return fmt.Sprintf("br%d", i) }

// UplinkBridgeSide is rack i's uplink end on its bridge: its egress is the
// traffic leaving the rack for the core.
func UplinkBridgeSide(i int) string { return fmt.Sprintf("u%d", i) }

// UplinkRouterSide is rack i's uplink end in the routing table, carrying
// the rack's gateway address: its egress is the traffic entering the rack.
func UplinkRouterSide(i int) string { return fmt.Sprintf("r%d", i) }

// Namespaces lists every namespace of the testbed, core last so that hosts
// (whose veths end in the core) go first on teardown.
func Namespaces(t *topo.Topology) []string {
	n := Names{t.Name}
	var s []string
	for _, h := range t.Hosts {
		s = append(s, n.Host(h.Name))
	}
	return append(s, n.Core())
}

// Options are facts about the machine that change the plan.
type Options struct {
	// Netem says the kernel has the netem qdisc; without it latency,
	// jitter and loss are not part of the plan (the caller refuses or
	// uses the delay proxy).
	Netem bool
}

// Up is every command that builds the testbed, in order: Core, then Hosts.
func Up(t *topo.Topology, opt Options) []Cmd { return append(Core(t), Hosts(t, opt)...) }

// Core builds the core namespace: the rack bridges, the router and the
// rack uplinks. It comes first so the caller can probe the kernel (netem)
// inside a namespace of its own before planning the hosts.
func Core(t *topo.Topology) []Cmd {
	core := Names{t.Name}.Core()
	cmds := []Cmd{
		{"ip", "netns", "add", core},
		ipn(core, "link", "set", "lo", "up"),
		{"ip", "netns", "exec", core, "sysctl", "-qw", "net.ipv4.ip_forward=1"},
	}
	for _, r := range t.Racks {
		cmds = append(cmds, rackCmds(core, r)...)
	}
	return cmds
}

// Hosts builds every host's namespace, link, address, route and shaping.
func Hosts(t *topo.Topology, opt Options) []Cmd {
	n := Names{t.Name}
	var cmds []Cmd
	for i := range t.Hosts {
		cmds = append(cmds, hostCmds(t, n, &t.Hosts[i], opt)...)
	}
	return cmds
}

// NetemProbe adds and removes a netem qdisc on the core namespace's
// loopback: it fails on kernels without netem.
func NetemProbe(t *topo.Topology) []Cmd {
	core := Names{t.Name}.Core()
	return []Cmd{
		tcn(core, "qdisc", "add", "dev", "lo", "root", "handle", "1:", "netem", "delay", "1ms"),
		tcn(core, "qdisc", "del", "dev", "lo", "root"),
	}
}

func ipn(ns string, args ...string) Cmd { return append(Cmd{"ip", "-n", ns}, args...) }
func tcn(ns string, args ...string) Cmd { return append(Cmd{"tc", "-n", ns}, args...) }

func rackCmds(core string, r topo.Rack) []Cmd {
	br, u, rt := Bridge(r.Index), UplinkBridgeSide(r.Index), UplinkRouterSide(r.Index)
	cmds := []Cmd{
		ipn(core, "link", "add", br, "type", "bridge"),
		ipn(core, "link", "set", br, "alias", r.Name),
		ipn(core, "link", "set", br, "up"),
		ipn(core, "link", "add", rt, "type", "veth", "peer", "name", u),
		ipn(core, "link", "set", u, "master", br),
		ipn(core, "link", "set", u, "up"),
		ipn(core, "addr", "add", r.Gateway.String()+"/24", "dev", rt),
		ipn(core, "link", "set", rt, "up"),
	}
	// Every uplink gets its class, unlimited or not, so that `shape` can
	// always change it in place.
	return append(cmds, UplinkCmds("add", core, r)...)
}

// UplinkCmds shapes (verb "add") or reshapes (verb "change") rack r's
// uplink in both directions; no limit is the Unlimited rate.
func UplinkCmds(verb, core string, r topo.Rack) []Cmd {
	rate := r.Uplink
	if rate == 0 {
		rate = Unlimited
	}
	var cmds []Cmd
	for _, dev := range []string{UplinkRouterSide(r.Index), UplinkBridgeSide(r.Index)} {
		if verb == "add" {
			cmds = append(cmds, tcn(core, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "1"))
		}
		cmds = append(cmds, tcn(core, "class", verb, "dev", dev, "parent", "1:", "classid", "1:1", "htb",
			"rate", rate.TC(), "ceil", rate.TC(), "burst", burst(rate), "cburst", burst(rate), "quantum", quantum))
	}
	return cmds
}

func hostCmds(t *topo.Topology, n Names, h *topo.Host, opt Options) []Cmd {
	ns, core := n.Host(h.Name), n.Core()
	rack, _ := t.Rack(h.Rack)
	port := HostPort(h.Index)
	cmds := []Cmd{
		{"ip", "netns", "add", ns},
		ipn(ns, "link", "set", "lo", "up"),
		ipn(core, "link", "add", port, "type", "veth", "peer", "name", HostDev, "netns", ns),
		ipn(core, "link", "set", port, "alias", h.Name),
		ipn(core, "link", "set", port, "master", Bridge(rack.Index)),
		ipn(core, "link", "set", port, "up"),
		ipn(ns, "addr", "add", h.Addr.String()+"/24", "dev", HostDev),
		ipn(ns, "link", "set", HostDev, "up"),
		// Only the testbed's own subnet is routed: anything else is
		// unreachable from inside, so a daemon can never reach out.
		ipn(ns, "route", "add", t.Subnet.String(), "via", rack.Gateway.String()),
	}
	up := Side{NS: ns, Dev: HostDev, Match: "dst"}
	down := Side{NS: core, Dev: port, Match: "src"}
	cmds = append(cmds, up.Tree(t, h, h.Shape, opt.Netem)...)
	cmds = append(cmds, down.Tree(t, h, h.Shape, false)...)
	return cmds
}

// Side is one direction of a host's link: its uploads, shaped on eth0 in
// the host's namespace by destination, or its downloads, shaped on its
// port in the core namespace by source.
type Side struct {
	NS, Dev string
	Match   string // "dst" for uploads, "src" for downloads
}

// Class ids of a host's htb tree.
const (
	classNIC   = "1:1"
	classSame  = "1:10"
	classCross = "1:20"
	classOther = "1:30" // anything not IPv4 in the testbed subnet, e.g. ARP
)

// Tree builds the side's htb tree: the NIC class and, under it, one class
// per destination class, plus the filters and (netem) delay leaves.
func (s Side) Tree(t *topo.Topology, h *topo.Host, sh topo.Shape, netem bool) []Cmd {
	rack, _ := t.Rack(h.Rack)
	cmds := []Cmd{tcn(s.NS, "qdisc", "add", "dev", s.Dev, "root", "handle", "1:", "htb", "default", "30")}
	cmds = append(cmds, s.classes("add", sh)...)
	cmds = append(cmds,
		tcn(s.NS, "filter", "add", "dev", s.Dev, "parent", "1:", "protocol", "ip", "prio", "1",
			"u32", "match", "ip", s.Match, rack.Subnet.String(), "flowid", classSame),
		tcn(s.NS, "filter", "add", "dev", s.Dev, "parent", "1:", "protocol", "ip", "prio", "2",
			"u32", "match", "ip", s.Match, t.Subnet.String(), "flowid", classCross),
	)
	if netem && sh.Delayed() {
		cmds = append(cmds, s.Delay(sh)...)
	}
	return cmds
}

// Reclass changes the rates of an existing tree.
func (s Side) Reclass(sh topo.Shape) []Cmd { return s.classes("change", sh) }

func (s Side) classes(verb string, sh topo.Shape) []Cmd {
	nic := or(sh.NIC)
	same, cross := min(nic, or(sh.SameRack)), min(nic, or(sh.CrossRack))
	class := func(parent, id string, rate, ceil topo.Rate) Cmd {
		return tcn(s.NS, "class", verb, "dev", s.Dev, "parent", parent, "classid", id, "htb",
			"rate", rate.TC(), "ceil", ceil.TC(), "burst", burst(rate), "cburst", burst(ceil), "quantum", quantum)
	}
	r := ChildRates(nic, same, cross)
	return []Cmd{
		class("1:", classNIC, nic, nic),
		class(classNIC, classSame, r[0], same),
		class(classNIC, classCross, r[1], cross),
		class(classNIC, classOther, r[2], nic),
	}
}

// ChildRates splits the NIC rate into the assured rates of the same-rack,
// cross-rack and other classes. htb lets a class send at its assured rate
// without asking its parent, so the assured rates must add up to no more
// than the NIC for the NIC to bind when both classes are busy; each class
// then borrows from the parent up to its ceiling (its own limit), which is
// what a single flow reaches. The split is proportional to the classes'
// limits, with 1% kept for the rest (ARP and the like).
func ChildRates(nic, same, cross topo.Rate) [3]topo.Rate {
	const floor = 1000 // htb wants a positive rate; rates start at 8kbit
	other := max(nic/100, floor)
	avail := float64(nic - other - 2*floor)
	total := float64(same) + float64(cross)
	return [3]topo.Rate{
		min(floor+topo.Rate(avail*float64(same)/total), same),
		min(floor+topo.Rate(avail*float64(cross)/total), cross),
		other,
	}
}

// Delay replaces the leaves of the two destination classes with netem
// (or, without latency, jitter and loss, with a plain fifo again).
func (s Side) Delay(sh topo.Shape) []Cmd {
	var cmds []Cmd
	for _, c := range []struct{ parent, handle string }{{classSame, "10:"}, {classCross, "20:"}} {
		cmd := tcn(s.NS, "qdisc", "replace", "dev", s.Dev, "parent", c.parent, "handle", c.handle)
		if !sh.Delayed() {
			cmds = append(cmds, append(cmd, "pfifo"))
			continue
		}
		cmd = append(cmd, "netem", "delay", fmt.Sprintf("%dus", sh.Latency.Microseconds()))
		if sh.Jitter > 0 {
			cmd = append(cmd, fmt.Sprintf("%dus", sh.Jitter.Microseconds()))
		}
		if sh.LossPct > 0 {
			cmd = append(cmd, "loss", fmt.Sprintf("%g%%", sh.LossPct))
		}
		cmds = append(cmds, cmd)
	}
	return cmds
}

// Reshape is what changes host h's rates (and, with netem, its delay) from
// old to sh while the testbed runs.
func Reshape(t *topo.Topology, h *topo.Host, old, sh topo.Shape, opt Options) []Cmd {
	n := Names{t.Name}
	up := Side{NS: n.Host(h.Name), Dev: HostDev, Match: "dst"}
	down := Side{NS: n.Core(), Dev: HostPort(h.Index), Match: "src"}
	cmds := append(up.Reclass(sh), down.Reclass(sh)...)
	if opt.Netem && (old.Delayed() || sh.Delayed()) {
		cmds = append(cmds, up.Delay(sh)...)
	}
	return cmds
}

// ReshapeUplink is what changes rack r's uplink to r.Uplink.
func ReshapeUplink(t *topo.Topology, r topo.Rack) []Cmd {
	return UplinkCmds("change", Names{t.Name}.Core(), r)
}

// Down deletes every namespace; the links, bridges and qdiscs in them go
// with them. Processes still inside must be stopped first, or the
// namespaces live on (unnamed) until they exit.
func Down(namespaces []string) []Cmd {
	var cmds []Cmd
	for _, ns := range namespaces {
		cmds = append(cmds, Cmd{"ip", "netns", "del", ns})
	}
	return cmds
}

// burst is the bucket of an htb class: a millisecond of its rate, at
// least two full frames. tc's default on kernels with high-resolution
// timers is a single frame, which leaves no slack for the timer firing a
// little late on a busy machine: the class then falls below its rate
// (measured: 87% of 1 Gbit/s under load). A millisecond's burst does not
// change the average rate.
func burst(r topo.Rate) string {
	return strconv.FormatUint(max(uint64(r)/8/1000, 3028), 10) + "b"
}

func or(r topo.Rate) topo.Rate {
	if r == 0 {
		return Unlimited
	}
	return r
}

// Partitions. This kernel has neither netem nor tc's drop action
// (act_gact), so a cut replaces the leaf queue of every class on both ends
// of a link with a pfifo of length 0: each packet is dropped as it is
// queued, in both directions, with no RST and no ICMP, as behind a dead
// switch port or a firewall's DROP. Connections then hang until their
// peers' timeouts notice, which is what a real partition does to a
// cluster. A heal puts the ordinary leaves back; the htb classes, and so
// the host's rates, are never touched.

// hostLeaves are the classes of a host's tree that carry traffic, with
// the handles their leaf queues take.
var hostLeaves = []struct{ parent, handle string }{{classSame, "10:"}, {classCross, "20:"}, {classOther, "30:"}}

// blackhole is the leaf that drops every packet; fifo is the leaf a heal
// puts back: the pfifo that htb gives a class by itself is as long as the
// device's txqueuelen (1000 on the testbed's veths). The limit is spelled
// out because tc's replace of a pfifo by a pfifo changes the queue in
// place and keeps a limit it is not given, 0 included.
var (
	blackhole = []string{"pfifo", "limit", "0"}
	fifo      = []string{"pfifo", "limit", "1000"}
)

// Partition cuts host h off from every other host, both directions.
func Partition(t *topo.Topology, h *topo.Host) []Cmd {
	var cmds []Cmd
	for _, s := range hostSides(t, h) {
		for _, l := range hostLeaves {
			cmds = append(cmds, append(tcn(s.NS, "qdisc", "replace", "dev", s.Dev, "parent", l.parent, "handle", l.handle), blackhole...))
		}
	}
	return cmds
}

// Heal undoes Partition: plain fifo leaves again (netem leaves where the
// host's uploads are delayed).
func Heal(t *topo.Topology, h *topo.Host, opt Options) []Cmd {
	var cmds []Cmd
	for i, s := range hostSides(t, h) {
		delayed := i == 0 && opt.Netem && h.Shape.Delayed()
		for _, l := range hostLeaves {
			if delayed && l.parent != classOther {
				continue
			}
			cmds = append(cmds, append(tcn(s.NS, "qdisc", "replace", "dev", s.Dev, "parent", l.parent, "handle", l.handle), fifo...))
		}
		if delayed {
			cmds = append(cmds, s.Delay(h.Shape)...)
		}
	}
	return cmds
}

// hostSides are host h's uploads (its eth0) and downloads (its bridge
// port in the core namespace), in that order.
func hostSides(t *topo.Topology, h *topo.Host) [2]Side {
	n := Names{t.Name}
	return [2]Side{
		{NS: n.Host(h.Name), Dev: HostDev, Match: "dst"},
		{NS: n.Core(), Dev: HostPort(h.Index), Match: "src"},
	}
}

// PartitionRack cuts rack r's uplink, both directions: its hosts still
// reach each other, and nothing outside the rack.
func PartitionRack(t *topo.Topology, r topo.Rack) []Cmd {
	return uplinkLeaves(t, r, blackhole)
}

// HealRack undoes PartitionRack.
func HealRack(t *topo.Topology, r topo.Rack) []Cmd {
	return uplinkLeaves(t, r, fifo)
}

func uplinkLeaves(t *topo.Topology, r topo.Rack, leaf []string) []Cmd {
	core := Names{t.Name}.Core()
	var cmds []Cmd
	for _, dev := range []string{UplinkRouterSide(r.Index), UplinkBridgeSide(r.Index)} {
		cmds = append(cmds, append(tcn(core, "qdisc", "replace", "dev", dev, "parent", "1:1", "handle", "10:"), leaf...))
	}
	return cmds
}
