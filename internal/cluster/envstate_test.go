package cluster_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"smarth/internal/cluster"
	"smarth/internal/rpc/dfspb"
)

// haStatusNN answers GetHAStatus with a fixed role and term.
type haStatusNN struct {
	dfspb.UnimplementedClientProtocolServer
	state dfspb.HAState
	term  uint64
}

func (n *haStatusNN) GetHAStatus(context.Context, *dfspb.GetHAStatusRequest) (*dfspb.GetHAStatusResponse, error) {
	return &dfspb.GetHAStatusResponse{State: n.state, Term: n.term}, nil
}

func startHAStatusNN(t *testing.T, state dfspb.HAState, term uint64) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	dfspb.RegisterClientProtocolServer(s, &haStatusNN{state: state, term: term})
	go s.Serve(l)
	t.Cleanup(s.Stop)
	return l.Addr().String()
}

// A cluster known only by its namenode setting (a testbed's: `smarth
// chaos --testbed` makes its state from $SMARTH_NAMENODE, with no home and
// no records) is an HA group when the setting lists several namenodes,
// and its active is the member that says so: the chaos run's settle waits
// on it. Before, such a state was "not HA" and its comma list was dialled
// as one address, so the settle never ended.
func TestActiveNameNodeOfASettingOnly(t *testing.T) {
	t.Setenv(cluster.EnvTokenFile, "")
	t.Setenv(cluster.EnvCAFile, "")
	a := startHAStatusNN(t, dfspb.HAState_STANDBY, 3)
	b := startHAStatusNN(t, dfspb.HAState_ACTIVE, 3)
	c := startHAStatusNN(t, dfspb.HAState_STANDBY, 3)
	st := &cluster.State{NameNode: strings.Join([]string{a, b, c}, ",")}
	if !st.HA() {
		t.Fatal("a state whose namenode setting lists three is not HA")
	}
	addr, m, err := cluster.ActiveNameNode(context.Background(), st)
	if err != nil || addr != b || m.Name != b {
		t.Fatalf("ActiveNameNode = %q (%s), %v; want the one that says active, %s", addr, m.Name, err, b)
	}
	one := &cluster.State{NameNode: a}
	if addr, _, err := cluster.ActiveNameNode(context.Background(), one); one.HA() || err != nil || addr != a {
		t.Errorf("a single namenode setting: HA %v, active %q, %v; want not HA and %s", one.HA(), addr, err, a)
	}
}
