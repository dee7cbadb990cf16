package testbed

import (
	"context"
	"errors"
	"fmt"
	"time"

	"smarth/internal/testbed/netplan"
	"smarth/internal/testbed/topo"
)

// Change is a change of a host's limits; nil fields stay as they are, and
// an empty string removes the limit. The values use the topology file's
// units ("50mbit", "40MB/s", "5ms", "0.1%").
type Change struct {
	NIC, SameRack, CrossRack *string
	DiskRead, DiskWrite      *string
	Latency, Jitter, Loss    *string
}

// apply returns sh with the change applied.
func (c Change) apply(sh topo.Shape) (topo.Shape, error) {
	var errs []error
	rate := func(key string, v *string, dst *topo.Rate) {
		if v == nil {
			return
		}
		if *v == "" || *v == "0" || *v == "unlimited" {
			*dst = 0
			return
		}
		r, err := topo.ParseRate(*v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
		*dst = r
	}
	disk := func(key string, v *string, dst *topo.ByteRate) {
		if v == nil {
			return
		}
		if *v == "" || *v == "0" || *v == "unlimited" {
			*dst = 0
			return
		}
		r, err := topo.ParseByteRate(*v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
		*dst = r
	}
	dur := func(key string, v *string, dst *time.Duration) {
		if v == nil {
			return
		}
		if *v == "" || *v == "0" {
			*dst = 0
			return
		}
		d, err := time.ParseDuration(*v)
		if err != nil || d < 0 {
			errs = append(errs, fmt.Errorf("%s: %q is not a duration such as 5ms", key, *v))
		}
		*dst = d
	}
	rate("nic", c.NIC, &sh.NIC)
	rate("same-rack", c.SameRack, &sh.SameRack)
	rate("cross-rack", c.CrossRack, &sh.CrossRack)
	disk("disk-read", c.DiskRead, &sh.DiskRead)
	disk("disk-write", c.DiskWrite, &sh.DiskWrite)
	dur("latency", c.Latency, &sh.Latency)
	dur("jitter", c.Jitter, &sh.Jitter)
	if c.Loss != nil {
		sh.LossPct = 0
		if *c.Loss != "" && *c.Loss != "0" {
			var err error
			if sh.LossPct, err = topo.ParsePercent(*c.Loss); err != nil {
				errs = append(errs, fmt.Errorf("loss: %w", err))
			}
		}
	}
	return sh, errors.Join(errs...)
}

// Shape changes host's limits while the testbed runs. It returns the old
// and new shapes.
func (m *Manager) Shape(ctx context.Context, name, host string, c Change) (old, now topo.Shape, err error) {
	if err := m.Preflight(); err != nil {
		return old, now, err
	}
	s, unlock, err := m.loadLocked(name)
	if err != nil {
		return old, now, err
	}
	defer unlock()
	h, ok := s.Topology.Host(host)
	if !ok {
		return old, now, fmt.Errorf("testbed %s has no host %q (hosts: %v)", s.Name, host, s.Topology.HostNames())
	}
	old = h.Shape
	if now, err = c.apply(old); err != nil {
		return old, now, err
	}
	delayChanged := now.Latency != old.Latency || now.Jitter != old.Jitter || now.LossPct != old.LossPct
	if delayChanged && !(s.Netem && s.Topology.LatencyMode == topo.LatencyNetem) {
		return old, now, errors.New("changing latency, jitter or loss while the testbed runs needs the netem qdisc, which this kernel lacks (or the testbed uses the delay proxy, whose delays are fixed at `up`)")
	}
	if (now.DiskRead != old.DiskRead || now.DiskWrite != old.DiskWrite) && s.Cgroup == nil {
		return old, now, errors.New("disk caps need the blkio (v1) or io (v2) cgroup controller with the work dir on a block device; this testbed came up without them")
	}
	if err := runAll(ctx, m.opt.Runner, netplan.Reshape(s.Topology, h, old, now, netplan.Options{Netem: s.Netem})); err != nil {
		return old, now, err
	}
	if s.Cgroup != nil {
		if err := m.limitDisk(s, host, now); err != nil {
			return old, now, err
		}
	}
	h.Shape = now
	return old, now, s.save()
}

// ShapeUplink changes rack's uplink ("" or "unlimited" removes the limit).
func (m *Manager) ShapeUplink(ctx context.Context, name, rack, uplink string) (old, now topo.Rate, err error) {
	if err := m.Preflight(); err != nil {
		return 0, 0, err
	}
	s, unlock, err := m.loadLocked(name)
	if err != nil {
		return 0, 0, err
	}
	defer unlock()
	i := -1
	for j, r := range s.Topology.Racks {
		if r.Name == rack {
			i = j
		}
	}
	if i < 0 {
		return 0, 0, fmt.Errorf("testbed %s has no rack %q", s.Name, rack)
	}
	r := &s.Topology.Racks[i]
	old = r.Uplink
	if uplink != "" && uplink != "unlimited" {
		if now, err = topo.ParseRate(uplink); err != nil {
			return old, 0, fmt.Errorf("uplink: %w", err)
		}
	}
	r.Uplink = now
	if err := runAll(ctx, m.opt.Runner, netplan.ReshapeUplink(s.Topology, *r)); err != nil {
		r.Uplink = old
		return old, now, err
	}
	return old, now, s.save()
}

// loadLocked loads a testbed's state under its lock.
func (m *Manager) loadLocked(name string) (*State, func(), error) {
	name, err := m.pick(name)
	if err != nil {
		return nil, nil, err
	}
	unlock, err := lock(m.opt.StateRoot, name)
	if err != nil {
		return nil, nil, err
	}
	s, err := m.Load(name)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	if s.Phase != PhaseUp {
		unlock()
		return nil, nil, fmt.Errorf("testbed %s is %s, not up", s.Name, s.Phase)
	}
	return s, unlock, nil
}
