package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"smarth/internal/client/fsshell"
)

// errTestFalse is fs test's answer "no": exit 1 and nothing printed.
var errTestFalse = errors.New("test: false")

func fsChmodCmd(f *fsFlags) *cobra.Command {
	var rec bool
	c := &cobra.Command{
		Use:   "chmod [-R] MODE PATH...",
		Short: "Change permissions: octal (755, 1777) or symbolic (u+x, go-w, a=rX, +t)",
		Long: `Change permissions, octal (755, 1777 with the sticky bit) or symbolic:
comma-separated [ugoa]*[+-=][rwxXt]* clauses (no ugoa means all; X is execute
for directories and already-executable files). Only the owner or a superuser
may change a mode; the namenode enforces it.`,
		Example: "  smarth fs chmod 700 /user/alice/private\n  smarth fs chmod -R go-w,a+rX /data",
		Args:    nArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := fsshell.ParseMode(args[0]); err != nil {
				return hadoopUsageErr("-chmod: chmod : mode '"+args[0]+"' does not match the expected pattern.", "chmod: %v; usage: %s", err, cmd.UseLine())
			}
			return f.run(func(ctx context.Context, sh *fsshell.Shell, paths []string) error {
				return sh.Chmod(ctx, args[0], paths, rec)
			})(cmd, args[1:])
		},
	}
	c.Flags().BoolVarP(&rec, "recursive", "R", false, "everything under the directories too")
	return c
}

func fsChownCmd(f *fsFlags) *cobra.Command {
	var rec bool
	c := &cobra.Command{
		Use:     "chown [-R] OWNER[:GROUP] PATH...",
		Short:   "Change owner and/or group (OWNER, OWNER:GROUP, :GROUP); a new owner needs a superuser",
		Example: "  smarth fs chown alice /user/alice\n  smarth fs chown -R alice:analysts /data/shared",
		Args:    nArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			owner, group, err := fsshell.ParseOwner(args[0])
			if err != nil {
				return hadoopUsageErr("-chown: '"+args[0]+"' does not match expected pattern for [owner][:group].", "chown: %v; usage: %s", err, cmd.UseLine())
			}
			return f.run(func(ctx context.Context, sh *fsshell.Shell, paths []string) error {
				return sh.Chown(ctx, "chown", owner, group, paths, rec)
			})(cmd, args[1:])
		},
	}
	c.Flags().BoolVarP(&rec, "recursive", "R", false, "everything under the directories too")
	return c
}

func fsChgrpCmd(f *fsFlags) *cobra.Command {
	var rec bool
	c := &cobra.Command{
		Use:     "chgrp [-R] GROUP PATH...",
		Short:   "Change the group (the owner may pick one of their groups; a superuser any)",
		Example: "  smarth fs chgrp -R analysts /data/shared",
		Args:    nArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, _, err := fsshell.ParseOwner(":" + args[0]); err != nil || args[0] == "" {
				return usageErr("chgrp: %q is not a group name", args[0])
			}
			return f.run(func(ctx context.Context, sh *fsshell.Shell, paths []string) error {
				return sh.Chown(ctx, "chgrp", "", args[0], paths, rec)
			})(cmd, args[1:])
		},
	}
	c.Flags().BoolVarP(&rec, "recursive", "R", false, "everything under the directories too")
	return c
}
