package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"smarth/internal/resourcemanager"
	"smarth/internal/rpc/mrpb"
)

func newJobNodesCmd() *cobra.Command {
	var jf jobFlags
	var all bool
	var states []string
	c := &cobra.Command{
		Use:   "nodes",
		Short: "List the node managers: state, running containers, slots, last heartbeat (yarn node -list)",
		Long: `List the node managers the resource manager knows, as YARN's yarn node -list:
"Total Nodes:N", then Node-Id, Node-State, Node-Http-Address and
Number-of-Running-Containers (running map and reduce attempts), followed by
each node's map and reduce slots in use of its total, its last heartbeat
(Last-Health-Update) and why it is not RUNNING (Health-Report).

By default RUNNING and DECOMMISSIONING nodes are listed (as YARN's);
--all adds those DECOMMISSIONED (drained after smarth job refreshNodes) and
LOST (no heartbeat for the resource manager's node_timeout), and --states
picks states. Any authenticated user may list the nodes.`,
		Example: "  smarth job nodes\n  smarth job nodes --all\n  smarth job nodes --states LOST",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			every := []string{resourcemanager.NodeRunning, resourcemanager.NodeDecommissioning, resourcemanager.NodeDecommissioned, resourcemanager.NodeLost}
			want := every[:2]
			if all {
				want = every
			}
			if len(states) > 0 {
				want = nil
				for _, s := range states {
					s = strings.ToUpper(strings.TrimSpace(s))
					if !slices.Contains(every, s) {
						return usageErr("--states %q: want one of %s", s, strings.Join(every, ", "))
					}
					want = append(want, s)
				}
			}
			jc, closeAll, err := jf.client(nil, false, nil)
			if err != nil {
				return err
			}
			defer closeAll()
			nodes, err := jc.Nodes(cmd.Context(), slices.Contains(want, resourcemanager.NodeLost))
			if err != nil {
				return err
			}
			nodes = slices.DeleteFunc(nodes, func(n *mrpb.NodeReport) bool { return !slices.Contains(want, n.GetState()) })
			printNodes(cmd.OutOrStdout(), nodes)
			return nil
		},
	}
	jf.add(c.Flags())
	c.Flags().BoolVar(&all, "all", false, "list nodes in every state (RUNNING, DECOMMISSIONING, DECOMMISSIONED, LOST), as yarn node -list -all")
	c.Flags().StringSliceVar(&states, "states", nil, "only nodes in these states: RUNNING, DECOMMISSIONING, DECOMMISSIONED, LOST (comma-separated)")
	return c
}

// newJobRefreshNodesCmd is YARN's rmadmin -refreshNodes.
func newJobRefreshNodesCmd() *cobra.Command {
	var jf jobFlags
	c := &cobra.Command{
		Use:   "refreshNodes",
		Short: "Re-read the resource manager's hosts_exclude_file: decommission the node managers it lists (admins)",
		Long: `Make the resource manager re-read its hosts_exclude_file
(yarn.resourcemanager.nodes.exclude-path), as yarn rmadmin -refreshNodes does.
Node managers listed there (hostname or node id, one per line) are
decommissioned gracefully: they are offered no new containers, what runs on
them finishes, and once no unfinished job needs a map output they hold they
are DECOMMISSIONED (smarth job nodes --all) and can be shut down. Node
managers taken out of the file return to service. Only the resource
manager's admins (admin_users, admin_group) and the user running it may.`,
		Example: `  echo nm4 >> /etc/smarth/nm-exclude    # the resource manager's hosts_exclude_file
  smarth job refreshNodes
  smarth job nodes --all                 # DECOMMISSIONING, then DECOMMISSIONED`,
		Aliases: []string{"refreshnodes"},
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			jc, closeAll, err := jf.client(nil, false, nil)
			if err != nil {
				return err
			}
			defer closeAll()
			resp, err := jc.RefreshNodes(cmd.Context())
			if err != nil {
				return fmt.Errorf("refreshNodes: %w", err)
			}
			for _, id := range resp.GetDecommissioning() {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: decommissioning\n", id)
			}
			for _, id := range resp.GetRecommissioned() {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: back in service\n", id)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Refresh nodes successful")
			return nil
		},
	}
	jf.add(c.Flags())
	return c
}

// yarnNodesPattern is YARN's NodeCLI table row, so that what reads
// `yarn node -list` reads this; smarth's columns follow.
const yarnNodesPattern = "%16s\t%15s\t%17s\t%28s"

// yarnHealthTime is how YARN's node status prints Last-Health-Update.
const yarnHealthTime = "Mon 02 Jan 15:04:05:000 MST 2006"

func printNodes(w io.Writer, nodes []*mrpb.NodeReport) {
	fmt.Fprintf(w, "Total Nodes:%d\n", len(nodes))
	fmt.Fprintf(w, yarnNodesPattern+"\t%9s\t%12s\t%-32s\t%s\n", "Node-Id", "Node-State", "Node-Http-Address",
		"Number-of-Running-Containers", "Map-Slots", "Reduce-Slots", "Last-Health-Update", "Health-Report")
	for _, n := range nodes {
		last := "-"
		if ms := n.GetLastHeartbeatMs(); ms > 0 {
			last = time.UnixMilli(ms).Format(yarnHealthTime)
		}
		fmt.Fprintf(w, yarnNodesPattern+"\t%9s\t%12s\t%-32s\t%s\n", n.GetNodeId(), n.GetState(), n.GetHttpAddr(),
			fmt.Sprint(n.GetRunningMaps()+n.GetRunningReduces()),
			fmt.Sprintf("%d/%d", n.GetRunningMaps(), n.GetMapSlots()), fmt.Sprintf("%d/%d", n.GetRunningReduces(), n.GetReduceSlots()),
			last, n.GetHealthReport())
	}
}
