package topo

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"smarth/internal/daemonconf"
)

// Role is a daemon or tool a host runs.
type Role string

// The roles a host may have.
const (
	NameNode        Role = "namenode"
	DataNode        Role = "datanode"
	Client          Role = "client"
	ResourceManager Role = "resourcemanager"
	NodeManager     Role = "nodemanager"
)

var knownRoles = []Role{NameNode, DataNode, Client, ResourceManager, NodeManager}

// Latency modes: how latency and jitter are applied.
const (
	// LatencyNetem adds latency with the netem qdisc on each host's egress.
	LatencyNetem = "netem"
	// LatencyProxy puts a user-space TCP delay proxy in front of every
	// daemon port, for kernels without netem (latency and jitter only).
	LatencyProxy = "proxy"
)

// DefaultSubnet is the private /16 the testbed addresses come from. It only
// ever exists inside the testbed's namespaces.
const DefaultSubnet = "10.77.0.0/16"

// Limits are a host's link and disk limits as written in the file. Empty
// strings inherit from the rack, then from the file's defaults.
type Limits struct {
	NIC       string `yaml:"nic,omitempty"`        // everything in and out of the host
	SameRack  string `yaml:"same_rack,omitempty"`  // to/from hosts in the same rack
	CrossRack string `yaml:"cross_rack,omitempty"` // to/from hosts in other racks
	Latency   string `yaml:"latency,omitempty"`    // one-way, added to packets leaving the host
	Jitter    string `yaml:"jitter,omitempty"`
	Loss      string `yaml:"loss,omitempty"` // "0.1%"
	DiskRead  string `yaml:"disk_read,omitempty"`
	DiskWrite string `yaml:"disk_write,omitempty"`
}

// File is a topology file as written.
type File struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description,omitempty"`
	Subnet      string `yaml:"subnet,omitempty"`
	LatencyMode string `yaml:"latency_mode,omitempty"`
	// TLS turns the wire's TLS on for every daemon (a CA and a
	// certificate per daemon, made by the testbed). Unset: on exactly
	// when the namenode role is on more than one host (an HA group,
	// whose raft port speaks mutual TLS only); false with an HA group
	// is an error.
	TLS      *bool                     `yaml:"tls,omitempty"`
	Defaults Limits                    `yaml:"defaults,omitempty"`
	Racks    []RackSpec                `yaml:"racks"`
	Hosts    []HostSpec                `yaml:"hosts"`
	Daemons  map[string]map[string]any `yaml:"daemons,omitempty"` // extra config keys per role
}

// RackSpec is one rack as written.
type RackSpec struct {
	Name   string `yaml:"name"`
	Uplink string `yaml:"uplink,omitempty"` // the rack's link to the core, each direction
	Limits `yaml:",inline"`
}

// HostSpec is one host as written.
type HostSpec struct {
	Name   string                    `yaml:"name"`
	Rack   string                    `yaml:"rack"`
	Roles  []Role                    `yaml:"roles,omitempty"`
	Config map[string]map[string]any `yaml:"config,omitempty"` // extra daemon config keys per role, for this host
	Limits `yaml:",inline"`
}

// Shape is a host's resolved limits. Zero rates are unlimited.
type Shape struct {
	NIC       Rate          `json:"nic,omitempty"`
	SameRack  Rate          `json:"same_rack,omitempty"`
	CrossRack Rate          `json:"cross_rack,omitempty"`
	Latency   time.Duration `json:"latency,omitempty"`
	Jitter    time.Duration `json:"jitter,omitempty"`
	LossPct   float64       `json:"loss_pct,omitempty"`
	DiskRead  ByteRate      `json:"disk_read,omitempty"`
	DiskWrite ByteRate      `json:"disk_write,omitempty"`
}

// Delayed reports whether the shape asks for latency, jitter or loss.
func (s Shape) Delayed() bool { return s.Latency > 0 || s.Jitter > 0 || s.LossPct > 0 }

// DiskCapped reports whether the shape caps disk bandwidth.
func (s Shape) DiskCapped() bool { return s.DiskRead > 0 || s.DiskWrite > 0 }

// Topology is a checked topology with addresses assigned.
type Topology struct {
	Name        string
	Description string
	Subnet      netip.Prefix
	LatencyMode string
	TLS         bool // every daemon speaks TLS (File.TLS resolved)
	tlsOff      bool // the file said tls: false
	Racks       []Rack
	Hosts       []Host
	Daemons     map[string]map[string]any
}

// Rack is a rack with its subnet. Index starts at 1 and is the third octet
// of the rack's addresses.
type Rack struct {
	Name    string       `json:"name"`
	Index   int          `json:"index"`
	Subnet  netip.Prefix `json:"subnet"`
	Gateway netip.Addr   `json:"gateway"` // the core router's address in this rack
	Uplink  Rate         `json:"uplink,omitempty"`
}

// Path is the rack's path as the namenode knows it ("/rack-a").
func (r Rack) Path() string { return "/" + r.Name }

// Host is a host with its address and resolved limits. Index is its
// position in the file, from 0.
type Host struct {
	Name   string                    `json:"name"`
	Rack   string                    `json:"rack"`
	Index  int                       `json:"index"`
	Addr   netip.Addr                `json:"addr"`
	Roles  []Role                    `json:"roles"`
	Shape  Shape                     `json:"shape"`
	Config map[string]map[string]any `json:"config,omitempty"`
}

// Has reports whether the host has role r.
func (h *Host) Has(r Role) bool { return slices.Contains(h.Roles, r) }

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}$`)

// Load reads and checks a topology file.
func Load(path string) (*Topology, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("topology %s: %w", path, err)
	}
	return t, nil
}

// Parse decodes and checks a topology. Unknown keys are errors, so that a
// misspelt limit is not silently ignored.
func Parse(data []byte) (*Topology, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("bad YAML: %w", err)
	}
	return f.Resolve()
}

// Resolve checks the file and assigns addresses and limits.
func (f *File) Resolve() (*Topology, error) {
	if !nameRE.MatchString(f.Name) {
		return nil, fmt.Errorf("name %q: want 1-31 characters of a-z, 0-9 and '-', starting with a letter", f.Name)
	}
	t := &Topology{Name: f.Name, Description: f.Description, LatencyMode: f.LatencyMode, Daemons: f.Daemons}
	if t.LatencyMode == "" {
		t.LatencyMode = LatencyNetem
	}
	if t.LatencyMode != LatencyNetem && t.LatencyMode != LatencyProxy {
		return nil, fmt.Errorf("latency_mode %q: want %q or %q", f.LatencyMode, LatencyNetem, LatencyProxy)
	}
	for role := range f.Daemons {
		if !slices.Contains(knownRoles, Role(role)) {
			return nil, fmt.Errorf("daemons: unknown role %q (roles: %s)", role, roleList())
		}
		// The cache and scheduler keys of seed 003 are checked here, so a
		// misspelt policy or a key under the wrong role fails before any
		// namespace is built.
		if err := daemonconf.Check(role, f.Daemons[role]); err != nil {
			return nil, fmt.Errorf("daemons: %w", err)
		}
	}
	subnet := f.Subnet
	if subnet == "" {
		subnet = DefaultSubnet
	}
	p, err := netip.ParsePrefix(subnet)
	if err != nil || !p.Addr().Is4() || p.Bits() != 16 || !p.Addr().IsPrivate() || p.Masked() != p {
		return nil, fmt.Errorf("subnet %q: want a private IPv4 /16 such as %s", subnet, DefaultSubnet)
	}
	t.Subnet = p
	if len(f.Racks) == 0 {
		return nil, errors.New("no racks: list at least one under racks:")
	}
	if len(f.Racks) > 250 {
		return nil, fmt.Errorf("%d racks: at most 250", len(f.Racks))
	}
	rackSpecs := map[string]*RackSpec{}
	for i := range f.Racks {
		rs := &f.Racks[i]
		name := strings.TrimPrefix(rs.Name, "/")
		if !nameRE.MatchString(name) {
			return nil, fmt.Errorf("rack %q: want a name of a-z, 0-9 and '-', starting with a letter", rs.Name)
		}
		if rackSpecs[name] != nil {
			return nil, fmt.Errorf("duplicate rack %q", name)
		}
		rackSpecs[name] = rs
		r := Rack{Name: name, Index: i + 1}
		base := p.Addr().As4()
		r.Subnet = netip.PrefixFrom(netip.AddrFrom4([4]byte{base[0], base[1], byte(r.Index), 0}), 24)
		r.Gateway = netip.AddrFrom4([4]byte{base[0], base[1], byte(r.Index), 1})
		if rs.Uplink != "" {
			if r.Uplink, err = ParseRate(rs.Uplink); err != nil {
				return nil, fmt.Errorf("rack %s: uplink: %w", name, err)
			}
		}
		t.Racks = append(t.Racks, r)
	}
	if err := t.resolveHosts(f, rackSpecs); err != nil {
		return nil, err
	}
	if err := t.checkRoles(); err != nil {
		return nil, err
	}
	return t, t.resolveTLS(f.TLS)
}

// resolveTLS sets t.TLS from the file's tls key: on for an HA group,
// which cannot run without it.
func (t *Topology) resolveTLS(tls *bool) error {
	switch {
	case tls == nil:
		t.TLS = t.HA()
	case !*tls && t.HA():
		return fmt.Errorf("tls: false, but %d hosts have the namenode role: an HA group's members speak mutual TLS on their raft port, so it needs tls (drop the key)", len(t.WithRole(NameNode)))
	default:
		t.TLS, t.tlsOff = *tls, !*tls
	}
	return nil
}

// HA reports whether the namenodes are an HA group (more than one host
// has the namenode role).
func (t *Topology) HA() bool { return len(t.WithRole(NameNode)) > 1 }

// MaxNameNodes bounds an HA group, as the local cluster's: 5 members ride
// out two failures; more only slow every commit on one machine.
const MaxNameNodes = 5

// SetNameNodes gives the namenode role to n hosts (1, 3 or 5): the hosts
// that have it keep it, and the others are taken one at a time from the
// rack with the fewest namenodes so far (file order within a rack, and
// among racks with as many), preferring hosts with no datanode role, so
// that a rack's loss takes as few members as it can and a member does
// not share its host's CPU and links with a datanode when it need not.
// Fewer than the hosts that have the role is an error, not a removal.
// The result is checked as a file's would be (and TLS goes on for a
// group).
func (t *Topology) SetNameNodes(n int) error {
	have := t.WithRole(NameNode)
	switch {
	case n < 1 || n > MaxNameNodes || n%2 == 0:
		return fmt.Errorf("--namenodes must be 1, 3 or 5 (an HA group needs an odd number: 3 rides out one failure, 5 two), not %d", n)
	case n < len(have):
		return fmt.Errorf("--namenodes %d: the topology already gives the namenode role to %d hosts (%s)", n, len(have), strings.Join(hostNames(have), ", "))
	case n > len(t.Hosts):
		return fmt.Errorf("--namenodes %d: the topology has only %d hosts", n, len(t.Hosts))
	case n > 1 && t.tlsOff:
		return fmt.Errorf("--namenodes %d: the topology says tls: false, and an HA group's members speak mutual TLS on their raft port (drop the key)", n)
	}
	inRack := map[string]int{}
	for _, h := range have {
		inRack[h.Rack]++
	}
	for len(t.WithRole(NameNode)) < n {
		var best *Host
		better := func(h *Host) bool {
			if best == nil {
				return true
			}
			if inRack[h.Rack] != inRack[best.Rack] {
				return inRack[h.Rack] < inRack[best.Rack]
			}
			return !h.Has(DataNode) && best.Has(DataNode)
		}
		for i := range t.Hosts {
			if h := &t.Hosts[i]; !h.Has(NameNode) && better(h) {
				best = h
			}
		}
		best.Roles = append(best.Roles, NameNode)
		inRack[best.Rack]++
	}
	if err := t.checkRoles(); err != nil {
		return err
	}
	if n > 1 {
		t.TLS = true
	}
	return nil
}

func hostNames(hs []*Host) []string {
	var s []string
	for _, h := range hs {
		s = append(s, h.Name)
	}
	return s
}

func (t *Topology) resolveHosts(f *File, rackSpecs map[string]*RackSpec) error {
	if len(f.Hosts) == 0 {
		return errors.New("no hosts: list at least one under hosts:")
	}
	seen := map[string]bool{}
	perRack := map[string]int{}
	for i, hs := range f.Hosts {
		if !nameRE.MatchString(hs.Name) {
			return fmt.Errorf("host %q: want a name of a-z, 0-9 and '-', starting with a letter", hs.Name)
		}
		if seen[hs.Name] {
			return fmt.Errorf("duplicate host %q", hs.Name)
		}
		seen[hs.Name] = true
		rackName := strings.TrimPrefix(hs.Rack, "/")
		rs := rackSpecs[rackName]
		if rs == nil {
			if hs.Rack == "" {
				return fmt.Errorf("host %s: no rack given (racks: %s)", hs.Name, t.rackList())
			}
			return fmt.Errorf("host %s: unknown rack %q (racks: %s)", hs.Name, hs.Rack, t.rackList())
		}
		rack, _ := t.Rack(rackName)
		n := perRack[rackName]
		if n >= 240 {
			return fmt.Errorf("rack %s: more than 240 hosts", rackName)
		}
		perRack[rackName] = n + 1
		h := Host{Name: hs.Name, Rack: rackName, Index: i, Config: hs.Config}
		a := rack.Subnet.Addr().As4()
		a[3] = byte(11 + n)
		h.Addr = netip.AddrFrom4(a)
		for role := range hs.Config {
			if !slices.Contains(hs.Roles, Role(role)) {
				return fmt.Errorf("host %s: config for role %q, which the host does not have", hs.Name, role)
			}
			if err := daemonconf.Check(role, hs.Config[role]); err != nil {
				return fmt.Errorf("host %s: config: %w", hs.Name, err)
			}
		}
		for _, r := range hs.Roles {
			if !slices.Contains(knownRoles, r) {
				return fmt.Errorf("host %s: unknown role %q (roles: %s)", hs.Name, r, roleList())
			}
			if h.Has(r) {
				return fmt.Errorf("host %s: role %s listed twice", hs.Name, r)
			}
			h.Roles = append(h.Roles, r)
		}
		shape, err := resolveLimits(hs.Limits, rs.Limits, f.Defaults)
		if err != nil {
			return fmt.Errorf("host %s: %w", hs.Name, err)
		}
		h.Shape = shape
		t.Hosts = append(t.Hosts, h)
	}
	return nil
}

// resolveLimits takes each limit from the first of host, rack, defaults
// that sets it.
func resolveLimits(layers ...Limits) (Shape, error) {
	pick := func(get func(Limits) string) string {
		for _, l := range layers {
			if v := get(l); v != "" {
				return v
			}
		}
		return ""
	}
	var s Shape
	var err error
	rate := func(key string, get func(Limits) string, dst *Rate) {
		if v := pick(get); v != "" && err == nil {
			if *dst, err = ParseRate(v); err != nil {
				err = fmt.Errorf("%s: %w", key, err)
			}
		}
	}
	rate("nic", func(l Limits) string { return l.NIC }, &s.NIC)
	rate("same_rack", func(l Limits) string { return l.SameRack }, &s.SameRack)
	rate("cross_rack", func(l Limits) string { return l.CrossRack }, &s.CrossRack)
	disk := func(key string, get func(Limits) string, dst *ByteRate) {
		if v := pick(get); v != "" && err == nil {
			if *dst, err = ParseByteRate(v); err != nil {
				err = fmt.Errorf("%s: %w", key, err)
			}
		}
	}
	disk("disk_read", func(l Limits) string { return l.DiskRead }, &s.DiskRead)
	disk("disk_write", func(l Limits) string { return l.DiskWrite }, &s.DiskWrite)
	dur := func(key string, get func(Limits) string, dst *time.Duration) {
		if v := pick(get); v != "" && err == nil {
			d, e := time.ParseDuration(v)
			switch {
			case e != nil:
				err = fmt.Errorf("%s: %q is not a duration such as 5ms", key, v)
			case d < 0 || d > 10*time.Second:
				err = fmt.Errorf("%s: %s is out of range (0 to 10s)", key, v)
			}
			*dst = d
		}
	}
	dur("latency", func(l Limits) string { return l.Latency }, &s.Latency)
	dur("jitter", func(l Limits) string { return l.Jitter }, &s.Jitter)
	if v := pick(func(l Limits) string { return l.Loss }); v != "" && err == nil {
		s.LossPct, err = ParsePercent(v)
		if err != nil {
			err = fmt.Errorf("loss: %w", err)
		}
	}
	return s, err
}

// ParsePercent parses "0.1%".
func ParsePercent(v string) (float64, error) {
	num, ok := strings.CutSuffix(strings.TrimSpace(v), "%")
	if !ok {
		return 0, fmt.Errorf("%q: write a percentage such as 0.1%%", v)
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || f < 0 || f > 100 {
		return 0, fmt.Errorf("%q: want 0%% to 100%%", v)
	}
	return f, nil
}

func (t *Topology) checkRoles() error {
	count := map[Role][]string{}
	for _, h := range t.Hosts {
		for _, r := range h.Roles {
			count[r] = append(count[r], h.Name)
		}
	}
	if n := count[NameNode]; len(n) > MaxNameNodes || len(n)%2 == 0 && len(n) > 0 {
		// An HA group of 2k members needs k+1 for a majority, as 2k+1
		// does: the extra member survives no further failure.
		return fmt.Errorf("%d hosts have the namenode role (%s): give it to 1 host, or to 3 or 5 for an HA group (an odd number: 3 ride out one failure, 5 two)", len(n), strings.Join(n, ", "))
	}
	if n := count[ResourceManager]; len(n) > 1 {
		return fmt.Errorf("more than one resourcemanager (%s)", strings.Join(n, ", "))
	}
	if len(count[DataNode]) > 0 && len(count[NameNode]) == 0 {
		return errors.New("datanodes but no namenode: give one host the namenode role")
	}
	if len(count[NodeManager]) > 0 && len(count[ResourceManager]) == 0 {
		return errors.New("nodemanagers but no resourcemanager: give one host the resourcemanager role")
	}
	if len(count[ResourceManager]) > 0 && len(count[NameNode]) == 0 {
		return errors.New("a resourcemanager needs a namenode")
	}
	return nil
}

// Rack finds a rack by name.
func (t *Topology) Rack(name string) (Rack, bool) {
	for _, r := range t.Racks {
		if r.Name == name {
			return r, true
		}
	}
	return Rack{}, false
}

// Host finds a host by name.
func (t *Topology) Host(name string) (*Host, bool) {
	for i := range t.Hosts {
		if t.Hosts[i].Name == name {
			return &t.Hosts[i], true
		}
	}
	return nil, false
}

// HostNames lists the host names in file order.
func (t *Topology) HostNames() []string {
	var s []string
	for _, h := range t.Hosts {
		s = append(s, h.Name)
	}
	return s
}

// WithRole lists the hosts that have role r, in file order.
func (t *Topology) WithRole(r Role) []*Host {
	var hs []*Host
	for i := range t.Hosts {
		if t.Hosts[i].Has(r) {
			hs = append(hs, &t.Hosts[i])
		}
	}
	return hs
}

// Delayed reports whether any host asks for latency, jitter or loss.
func (t *Topology) Delayed() bool {
	for _, h := range t.Hosts {
		if h.Shape.Delayed() {
			return true
		}
	}
	return false
}

// Lossy reports whether any host asks for packet loss.
func (t *Topology) Lossy() bool {
	for _, h := range t.Hosts {
		if h.Shape.LossPct > 0 {
			return true
		}
	}
	return false
}

// DiskCapped reports whether any host caps its disk bandwidth.
func (t *Topology) DiskCapped() bool {
	for _, h := range t.Hosts {
		if h.Shape.DiskCapped() {
			return true
		}
	}
	return false
}

func (t *Topology) rackList() string {
	var s []string
	for _, r := range t.Racks {
		s = append(s, r.Name)
	}
	return strings.Join(s, ", ")
}

func roleList() string {
	var s []string
	for _, r := range knownRoles {
		s = append(s, string(r))
	}
	return strings.Join(s, ", ")
}
