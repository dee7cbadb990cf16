package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"smarth/internal/rpc/dfspb"
	"smarth/internal/testbed"
	"smarth/internal/testbed/topo"
)

// fakeNet records cuts and heals.
type fakeNet struct {
	mu    sync.Mutex
	calls []string
	cuts  []testbed.Cut
}

func (n *fakeNet) Partition(_ context.Context, _ string, c testbed.Cut) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls = append(n.calls, "cut "+c.String())
	n.cuts = append(n.cuts, c)
	return nil
}

func (n *fakeNet) Heal(_ context.Context, _ string, c testbed.Cut) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls = append(n.calls, "heal "+c.String())
	n.cuts = slices.DeleteFunc(n.cuts, func(x testbed.Cut) bool { return x == c })
	return nil
}

func (n *fakeNet) Cuts(string) ([]testbed.Cut, error) { return slices.Clone(n.cuts), nil }

const partitionTopo = `name: pt
racks: [{name: ra}, {name: rb}]
hosts:
  - {name: nn, rack: ra, roles: [namenode]}
  - {name: c, rack: ra, roles: [client]}
  - {name: a1, rack: ra, roles: [datanode]}
  - {name: b1, rack: rb, roles: [datanode]}
  - {name: b2, rack: rb, roles: [datanode]}
`

// A partition fault cuts, holds, and heals, and records the datanodes the
// namenode declared dead while it lasted: only those behind the cut.
func TestPartitionerCutsHoldsAndHeals(t *testing.T) {
	top, err := topo.Parse([]byte(partitionTopo))
	if err != nil {
		t.Fatal(err)
	}
	net := &fakeNet{}
	polls := 0
	pa := &Partitioner{Net: net, Testbed: &testbed.State{Name: "pt", Topology: top},
		Cuts: []testbed.Cut{{Kind: "rack", Name: "rb"}}, MinCut: 1500 * time.Millisecond, MaxCut: 1500 * time.Millisecond,
		DataNodes: func(context.Context) ([]*dfspb.DatanodeInfo, error) {
			polls++
			// Dead from the second poll: a1 (in front of the cut) is
			// reported dead too, and must not count.
			st := dfspb.DatanodeState_LIVE
			if polls > 1 {
				st = dfspb.DatanodeState_DEAD
			}
			var out []*dfspb.DatanodeInfo
			for _, h := range []string{"a1", "b1", "b2"} {
				out = append(out, &dfspb.DatanodeInfo{Hostname: h, State: st})
			}
			return out, nil
		},
		Logf: func(f string, a ...any) { t.Logf(f, a...) }}
	start := time.Now()
	f, err := pa.Inject(context.Background(), rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(net.calls); got != "[cut rack rb heal rack rb]" {
		t.Errorf("calls %s; want the cut, then its heal", got)
	}
	if time.Since(start) < 1500*time.Millisecond || f.Down < 1500*time.Millisecond {
		t.Errorf("the cut lasted %s (fault says %s); want at least the 1.5s drawn", time.Since(start), f.Down)
	}
	if f.Kind != "partition" || f.Daemon != "rack rb" || fmt.Sprint(f.DeclaredDead) != "[b1 b2]" {
		t.Errorf("fault %+v; want partition of rack rb with b1 and b2 declared dead", f)
	}
	if got := pa.dataNodesBehind(testbed.Cut{Kind: "rack", Name: "ra"}); fmt.Sprint(got) != "[b1 b2]" {
		t.Errorf("behind a cut of the namenode's rack: %v; want the other rack's datanodes", got)
	}
	if got := pa.dataNodesBehind(testbed.Cut{Kind: "host", Name: "a1"}); fmt.Sprint(got) != "[a1]" {
		t.Errorf("behind a cut of a1: %v", got)
	}
	if got := DefaultCuts(top); len(got) != 7 {
		t.Errorf("default cuts %v; want the 5 hosts and 2 racks", got)
	}
	// An HA group of three, two in ra (nn, a1) and one in rb (b1, listed
	// last): whichever rack is cut, the active is on ra's side, so rb's
	// datanodes are the ones cut off.
	ha, err := topo.Parse([]byte(strings.NewReplacer("{name: a1, rack: ra, roles: [datanode]}", "{name: a1, rack: ra, roles: [datanode, namenode]}",
		"{name: b1, rack: rb, roles: [datanode]}", "{name: b1, rack: rb, roles: [datanode, namenode]}").Replace(partitionTopo)))
	if err != nil {
		t.Fatal(err)
	}
	pa.Testbed.Topology = ha
	if got := pa.dataNodesBehind(testbed.Cut{Kind: "rack", Name: "rb"}); fmt.Sprint(got) != "[b1 b2]" {
		t.Errorf("HA, behind a cut of rb (one member): %v; want [b1 b2]", got)
	}
	if got := pa.dataNodesBehind(testbed.Cut{Kind: "rack", Name: "ra"}); fmt.Sprint(got) != "[b1 b2]" {
		t.Errorf("HA, behind a cut of ra (two members): %v; want [b1 b2]", got)
	}
}
