package cluster

import (
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

// dialNameNode connects to the namenode of the cluster in st, with the
// launching user's credential and the cluster's CA.
func dialNameNode(st *State) (*nameNode, error) {
	sec, err := st.Security()
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(st.NameNode, pki.DialOption(sec.TLS))
	if err != nil {
		return nil, fmt.Errorf("namenode %s: %w", st.NameNode, err)
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

// WaitDataNodes polls the namenode of the cluster in st until every
// hostname in want is registered and live and safe mode is off, or ctx
// ends.
func WaitDataNodes(ctx context.Context, st *State, want []string) error {
	addr := st.NameNode
	nn, err := dialNameNode(st)
	if err != nil {
		return err
	}
	defer nn.Close()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		report, err := nn.Datanodes(ctx)
		switch {
		case err != nil:
			last = err.Error()
		default:
			if m := missingLive(report, want); len(m) > 0 {
				last = fmt.Sprintf("datanodes %v not registered yet (%d live)", m, len(want)-len(m))
				break
			}
			on, why, err := nn.SafeMode(ctx)
			if err != nil {
				last = err.Error()
				break
			}
			if !on {
				return nil
			}
			last = "namenode still in safe mode: " + why
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for datanodes %v to register with the namenode at %s: %s", want, addr, last)
		case <-tick.C:
		}
	}
}
