package cluster

import (
	"cmp"
	"context"
	"fmt"
	"os/user"
	"slices"
	"time"

	"google.golang.org/grpc"

	"smarth/internal/auth"
	"smarth/internal/pki"
	"smarth/internal/rpc/dfspb"
)

// nameNode is a thin control-plane connection used to check readiness and
// print status. The launcher talks gRPC directly rather than through
// internal/client so that it depends only on the wire contract.
type nameNode struct {
	conn *grpc.ClientConn
	rpc  dfspb.ClientProtocolClient
	cred string // the launching user's credential ("": none, a simple cluster)
}

// dialNameNode connects to the namenode at addr of the cluster in st
// (its active one, for an HA group), with the launching user's
// credential and the cluster's CA.
func dialNameNode(st *State, addr string) (*nameNode, error) {
	sec, err := st.Security()
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(addr, pki.DialOption(sec.TLS))
	if err != nil {
		return nil, fmt.Errorf("namenode %s: %w", addr, err)
	}
	return &nameNode{conn: conn, rpc: dfspb.NewClientProtocolClient(conn), cred: sec.credential()}, nil
}

func (n *nameNode) Close() error { return n.conn.Close() }

func (n *nameNode) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	name := "smarth"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	// A secure namenode wants the launching user's credential, which Up
	// wrote to their token file in the home (absent: a simple cluster).
	ctx = auth.Caller{User: name, Credential: n.cred, Client: "smarth-cluster"}.Outgoing(ctx)
	return context.WithTimeout(ctx, 5*time.Second)
}

// Datanodes returns the namenode's datanode report (all states).
func (n *nameNode) Datanodes(ctx context.Context) ([]*dfspb.DatanodeInfo, error) {
	ctx, cancel := n.callCtx(ctx)
	defer cancel()
	r, err := n.rpc.GetDatanodeReport(ctx, &dfspb.GetDatanodeReportRequest{})
	if err != nil {
		return nil, err
	}
	return r.GetDatanodes(), nil
}

// SafeMode reports whether the namenode is in safe mode and why.
func (n *nameNode) SafeMode(ctx context.Context) (bool, string, error) {
	ctx, cancel := n.callCtx(ctx)
	defer cancel()
	r, err := n.rpc.SetSafeMode(ctx, &dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_GET})
	if err != nil {
		return false, "", err
	}
	return r.GetOn(), r.GetReason(), nil
}

// missingLive returns the hostnames in want that the report does not list
// as live.
func missingLive(report []*dfspb.DatanodeInfo, want []string) []string {
	var missing []string
	for _, h := range want {
		if !slices.ContainsFunc(report, func(d *dfspb.DatanodeInfo) bool {
			return d.GetHostname() == h && d.GetState() == dfspb.DatanodeState_LIVE
		}) {
			missing = append(missing, h)
		}
	}
	return missing
}

// WaitDataNodes polls the namenode of the cluster in st (the active one
// of an HA group, whichever it is at each poll) until every hostname in
// want is registered and live and safe mode is off, or ctx ends.
func WaitDataNodes(ctx context.Context, st *State, want []string) error {
	var (
		addr string
		nn   *nameNode
	)
	defer func() {
		if nn != nil {
			nn.Close()
		}
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		a, _, err := ActiveNameNode(ctx, st)
		if err == nil && a != addr {
			if nn != nil {
				nn.Close()
				nn = nil
			}
			addr = a
			nn, err = dialNameNode(st, addr)
		}
		if err == nil {
			last, err = nn.ready(ctx, want)
			if err == nil && last == "" {
				return nil
			}
		}
		if err != nil {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for datanodes %v to register with the namenode at %s: %s", want, cmp.Or(addr, st.NameNode), last)
		case <-tick.C:
		}
	}
}

// ready says what the namenode still lacks before the datanodes in want
// count as up ("" when nothing): one not live, or safe mode on.
func (n *nameNode) ready(ctx context.Context, want []string) (string, error) {
	report, err := n.Datanodes(ctx)
	if err != nil {
		return "", err
	}
	if m := missingLive(report, want); len(m) > 0 {
		return fmt.Sprintf("datanodes %v not registered yet (%d live)", m, len(want)-len(m)), nil
	}
	on, why, err := n.SafeMode(ctx)
	if err != nil {
		return "", err
	}
	if on {
		return "namenode still in safe mode: " + why, nil
	}
	return "", nil
}
