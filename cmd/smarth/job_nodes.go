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

By default only RUNNING nodes are listed; --all adds those LOST (no
heartbeat for the resource manager's node_timeout), and --states picks
states. Any authenticated user may list the nodes.`,
		Example: "  smarth job nodes\n  smarth job nodes --all\n  smarth job nodes --states LOST",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			want := []string{resourcemanager.NodeRunning}
			if all {
				want = []string{resourcemanager.NodeRunning, resourcemanager.NodeLost}
			}
			if len(states) > 0 {
				want = nil
				for _, s := range states {
					s = strings.ToUpper(strings.TrimSpace(s))
					if s != resourcemanager.NodeRunning && s != resourcemanager.NodeLost {
						return usageErr("--states %q: want RUNNING or LOST", s)
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
	c.Flags().BoolVar(&all, "all", false, "list nodes in every state (RUNNING and LOST), as yarn node -list -all")
	c.Flags().StringSliceVar(&states, "states", nil, "only nodes in these states: RUNNING, LOST (comma-separated)")
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
