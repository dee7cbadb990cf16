package testbed

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"

	"smarth/internal/auth"
	"smarth/internal/pki"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/testbed/daemonplan"
	"smarth/internal/testbed/netns"
	"smarth/internal/testbed/topo"
)

// waitRegistered waits until every datanode of the topology is live at the
// namenode, in the rack the topology puts it in, and safe mode is off. It
// asks each namenode from inside its own host's namespace, the one place
// that always reaches it; of an HA group it takes the answer of the
// active (standbys refuse the report as HDFS's do), so it also waits for
// the group to elect one.
func (m *Manager) waitRegistered(ctx context.Context, s *State) error {
	cred, err := auth.ReadTokenFile(s.TokenFile())
	if err != nil {
		return fmt.Errorf("the testbed owner's token: %w", err)
	}
	nns := s.Topology.WithRole(topo.NameNode)
	want := hostsWith(s.Topology, topo.DataNode)
	if len(nns) == 0 || len(want) == 0 {
		return nil
	}
	var tlsConf *tls.Config
	if ca := s.CAFile(); ca != "" {
		if tlsConf, err = pki.ClientConfig(ca); err != nil {
			return err
		}
	}
	addrs := strings.Split(daemonplan.NameNodeAddr(s.Topology), ",")
	rpcs := make([]dfspb.ClientProtocolClient, len(nns))
	for i, nn := range nns {
		conn, err := grpc.NewClient("passthrough:///"+addrs[i], pki.DialOption(tlsConf),
			grpc.WithContextDialer(netns.Dialer(s.nsPath(nn.Name))))
		if err != nil {
			return err
		}
		defer conn.Close()
		rpcs[i] = dfspb.NewClientProtocolClient(conn)
	}
	ctx, cancel := context.WithTimeout(ctx, m.opt.ReadyTimeout)
	defer cancel()
	var last string
	for {
		var msgs []string
		for i, rpc := range rpcs {
			msg, done := checkRegistered(ctx, rpc, s.Topology, want, cred)
			if done {
				m.logf("all %d datanodes registered in their racks at %s; safe mode off", len(want), addrs[i])
				return nil
			}
			if len(rpcs) > 1 {
				msg = addrs[i] + ": " + msg
			}
			msgs = append(msgs, msg)
		}
		last = strings.Join(msgs, "; ")
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for datanodes %s to register with the namenode at %s: %s", strings.Join(want, ", "), strings.Join(addrs, ","), last)
		case <-time.After(100 * time.Millisecond): // poll the namenode
		}
	}
}

// checkRegistered asks once; it returns why the cluster is not ready yet,
// or done.
func checkRegistered(ctx context.Context, rpc dfspb.ClientProtocolClient, t *topo.Topology, want []string, cred string) (string, bool) {
	ctx = auth.Caller{Credential: cred, Client: "smarth-testbed"}.Outgoing(ctx)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r, err := rpc.GetDatanodeReport(ctx, &dfspb.GetDatanodeReportRequest{})
	if err != nil {
		return err.Error(), false
	}
	var missing, misplaced []string
	for _, name := range want {
		i := slices.IndexFunc(r.GetDatanodes(), func(d *dfspb.DatanodeInfo) bool {
			return d.GetHostname() == name && d.GetState() == dfspb.DatanodeState_LIVE
		})
		if i < 0 {
			missing = append(missing, name)
			continue
		}
		h, _ := t.Host(name)
		rack, _ := t.Rack(h.Rack)
		if got := r.GetDatanodes()[i].GetRack(); got != rack.Path() {
			misplaced = append(misplaced, fmt.Sprintf("%s in %q, want %q", name, got, rack.Path()))
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("not registered yet: %s", strings.Join(missing, ", ")), false
	}
	if len(misplaced) > 0 {
		// The namenode's rack map comes from the topology; a mismatch
		// means it ignored it, which no waiting will fix.
		return "racks differ from the topology: " + strings.Join(misplaced, "; "), false
	}
	sm, err := rpc.SetSafeMode(ctx, &dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_GET})
	if err != nil {
		return err.Error(), false
	}
	if sm.GetOn() {
		return "namenode still in safe mode: " + sm.GetReason(), false
	}
	return "", true
}
