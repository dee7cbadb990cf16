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
