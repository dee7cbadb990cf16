package testbed

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"smarth/internal/testbed/netplan"
)

// A Cut is one network partition in force: a host cut off from every
// other host, or a rack's uplink cut (its hosts still reach each other).
type Cut struct {
	Kind string `json:"kind"` // "host" or "rack"
	Name string `json:"name"`
}

func (c Cut) String() string { return c.Kind + " " + c.Name }

// ParseCut reads "HOST", "host:HOST" or "rack:RACK".
func ParseCut(s string) (Cut, error) {
	kind, name, ok := strings.Cut(s, ":")
	if !ok {
		kind, name = "host", s
	}
	if (kind != "host" && kind != "rack") || name == "" {
		return Cut{}, fmt.Errorf("%q names no host or rack: want HOST, host:HOST or rack:RACK", s)
	}
	return Cut{Kind: kind, Name: name}, nil
}

// Partition cuts c off while the testbed runs: every packet across the cut
// is dropped, both ways, until Heal. A cut already in force is not an
// error (the plan is idempotent).
func (m *Manager) Partition(ctx context.Context, name string, c Cut) error {
	return m.cut(ctx, name, c, true)
}

// Heal ends the partition c; healing what is not cut is not an error.
func (m *Manager) Heal(ctx context.Context, name string, c Cut) error {
	return m.cut(ctx, name, c, false)
}

// Cuts lists the partitions in force.
func (m *Manager) Cuts(name string) ([]Cut, error) {
	s, err := m.Load(name)
	if err != nil {
		return nil, err
	}
	return s.Cuts, nil
}

func (m *Manager) cut(ctx context.Context, name string, c Cut, on bool) error {
	if err := m.Preflight(); err != nil {
		return err
	}
	s, unlock, err := m.loadLocked(name)
	if err != nil {
		return err
	}
	defer unlock()
	var plan []netplan.Cmd
	switch c.Kind {
	case "host":
		h, ok := s.Topology.Host(c.Name)
		if !ok {
			return fmt.Errorf("testbed %s has no host %q (hosts: %v)", s.Name, c.Name, s.Topology.HostNames())
		}
		if on {
			plan = netplan.Partition(s.Topology, h)
		} else {
			plan = netplan.Heal(s.Topology, h, netplan.Options{Netem: s.Netem})
		}
	case "rack":
		r, ok := s.Topology.Rack(c.Name)
		if !ok {
			return fmt.Errorf("testbed %s has no rack %q", s.Name, c.Name)
		}
		if on {
			plan = netplan.PartitionRack(s.Topology, r)
		} else {
			plan = netplan.HealRack(s.Topology, r)
		}
	default:
		return fmt.Errorf("unknown cut kind %q (host or rack)", c.Kind)
	}
	// Recorded before the plan runs, so that a cut half made by a failed
	// plan is still listed, and healed by `heal --all` or `down`.
	s.Cuts = slices.DeleteFunc(s.Cuts, func(x Cut) bool { return x == c })
	if on {
		s.Cuts = append(s.Cuts, c)
		if err := s.save(); err != nil {
			return err
		}
	}
	if err := runAll(ctx, m.opt.Runner, plan); err != nil {
		return fmt.Errorf("%s %s: %w", map[bool]string{true: "cut", false: "heal"}[on], c, err)
	}
	if on {
		m.logf("testbed %s: %s cut off", s.Name, c)
		return nil
	}
	m.logf("testbed %s: %s healed", s.Name, c)
	return s.save()
}
