package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/testbed"
	"smarth/internal/testbed/topo"
)

// Net cuts and heals parts of a testbed's network (testbed.Manager).
type Net interface {
	Partition(ctx context.Context, name string, c testbed.Cut) error
	Heal(ctx context.Context, name string, c testbed.Cut) error
	Cuts(name string) ([]testbed.Cut, error)
}

// Partitioner cuts a random host or rack of a testbed off the network for
// a while and heals it: packets across the cut vanish both ways, so
// daemons and clients on either side see timeouts, not resets. A cut that
// outlasts the namenode's dead_node_timeout gets the datanodes behind it
// declared dead and their blocks re-replicated; the fault records which
// datanodes the namenode declared dead while it lasted.
type Partitioner struct {
	Net     Net
	Testbed *testbed.State
	// Cuts are the candidates, one picked uniformly per fault; default
	// every host and every rack of the testbed.
	Cuts           []testbed.Cut
	MinCut, MaxCut time.Duration // how long a cut lasts, uniform between
	// Cluster is the testbed's cluster as the run's clients see it, for
	// the namenode's datanode report.
	Cluster *cluster.State
	// DataNodes reports the namenode's view of the datanodes, polled
	// during a cut; default a client of Cluster.
	DataNodes func(ctx context.Context) ([]*dfspb.DatanodeInfo, error)
	Logf      func(format string, a ...any) // default the run's progress lines
	Warn      func(format string, a ...any) // default the run's report warnings
}

// report asks the namenode for its datanodes, through DataNodes or a
// client of Cluster made on first use.
func (p *Partitioner) report(ctx context.Context) ([]*dfspb.DatanodeInfo, error) {
	if p.DataNodes == nil {
		sec, err := p.Cluster.ClientSecurity()
		if err != nil {
			return nil, err
		}
		fsys, err := client.New(client.Config{NameNode: p.Cluster.NameNode, TokenFile: sec.TokenFile, TLS: sec.TLS})
		if err != nil {
			return nil, err
		}
		p.DataNodes = func(ctx context.Context) ([]*dfspb.DatanodeInfo, error) { return fsys.Datanodes(ctx, 0) }
	}
	return p.DataNodes(ctx)
}

// DefaultCuts is every host and every rack of t.
func DefaultCuts(t *topo.Topology) []testbed.Cut {
	var cuts []testbed.Cut
	for _, h := range t.Hosts {
		cuts = append(cuts, testbed.Cut{Kind: "host", Name: h.Name})
	}
	if len(t.Racks) > 1 { // one rack's uplink cuts nothing off
		for _, r := range t.Racks {
			cuts = append(cuts, testbed.Cut{Kind: "rack", Name: r.Name})
		}
	}
	return cuts
}

func (p *Partitioner) Inject(ctx context.Context, rng *rand.Rand) (Fault, error) {
	cuts := p.Cuts
	if len(cuts) == 0 {
		cuts = DefaultCuts(p.Testbed.Topology)
	}
	c := cuts[rng.IntN(len(cuts))]
	hold := outage(rng, p.MinCut, p.MaxCut)
	f := Fault{At: time.Now(), Kind: "partition", Daemon: c.String()}
	if err := p.Net.Partition(context.Background(), p.Testbed.Name, c); err != nil {
		// Half made, perhaps: heal before giving up.
		return f, errors.Join(fmt.Errorf("chaos: cut %s: %w", c, err), p.Net.Heal(context.Background(), p.Testbed.Name, c))
	}
	p.Logf("PARTITION %s for %s", c, hold.Round(time.Second))
	behind := p.dataNodesBehind(c)
	dead := map[string]bool{}
	end := time.Now().Add(hold)
	for time.Now().Before(end) {
		// The cut is the outage under test; the polls record what the
		// namenode made of it. The load's end does not shorten it.
		if len(behind) > 0 {
			qctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			if dns, err := p.report(qctx); err == nil {
				for _, d := range dns {
					if slices.Contains(behind, d.GetHostname()) && d.GetState() == dfspb.DatanodeState_DEAD && !dead[d.GetHostname()] {
						dead[d.GetHostname()] = true
						p.Logf("namenode declared %s dead %s into the cut", d.GetHostname(), time.Since(f.At).Round(time.Second))
					}
				}
			}
			cancel()
		}
		time.Sleep(min(time.Second, time.Until(end)))
	}
	for d := range dead {
		f.DeclaredDead = append(f.DeclaredDead, d)
	}
	slices.Sort(f.DeclaredDead)
	if err := p.Net.Heal(context.Background(), p.Testbed.Name, c); err != nil {
		return f, fmt.Errorf("chaos: heal %s: %w", c, err)
	}
	f.Down = time.Since(f.At)
	return f, nil
}

// dataNodesBehind are the datanode hosts that c cuts off from the
// namenode: from the side of the cut that holds most namenodes, where an
// HA group's active is (a single namenode is a group of one).
func (p *Partitioner) dataNodesBehind(c testbed.Cut) []string {
	t := p.Testbed.Topology
	// cut reports whether h is on the far side of c.
	cut := func(h topo.Host) bool {
		return c.Kind == "host" && c.Name == h.Name || c.Kind == "rack" && c.Name == h.Rack
	}
	var inside, outside int
	for _, h := range t.Hosts {
		if h.Has(topo.NameNode) {
			if cut(h) {
				inside++
			} else {
				outside++
			}
		}
	}
	// A cut host is cut off itself (a cut namenode host cuts off every
	// datanode from a single namenode, but then the report cannot be
	// asked either); a cut rack separates its datanodes from the
	// namenodes unless most of them are in it, when it is all the
	// others.
	nnInside := c.Kind == "rack" && inside > outside
	var out []string
	for _, h := range t.Hosts {
		if h.Has(topo.DataNode) && cut(h) != nnInside {
			out = append(out, h.Name)
		}
	}
	return out
}

// Settle heals every cut still in force and waits until every datanode
// of the testbed is live again and safe mode is off.
func (p *Partitioner) Settle(ctx context.Context) error {
	cuts, err := p.Net.Cuts(p.Testbed.Name)
	if err != nil {
		return err
	}
	for _, c := range cuts {
		p.Warn("%s still cut after the load; healing it", c)
		if err := p.Net.Heal(ctx, p.Testbed.Name, c); err != nil {
			return err
		}
	}
	var hosts []string
	for _, h := range p.Testbed.Topology.Hosts {
		if h.Has(topo.DataNode) {
			hosts = append(hosts, h.Name)
		}
	}
	return cluster.WaitDataNodes(ctx, p.Cluster, hosts)
}
