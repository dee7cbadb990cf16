package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"smarth/internal/pki"
	"smarth/internal/rpc/dfspb"
)

// newAdminHACmd is HDFS's haadmin: the state of every member of the
// namenode's HA group, and its operations (admin_haops.go).
func newAdminHACmd(a *adminConn) *cobra.Command {
	c := &cobra.Command{
		Use:   "ha",
		Short: "Namenode high availability: the state of each namenode of the group, failover, membership",
	}
	c.AddCommand(newAdminHAOpsCmds(a)...)
	c.AddCommand(&cobra.Command{
		Use:   "status",
		Short: "Show each configured namenode's state (active or standby), term and last applied edit",
		Long: `Ask the namenode for its HA group's members, then each member for its state,
and print one line per member as hdfs haadmin -getAllServiceState does
(host:port, active or standby), followed by its term (the leader's epoch) and
the last edit it applied. A namenode without HA is the active member of a group
of itself, at term 0.`,
		Example: `  smarth admin ha status
  smarth admin --namenode 10.0.0.2:8020 ha status`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			self, err := a.rpc.GetHAStatus(ctx, &dfspb.GetHAStatusRequest{})
			if err != nil {
				return a.explain(err)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 3, ' ', 0)
			if len(self.GetPeers()) == 0 {
				fmt.Fprintf(tw, "%s\t%s\tterm %d\tapplied_txid %d\n", a.addr, haState(self), self.GetTerm(), self.GetAppliedTxid())
				return tw.Flush()
			}
			for _, p := range self.GetPeers() {
				if p.GetRpcAddress() == "" {
					// Added through another namenode, missing from this one's ha_peers.
					fmt.Fprintf(tw, "%s\trpc address unknown to %s (not in its ha_peers)\n", p.GetId(), a.addr)
					continue
				}
				st, err := a.haStatusOf(cmd, p.GetRpcAddress())
				if err != nil {
					fmt.Fprintf(tw, "%s\tFailed to connect: %v\n", p.GetRpcAddress(), err)
					continue
				}
				fmt.Fprintf(tw, "%s\t%s\tterm %d\tapplied_txid %d\n", p.GetRpcAddress(), haState(st), st.GetTerm(), st.GetAppliedTxid())
			}
			return tw.Flush()
		},
	})
	return c
}

// haStatusOf asks the namenode at addr for its HA status.
func (a *adminConn) haStatusOf(cmd *cobra.Command, addr string) (*dfspb.GetHAStatusResponse, error) {
	if addr == a.addr {
		ctx, cancel := a.ctx(cmd)
		defer cancel()
		return a.rpc.GetHAStatus(ctx, &dfspb.GetHAStatusRequest{})
	}
	return a.haStatusAt(cmd.Context(), addr)
}

// haStatusAt asks the namenode at addr, over a connection of its own, for
// its HA status within ctx; an error is explained, naming addr.
func (a *adminConn) haStatusAt(parent context.Context, addr string) (*dfspb.GetHAStatusResponse, error) {
	_, tlsCfg, err := adminCredential(addr)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(addr, pki.DialOption(tlsCfg))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ctx, cancel := a.callCtx(parent)
	defer cancel()
	st, err := dfspb.NewClientProtocolClient(conn).GetHAStatus(ctx, &dfspb.GetHAStatusRequest{})
	if err != nil {
		return nil, (&adminConn{addr: addr}).explain(err)
	}
	return st, nil
}

// haState is haadmin's word for a state.
func haState(st *dfspb.GetHAStatusResponse) string {
	return strings.ToLower(st.GetState().String())
}
