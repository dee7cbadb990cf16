package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"smarth/internal/pki"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/rpc/standby"
)

// The HA group's operations (HDFS's haadmin -failover, and membership
// changes): run on the active namenode, superusers only. They are added
// to `smarth admin ha` by newAdminHACmd.

// configOnly is what every membership command's help says: the group
// tells its namenodes, nothing tells datanodes and clients.
const configOnly = `Datanodes and clients learn of a member only through their configuration:
after the change, update the datanodes' namenode list and the clients'
namenodes: (or SMARTH_NAMENODE), and every namenode's ha_peers (a namenode
whose ha_peers lacks a member cannot name it as the active).`

func newAdminHAOpsCmds(a *adminConn) []*cobra.Command {
	transfer := &cobra.Command{
		Use:   "transfer-leader <id>",
		Short: "Make namenode <id> the active one (HDFS's haadmin -failover)",
		Long: `Hand the active role to the member of the HA group named <id>, as hdfs
haadmin -failover does: the active stops taking mutations, waits until every
one it acknowledged is committed on a majority, and the group's leadership
moves to <id>, which becomes the active namenode at a higher term. Clients
that called the old active are sent to the new one (StandbyException).
Refused, naming the id, for a member that is not in the group, that is
already active, or that has not answered the active lately.

The command may be sent to any namenode of the group: a standby's refusal
names the active, and the command asks it instead. Superusers only.`,
		Example: `  smarth admin ha transfer-leader nn2
  smarth admin --namenode 10.0.0.1:8020 ha transfer-leader nn2`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			from := ""
			sctx, cancel := a.ctx(cmd)
			if st, err := a.rpc.GetHAStatus(sctx, &dfspb.GetHAStatusRequest{}); err == nil {
				from = st.GetActiveId()
			}
			cancel()
			var resp *dfspb.TransferHALeaderResponse
			err := a.onActive(cmd, func(ctx context.Context, c dfspb.ClientProtocolClient) (err error) {
				resp, err = c.TransferHALeader(ctx, &dfspb.TransferHALeaderRequest{Id: id})
				return err
			})
			if err != nil {
				return fmt.Errorf("failover to %s failed: %w", id, err)
			}
			out := cmd.OutOrStdout()
			if from == "" {
				from = "the active"
			}
			// HDFS's HAAdmin text.
			fmt.Fprintf(out, "Failover from %s to %s successful\n", from, id)
			fmt.Fprintf(out, "active: %s (%s), term %d\n", resp.GetActiveId(), orUnknown(resp.GetActiveRpcAddress()), resp.GetTerm())
			return nil
		},
	}
	add := &cobra.Command{
		Use:   "add <id> <raft-addr> <rpc-addr> [<http-addr>]",
		Short: "Add namenode <id> to the HA group; it catches up from the active",
		Long: `Add a namenode to the HA group as a voting member. <raft-addr> is the address
its group log listens on (host:port, the host in its certificate),
<rpc-addr> and <http-addr> where clients and browsers reach it. Start the new
namenode with ha_id: <id>, ha_bootstrap: false, an empty meta_dir and every
member, itself included, in ha_peers; it receives the active's snapshot and
log, then serves as a standby. Refused, naming the id, for an id or raft
address already in the group, or when the larger group would have no
majority among the members that answer now (remove the ones that are gone
first). Superusers only; sent to a standby, it goes to the active.

` + configOnly,
		Example: `  smarth admin ha add nn3 10.0.0.4:8021 10.0.0.4:8020 10.0.0.4:9870`,
		Args:    addArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			req := &dfspb.AddHAMemberRequest{Id: args[0], RaftAddress: args[1], RpcAddress: args[2]}
			if len(args) == 4 {
				req.HttpAddress = args[3]
			}
			var resp *dfspb.AddHAMemberResponse
			err := a.onActive(cmd, func(ctx context.Context, c dfspb.ClientProtocolClient) (err error) {
				resp, err = c.AddHAMember(ctx, req)
				return err
			})
			if err != nil {
				return fmt.Errorf("adding %s failed: %w", args[0], err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Added %s (raft %s, rpc %s) to the HA group\n", req.Id, req.RaftAddress, req.RpcAddress)
			printMembers(out, resp.GetPeers())
			fmt.Fprintf(out, "Add %s to the datanodes' and clients' namenode lists and to every namenode's ha_peers: they learn of it only through configuration.\n", req.RpcAddress)
			return nil
		},
	}
	remove := &cobra.Command{
		Use:   "remove <id>",
		Short: "Remove namenode <id> from the HA group",
		Long: `Remove a member from the HA group: it no longer votes nor receives the log
(stop it afterwards). Refused, naming the id, for a member that is not in
the group, for the active itself (transfer-leader to another member first),
and when the members left that answer the active would be no majority of
the smaller group. Superusers only; sent to a standby, it goes to the active.

` + configOnly,
		Example: `  smarth admin ha remove nn2`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var resp *dfspb.RemoveHAMemberResponse
			err := a.onActive(cmd, func(ctx context.Context, c dfspb.ClientProtocolClient) (err error) {
				resp, err = c.RemoveHAMember(ctx, &dfspb.RemoveHAMemberRequest{Id: args[0]})
				return err
			})
			if err != nil {
				return fmt.Errorf("removing %s failed: %w", args[0], err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Removed %s from the HA group\n", args[0])
			printMembers(out, resp.GetPeers())
			fmt.Fprintf(out, "Remove %s from the datanodes' and clients' namenode lists and from every namenode's ha_peers.\n", args[0])
			return nil
		},
	}
	return []*cobra.Command{transfer, add, remove}
}

func printMembers(out io.Writer, peers []*dfspb.HAPeer) {
	var ids []string
	for _, p := range peers {
		ids = append(ids, p.GetId())
	}
	fmt.Fprintf(out, "members: %s\n", strings.Join(ids, ", "))
}

func orUnknown(s string) string {
	if s == "" {
		return "rpc address unknown"
	}
	return s
}

// onActive runs call on the --namenode one; when that is a standby whose
// refusal names the active, once more on the active (haadmin addresses
// the namenodes by id; here any member finds the one that can act).
func (a *adminConn) onActive(cmd *cobra.Command, call func(context.Context, dfspb.ClientProtocolClient) error) error {
	ctx, cancel := a.ctx(cmd)
	defer cancel()
	err := call(ctx, a.rpc)
	active, isStandby := standby.Is(err)
	if !isStandby || active == "" || active == a.addr {
		if err != nil {
			return a.explain(err)
		}
		return nil
	}
	_, tlsCfg, cerr := adminCredential(active)
	if cerr != nil {
		return cerr
	}
	conn, cerr := grpc.NewClient(active, pki.DialOption(tlsCfg))
	if cerr != nil {
		return cerr
	}
	defer conn.Close()
	if err := call(ctx, dfspb.NewClientProtocolClient(conn)); err != nil {
		return (&adminConn{addr: active}).explain(err)
	}
	return nil
}

// addArgs: three or four arguments, a usage error (exit 2) otherwise.
func addArgs(cmd *cobra.Command, args []string) error {
	if len(args) < 3 || len(args) > 4 {
		return usageErr("%s: needs 3 or 4 arguments; usage: %s", cmd.Name(), cmd.UseLine())
	}
	return nil
}
