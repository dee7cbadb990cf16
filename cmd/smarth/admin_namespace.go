package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"smarth/internal/rpc/dfspb"
)

// newAdminSaveNamespaceCmd is HDFS's dfsadmin -saveNamespace.
func newAdminSaveNamespaceCmd(a *adminConn) *cobra.Command {
	return &cobra.Command{
		Use:   "saveNamespace",
		Short: "Save the namespace to a new image now and trim the edit log (superusers, in safe mode)",
		Long: `Save the current namespace into a new checkpoint image in the namenode's
meta_dir and remove the edit log segments it makes redundant, as HDFS's
hdfs dfsadmin -saveNamespace: a fast next start, or a fresh image before an
upgrade or a backup. Only a superuser may, and only in safe mode (enter it
with smarth admin safemode enter, leave it afterwards), so that the image is
the namespace at the moment chosen.`,
		Example: `  smarth admin safemode enter
  smarth admin saveNamespace
  smarth admin safemode leave`,
		Aliases: []string{"savenamespace"},
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			if _, err := a.rpc.SaveNamespace(ctx, &dfspb.SaveNamespaceRequest{}); err != nil {
				return fmt.Errorf("saveNamespace: %w", a.explain(err))
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Save namespace successful")
			return nil
		},
	}
}

// newAdminRefreshNodesCmd is HDFS's dfsadmin -refreshNodes.
func newAdminRefreshNodesCmd(a *adminConn) *cobra.Command {
	return &cobra.Command{
		Use:   "refreshNodes",
		Short: "Re-read the namenode's hosts_exclude_file: decommission the datanodes it lists (superusers)",
		Long: `Make the namenode re-read its hosts_exclude_file (HDFS's dfs.hosts.exclude),
as hdfs dfsadmin -refreshNodes does. Datanodes listed there (hostname or IP,
one per line) start decommissioning: they take no new replicas, and their
replicas are copied to the other datanodes until every block they hold is
fully replicated without them; smarth admin report then shows them as
Decommissioned and they can be shut down. Datanodes removed from the file
return to service. Datanodes listed in hosts_maintenance_file ("HOST
[END-TIME]", RFC 3339) enter maintenance, as HDFS's IN_MAINTENANCE: once every
block they hold has maintenance_replication_min replicas elsewhere they are In
Maintenance and may go down without their replicas being copied, until they
leave the file or the end time passes. With HA, run it against each namenode
(each reads its own files).`,
		Example: `  echo dn4 >> /etc/smarth/exclude      # the namenode's hosts_exclude_file
  smarth admin refreshNodes
  smarth admin report                    # DECOMMISSION STATUS: in progress, then Decommissioned
  echo "dn2 2026-12-01T06:00:00Z" > /etc/smarth/maintenance   # hosts_maintenance_file
  smarth admin refreshNodes              # dn2: entering maintenance`,
		Aliases: []string{"refreshnodes"},
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := a.ctx(cmd)
			defer cancel()
			resp, err := a.rpc.RefreshNodes(ctx, &dfspb.RefreshNodesRequest{})
			if err != nil {
				return fmt.Errorf("refreshNodes: %w", a.explain(err))
			}
			for _, h := range resp.GetDecommissioning() {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: decommissioning\n", h)
			}
			for _, h := range resp.GetRecommissioned() {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: back in service\n", h)
			}
			for _, h := range resp.GetEnteringMaintenance() {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: entering maintenance\n", h)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Refresh nodes successful")
			return nil
		},
	}
}
