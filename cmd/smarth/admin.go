package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/user"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/pki"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/units"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newAdminCmd()} })

// adminConn is the namenode connection of one admin command.
type adminConn struct {
	addr string
	user string
	cred string // the caller's credential (secure namenodes), see security.go
	conn *grpc.ClientConn
	rpc  dfspb.ClientProtocolClient
}

func (a *adminConn) ctx(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return a.callCtx(cmd.Context())
}

// callCtx is one call's context under parent: the caller's credentials
// and a deadline.
func (a *adminConn) callCtx(parent context.Context) (context.Context, context.CancelFunc) {
	ctx := auth.Caller{User: a.user, Credential: a.cred, Client: "smarth-admin"}.Outgoing(parent)
	return context.WithTimeout(ctx, 30*time.Second)
}

// explain turns an RPC error into a sentence: the namenode's own message,
// or that it cannot be reached.
func (a *adminConn) explain(err error) error {
	st, ok := status.FromError(err)
	switch {
	case !ok:
		return err
	case st.Code() == codes.Unavailable && strings.Contains(st.Message(), "connection"):
		return fmt.Errorf("cannot reach the namenode at %s (is it running? set --namenode or SMARTH_NAMENODE): %s", a.addr, st.Message())
	case st.Code() == codes.DeadlineExceeded:
		return fmt.Errorf("the namenode at %s did not answer in time", a.addr)
	}
	return fmt.Errorf("%s", st.Message())
}

// connect dials the namenode named by --namenode (else $SMARTH_NAMENODE,
// else the local cluster) as --user (else the OS user).
func (a *adminConn) connect() error {
	if a.addr == "" {
		// $SMARTH_NAMENODE, else the local cluster of $SMARTH_HOME,
		// as every other command finds it.
		a.addr = cluster.DefaultNameNode()
	}
	if a.user == "" {
		a.user = "smarth"
		if u, err := user.Current(); err == nil {
			a.user = u.Username
		}
	}
	addrs := client.NameNodes(a.addr)
	cred, tlsCfg, err := adminCredential(addrs[0])
	if err != nil {
		return err
	}
	a.cred = cred
	if len(addrs) > 1 {
		// The namenodes of an HA group: talk to the active, as HDFS's
		// dfsadmin does through its failover proxy (a standby's refusal
		// of an HA operation still names the active; see onActive).
		if a.addr, err = a.pickActive(addrs); err != nil {
			return err
		}
	}
	conn, err := grpc.NewClient(a.addr, pki.DialOption(tlsCfg))
	if err != nil {
		return usageErr("--namenode %q: %v", a.addr, err)
	}
	a.conn, a.rpc = conn, dfspb.NewClientProtocolClient(conn)
	return nil
}

// pickActive asks each of an HA group's namenodes for its HA status and
// returns the one that says ACTIVE at the highest term; with none active
// (an election under way), the first that answered, whose refusal of a
// mutation names the active once there is one.
func (a *adminConn) pickActive(addrs []string) (string, error) {
	type answer struct {
		st  *dfspb.GetHAStatusResponse
		err error
	}
	answers := make([]answer, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return "", usageErr("--namenode %q: %q is not host:port", strings.Join(addrs, ","), addr)
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			answers[i].st, answers[i].err = a.haStatusAt(ctx, addr)
		})
	}
	wg.Wait()
	best, first := -1, -1
	var why []string
	for i, ans := range answers {
		if ans.err != nil {
			why = append(why, fmt.Sprintf("%s: %v", addrs[i], ans.err))
			continue
		}
		if first < 0 {
			first = i
		}
		if ans.st.GetState() == dfspb.HAState_ACTIVE && (best < 0 || ans.st.GetTerm() > answers[best].st.GetTerm()) {
			best = i
		}
	}
	switch {
	case best >= 0:
		return addrs[best], nil
	case first >= 0:
		return addrs[first], nil
	}
	return "", fmt.Errorf("no namenode of %s answered: %s", strings.Join(addrs, ","), strings.Join(why, "; "))
}

func newAdminCmd() *cobra.Command {
	a := &adminConn{}
	c := &cobra.Command{
		Use:   "admin",
		Short: "Administer the namenode: datanode report, client speed records, safe mode, cache",
		Example: `  smarth admin report
  smarth admin speeds --client smarth-client-host1-123
  smarth admin safemode get
  smarth admin cache
  smarth admin --namenode 10.0.0.1:8020 safemode leave`,
		PersistentPreRunE: func(*cobra.Command, []string) error { return a.connect() },
		PersistentPostRunE: func(*cobra.Command, []string) error {
			if a.conn != nil {
				return a.conn.Close()
			}
			return nil
		},
	}
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr("%v", err) })
	c.PersistentFlags().StringVar(&a.addr, "namenode", "", "namenode host:port (default $SMARTH_NAMENODE, the local cluster, else 127.0.0.1:8020)")
	c.PersistentFlags().StringVar(&a.user, "user", "", "act as this user (default: the OS user)")
	c.AddCommand(newAdminReportCmd(a), newAdminSpeedsCmd(a), newAdminSafeModeCmd(a), newAdminCacheCmd(a), newAdminSaveNamespaceCmd(a), newAdminRefreshNodesCmd(a), newAdminBalancerCmd(a), newAdminHACmd(a))
	c.AddCommand(newAdminQuotaCmds(a)...)
	c.AddCommand(newAdminFeatureCmds(a)...)
	return c
}

func newAdminReportCmd(a *adminConn) *cobra.Command {
	var live, dead bool
	c := &cobra.Command{
		Use:   "report",
		Short: "Show the datanodes by rack, their state and space, and the health of the blocks",
		Example: `  smarth admin report
  smarth admin report --dead`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if live && dead {
				return usageErr("report: --live and --dead exclude each other")
			}
			state := dfspb.DatanodeState_DATANODE_STATE_UNSPECIFIED
			if live {
				state = dfspb.DatanodeState_LIVE
			} else if dead {
				state = dfspb.DatanodeState_DEAD
			}
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			sm, err := a.rpc.SetSafeMode(ctx, &dfspb.SetSafeModeRequest{Action: dfspb.SafeModeAction_SAFE_MODE_GET})
			if err != nil {
				return a.explain(err)
			}
			rep, err := a.rpc.GetDatanodeReport(ctx, &dfspb.GetDatanodeReportRequest{State: state})
			if err != nil {
				return a.explain(err)
			}
			fsck, err := a.rpc.Fsck(ctx, &dfspb.FsckRequest{Path: "/"})
			if err != nil {
				return a.explain(err)
			}
			printReport(cmd.OutOrStdout(), a.addr, sm, rep.GetDatanodes(), fsck)
			return nil
		},
	}
	c.Flags().BoolVar(&live, "live", false, "only live datanodes")
	c.Flags().BoolVar(&dead, "dead", false, "only dead datanodes")
	return c
}

func printReport(w io.Writer, addr string, sm *dfspb.SetSafeModeResponse, nodes []*dfspb.DatanodeInfo, fsck *dfspb.FsckResponse) {
	var capacity, used, nonDFS, remaining int64
	liveN, deadN := 0, 0
	for _, d := range nodes {
		if d.GetState() == dfspb.DatanodeState_LIVE {
			liveN++
			capacity, used, remaining = capacity+d.GetCapacity(), used+d.GetDfsUsed(), remaining+d.GetRemaining()
			nonDFS += d.NonDfsUsed()
		} else {
			deadN++
		}
	}
	fmt.Fprintf(w, "Namenode %s\n", addr)
	if sm.GetOn() {
		fmt.Fprintf(w, "Safe mode: ON — %s\n", sm.GetReason())
	} else {
		fmt.Fprintln(w, "Safe mode: off")
	}
	fmt.Fprintf(w, "Capacity: %s, used %s, non DFS used %s, remaining %s (live datanodes)\n", units.FormatSize(capacity),
		units.FormatSize(used), units.FormatSize(nonDFS), units.FormatSize(remaining))
	fmt.Fprintf(w, "Blocks: %d total, %d under-replicated, %d missing, %d corrupt — %s\n", fsck.GetTotalBlocks(),
		fsck.GetUnderReplicated(), fsck.GetMissing(), fsck.GetCorrupt(), map[bool]string{true: "HEALTHY", false: "NOT HEALTHY"}[fsck.GetHealthy()])
	fmt.Fprintf(w, "Datanodes: %d live, %d dead\n", liveN, deadN)
	byRack := map[string][]*dfspb.DatanodeInfo{}
	var racks []string
	for _, d := range nodes {
		if byRack[d.GetRack()] == nil {
			racks = append(racks, d.GetRack())
		}
		byRack[d.GetRack()] = append(byRack[d.GetRack()], d)
	}
	sort.Strings(racks)
	for _, r := range racks {
		fmt.Fprintf(w, "\nRack %s\n", r)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  HOST\tADDRESS\tSTATE\tDECOMMISSION STATUS\tCAPACITY\tUSED\tNON DFS USED\tREMAINING\tBLOCKS\tXCEIVERS\tLAST HEARTBEAT\tID")
		for _, d := range byRack[r] {
			ago := "never"
			if d.GetLastHeartbeatUnixMs() > 0 {
				ago = time.Since(time.UnixMilli(d.GetLastHeartbeatUnixMs())).Round(time.Second).String() + " ago"
			}
			fmt.Fprintf(tw, "  %s\t%s:%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", d.GetHostname(), d.GetIpAddr(), d.GetDataPort(),
				d.GetState(), decommissionStatus(d.GetAdminState()), units.FormatSize(d.GetCapacity()), units.FormatSize(d.GetDfsUsed()), units.FormatSize(d.NonDfsUsed()),
				units.FormatSize(d.GetRemaining()),
				d.GetNumBlocks(), d.GetXceiverCount(), ago, d.GetId())
		}
		tw.Flush()
	}
}

// decommissionStatus is HDFS's "Decommission Status" wording.
func decommissionStatus(s dfspb.AdminState) string {
	switch s {
	case dfspb.AdminState_DECOMMISSION_IN_PROGRESS:
		return "Decommission in progress"
	case dfspb.AdminState_DECOMMISSIONED:
		return "Decommissioned"
	case dfspb.AdminState_ENTERING_MAINTENANCE:
		return "Entering maintenance"
	case dfspb.AdminState_IN_MAINTENANCE:
		return "In maintenance"
	}
	return "Normal"
}

func newAdminCacheCmd(a *adminConn) *cobra.Command {
	return &cobra.Command{
		Use:     "cache",
		Short:   "Show the in-memory block cache per datanode and per application (same as smarth cache stats)",
		Example: "  smarth admin cache",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			st, err := a.rpc.GetCacheStats(ctx, &dfspb.GetCacheStatsRequest{})
			if err != nil {
				return a.explain(err)
			}
			printCacheStats(cmd.OutOrStdout(), st)
			return nil
		},
	}
}

func newAdminSpeedsCmd(a *adminConn) *cobra.Command {
	var client string
	c := &cobra.Command{
		Use:   "speeds",
		Short: "Show the transfer speeds each client host reported to each first datanode (SMARTH)",
		Example: `  smarth admin speeds
  smarth admin speeds --client 10.77.1.11
  smarth admin speeds --client smarth-client-host1-123   # that client's host`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			sp, err := a.rpc.GetSpeeds(ctx, &dfspb.GetSpeedsRequest{ClientName: client})
			if err != nil {
				return a.explain(err)
			}
			hosts := map[string]string{}
			if rep, err := a.rpc.GetDatanodeReport(ctx, &dfspb.GetDatanodeReportRequest{}); err == nil {
				for _, d := range rep.GetDatanodes() {
					hosts[d.GetId()] = d.GetHostname()
				}
			}
			w := cmd.OutOrStdout()
			if len(sp.GetRecords()) == 0 {
				fmt.Fprintln(w, "No speed records (no client has reported block transfers yet).")
				return nil
			}
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "CLIENT HOST\tDATANODE\tRECENT MB/s\tHISTORICAL MB/s\tSAMPLES\tLAST SAMPLE")
			for _, r := range sp.GetRecords() {
				dn := r.GetDatanodeId()
				if h := hosts[dn]; h != "" {
					dn = h
				}
				fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%d\t%s\n", r.GetClientName(), dn, r.GetRecentBytesPerSec()/1e6,
					r.GetHistoricalBytesPerSec()/1e6, r.GetSamples(), time.UnixMilli(r.GetLastUnixMs()).Format("2006-01-02 15:04:05"))
			}
			return tw.Flush()
		},
	}
	c.Flags().StringVar(&client, "client", "", "only the records of this client host (or of the host of the client so named)")
	return c
}

func newAdminSafeModeCmd(a *adminConn) *cobra.Command {
	return &cobra.Command{
		Use:   "safemode get|enter|leave",
		Short: "Show, enter or leave safe mode (no namespace changes, no replica deletion)",
		Example: `  smarth admin safemode get
  smarth admin safemode enter
  smarth admin safemode leave`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			actions := map[string]dfspb.SafeModeAction{
				"get": dfspb.SafeModeAction_SAFE_MODE_GET, "enter": dfspb.SafeModeAction_SAFE_MODE_ENTER,
				"leave": dfspb.SafeModeAction_SAFE_MODE_LEAVE,
			}
			action, ok := actions[args[0]]
			if !ok {
				return usageErr("safemode: unknown action %q (want get, enter or leave)", args[0])
			}
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			r, err := a.rpc.SetSafeMode(ctx, &dfspb.SetSafeModeRequest{Action: action})
			if err != nil {
				return a.explain(err)
			}
			if r.GetOn() {
				fmt.Fprintf(cmd.OutOrStdout(), "Safe mode is ON: %s\n", r.GetReason())
			} else {
				fmt.Fprintln(cmd.OutOrStdout(), "Safe mode is OFF")
			}
			return nil
		},
	}
}
