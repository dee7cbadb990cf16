package main

import (
	"context"

	"github.com/spf13/cobra"

	"smarth/internal/client/fsshell"
)

// fs commands for ACLs and snapshots, as hdfs dfs has them.
func fsFeatureCmds(f *fsFlags) []*cobra.Command {
	var recursive bool
	getfacl := &cobra.Command{
		Use:   "getfacl [-R] PATH...",
		Short: "Print the ACLs of files and directories",
		Long: `Print access control lists as hdfs dfs -getfacl: "# file:", "# owner:",
"# group:", then one entry per line (user::, user:NAME:, group::, group:NAME:,
mask::, other::, and default: entries of directories); "#effective:" shows
what the mask leaves of an entry. -R recurses.`,
		Example: "  smarth fs getfacl /data\n  smarth fs getfacl -R /data", Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			return sh.Getfacl(ctx, args, recursive)
		}),
	}
	getfacl.Flags().BoolVarP(&recursive, "recursive", "R", false, "list the ACLs of everything below directories too")

	var o fsshell.SetfaclOptions
	setfacl := &cobra.Command{
		Use:   "setfacl [-R] {-b | -k | -m SPEC | -x SPEC | --set SPEC} PATH...",
		Short: "Change the ACLs of files and directories",
		Long: `Change access control lists as hdfs dfs -setfacl. SPEC is a comma-separated
list of entries [default:]user|group|mask|other:[NAME]:PERM (PERM like rwx,
r-x; -x takes entries without PERM).
  -m SPEC     add or change entries (the mask is recalculated unless given)
  -x SPEC     remove entries
  --set SPEC  replace the ACL (it must have user::, group:: and other::)
  -b          remove every entry but the base ones (back to mode bits)
  -k          remove the default ACL
  -R          also everything below (files skip default entries)
Only the owner or a superuser may change an ACL. chmod on a file with an ACL
changes its mask.`,
		Example: "  smarth fs setfacl -m user:bob:r-x /data\n  smarth fs setfacl -m default:group:eng:rwx /shared\n  smarth fs setfacl -x user:bob /data\n  smarth fs setfacl --set user::rwx,group::r-x,other::---,user:bob:rwx /data\n  smarth fs setfacl -b /data",
		Args:    nArgs(1),
		RunE:    f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Setfacl(ctx, args, o) }),
	}
	setfacl.Flags().BoolVarP(&o.RemoveAll, "remove-all", "b", false, "remove all but the base ACL entries")
	setfacl.Flags().BoolVarP(&o.RemoveDefault, "remove-default", "k", false, "remove the default ACL")
	setfacl.Flags().StringVarP(&o.Modify, "modify", "m", "", "entries to add or change")
	setfacl.Flags().StringVarP(&o.Remove, "remove", "x", "", "entries to remove")
	setfacl.Flags().StringVar(&o.Set, "set", "", "the whole new ACL")
	setfacl.Flags().BoolVarP(&o.Recursive, "recursive", "R", false, "apply to everything below directories too")

	create := &cobra.Command{
		Use:   "createSnapshot DIR [NAME]",
		Short: "Snapshot a snapshottable directory (read it under DIR/.snapshot/NAME)",
		Long: `Create a read-only snapshot of a directory made snapshottable with
"smarth admin allowSnapshot". Without NAME it is named sYYYYMMDD-HHMMSS.mmm
(UTC). Only the directory's owner or a superuser may. The snapshot is read
at DIR/.snapshot/NAME: ls, cat, get work there; nothing can be written.`,
		Example: "  smarth fs createSnapshot /data before-cleanup\n  smarth fs ls /data/.snapshot/before-cleanup",
		Args:    cobra.RangeArgs(1, 2),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			name := ""
			if len(args) == 2 {
				name = args[1]
			}
			return sh.CreateSnapshot(ctx, args[0], name)
		}),
	}
	del := &cobra.Command{
		Use: "deleteSnapshot DIR NAME", Short: "Delete a snapshot (its blocks go once no snapshot or file holds them)",
		Example: "  smarth fs deleteSnapshot /data before-cleanup", Args: exactArgs(2),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			return sh.DeleteSnapshot(ctx, args[0], args[1])
		}),
	}
	ren := &cobra.Command{
		Use: "renameSnapshot DIR OLD NEW", Short: "Rename a snapshot",
		Example: "  smarth fs renameSnapshot /data s20240101-120000.000 new-year", Args: exactArgs(3),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			return sh.RenameSnapshot(ctx, args[0], args[1], args[2])
		}),
	}
	return []*cobra.Command{getfacl, setfacl, create, del, ren}
}
