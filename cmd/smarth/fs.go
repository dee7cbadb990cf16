package main

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"smarth/internal/client"
	"smarth/internal/client/fsshell"
	"smarth/internal/cluster"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newFsCmd()} })

// fsFlags are the flags every `smarth fs` command shares.
type fsFlags struct {
	namenode  string
	user      string
	writeMode string
	progress  string
}

func (f *fsFlags) shell(cmd *cobra.Command) (*fsshell.Shell, func(), error) {
	mode, err := fsshell.ParseProgress(f.progress)
	if err != nil {
		return nil, nil, usageErr("%v", err)
	}
	if f.writeMode != "" && !slices.Contains(client.WriteModes(), f.writeMode) {
		return nil, nil, usageErr("--write-mode must be one of %s, not %q", strings.Join(client.WriteModes(), ", "), f.writeMode)
	}
	nn := f.namenode
	if nn == "" {
		nn = cluster.DefaultNameNode()
	}
	fsys, err := client.New(client.Config{NameNode: nn, User: f.user, WriteMode: f.writeMode})
	if err != nil {
		return nil, nil, err
	}
	sh := &fsshell.Shell{
		FS: fsys, Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr(), Stdin: cmd.InOrStdin(),
		Progress: mode, IsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
	}
	return sh, func() { fsys.Close() }, nil
}

// fsRun wraps a command body with its shell.
func (f *fsFlags) run(body func(ctx context.Context, sh *fsshell.Shell, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		sh, done, err := f.shell(cmd)
		if err != nil {
			return err
		}
		defer done()
		return body(cmd.Context(), sh, args)
	}
}

// nArgs is cobra.MinimumNArgs with an exit-2 usage error.
func nArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageErr("%s: needs at least %d argument(s); usage: %s", cmd.Name(), n, cmd.UseLine())
		}
		return nil
	}
}

func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("%s: needs exactly %d argument(s); usage: %s", cmd.Name(), n, cmd.UseLine())
		}
		return nil
	}
}

func newFsCmd() *cobra.Command {
	f := &fsFlags{}
	c := &cobra.Command{
		Use:   "fs",
		Short: "Use the distributed file system, like `hdfs dfs`",
		Long: `Use the distributed file system. The namenode is --namenode, else
$SMARTH_NAMENODE, else the local cluster started by "smarth cluster up",
else 127.0.0.1:8020. Exit status: 0 success, 1 failure, 2 bad usage.`,
		Example: `  smarth fs put big.dat /data/big.dat
  smarth fs put -r 2 --block-size 128M logs/ /logs
  cat x | smarth fs put - /x
  smarth fs ls -R /data
  smarth fs get /data/big.dat ./copy.dat
  smarth fs --write-mode multipipeline put big.dat /data/big2.dat`,
	}
	c.PersistentFlags().StringVar(&f.namenode, "namenode", "", "namenode HOST:PORT (default $SMARTH_NAMENODE, the local cluster, or 127.0.0.1:8020)")
	c.PersistentFlags().StringVar(&f.user, "user", "", "act as this user (default: the OS user)")
	c.PersistentFlags().StringVar(&f.writeMode, "write-mode", "", "write path: classic, multipipeline (SMARTH), or multipipeline-paper (Algorithm 2 as printed) (default classic)")
	c.PersistentFlags().StringVar(&f.progress, "progress", "auto", "progress bar on put/get: auto (terminal and large file), always, never")
	c.AddCommand(fsPutCmd(f), fsGetCmd(f), fsCatCmd(f), fsLsCmd(f), fsMkdirCmd(f), fsRmCmd(f), fsMvCmd(f),
		fsStatCmd(f), fsDuCmd(f), fsSetrepCmd(f), fsFsckCmd(f))
	return c
}

func fsPutCmd(f *fsFlags) *cobra.Command {
	var o fsshell.PutOptions
	var bs string
	c := &cobra.Command{
		Use:   "put [-f] [-r N] [--block-size S] LOCAL... REMOTE",
		Short: "Copy local files or directories (or - for stdin) into the file system",
		Example: `  smarth fs put data.csv /in/data.csv
  smarth fs put -f -r 2 a.txt b.txt /in/
  tar c dir | smarth fs put - /backup/dir.tar`,
		Args: nArgs(2),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			return sh.Put(ctx, args[:len(args)-1], args[len(args)-1], o)
		}),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if bs != "" {
				n, err := cluster.ParseBytes(bs)
				if err != nil || n <= 0 {
					return usageErr("put: --block-size %q: want a size like 64M or 134217728", bs)
				}
				o.BlockSize = n
			}
			if o.Replication < 0 {
				return usageErr("put: -r %d: replication must be positive", o.Replication)
			}
			o.WriteMode = f.writeMode
			return nil
		},
	}
	c.Flags().BoolVarP(&o.Overwrite, "force", "f", false, "overwrite an existing file")
	c.Flags().IntVarP(&o.Replication, "replication", "r", 0, "replication of the new files (default: the namenode's)")
	c.Flags().StringVar(&bs, "block-size", "", "block size of the new files, e.g. 64M (default: the namenode's)")
	return c
}

func fsGetCmd(f *fsFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "get REMOTE... LOCAL",
		Short:   "Copy files or directories out of the file system (LOCAL - for stdout)",
		Example: "  smarth fs get /out/part-00000 ./result.txt\n  smarth fs get /logs ./logs-copy",
		Args:    nArgs(2),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			return sh.Get(ctx, args[:len(args)-1], args[len(args)-1])
		}),
	}
}

func fsCatCmd(f *fsFlags) *cobra.Command {
	return &cobra.Command{
		Use: "cat PATH...", Short: "Print files", Example: "  smarth fs cat /out/part-00000 | head", Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Cat(ctx, args) }),
	}
}

func fsLsCmd(f *fsFlags) *cobra.Command {
	var rec, human bool
	c := &cobra.Command{
		Use: "ls [-R] [-H] [PATH...]", Short: "List directories: permissions, replication, owner, group, size, date, path",
		Example: "  smarth fs ls /\n  smarth fs ls -R -H /data",
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			if len(args) == 0 {
				args = []string{"/"}
			}
			return sh.Ls(ctx, args, rec, human)
		}),
	}
	c.Flags().BoolVarP(&rec, "recursive", "R", false, "list subdirectories too")
	c.Flags().BoolVarP(&human, "human", "H", false, "sizes like 1.5 M")
	return c
}

func fsMkdirCmd(f *fsFlags) *cobra.Command {
	var parents bool
	c := &cobra.Command{
		Use: "mkdir [-p] PATH...", Short: "Make directories", Example: "  smarth fs mkdir -p /data/in", Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Mkdir(ctx, args, parents) }),
	}
	c.Flags().BoolVarP(&parents, "parents", "p", false, "make parents as needed; no error if it exists")
	return c
}

func fsRmCmd(f *fsFlags) *cobra.Command {
	var rec, force bool
	c := &cobra.Command{
		Use: "rm [-r] [-f] PATH...", Short: "Delete files or directories", Example: "  smarth fs rm /tmp/x\n  smarth fs rm -r -f /out",
		Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error { return sh.Rm(ctx, args, rec, force) }),
	}
	c.Flags().BoolVarP(&rec, "recursive", "r", false, "delete directories and their contents")
	c.Flags().BoolVarP(&force, "force", "f", false, "no error for missing paths")
	return c
}

func fsMvCmd(f *fsFlags) *cobra.Command {
	return &cobra.Command{
		Use: "mv SRC... DST", Short: "Move or rename", Example: "  smarth fs mv /tmp/out /results/run1", Args: nArgs(2),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			return sh.Mv(ctx, args[:len(args)-1], args[len(args)-1])
		}),
	}
}

func fsStatCmd(f *fsFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "stat [FORMAT] PATH...",
		Short: "Print file status: %b size, %F type, %n name, %o block size, %r replication, %u %g owner group, %y %Y mtime, %a %A permissions",
		Example: `  smarth fs stat /data/big.dat
  smarth fs stat "%n %b bytes, %r replicas, %o-byte blocks" /data/big.dat`,
		Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			format := ""
			if len(args) > 1 && strings.Contains(args[0], "%") {
				format, args = args[0], args[1:]
			}
			return sh.Stat(ctx, format, args)
		}),
	}
}

func fsDuCmd(f *fsFlags) *cobra.Command {
	var summary, human bool
	c := &cobra.Command{
		Use: "du [-s] [-h] PATH...", Short: "Show sizes and space consumed (size x replication)",
		Example: "  smarth fs du -s -h /data", Args: nArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			return sh.Du(ctx, args, summary, human)
		}),
	}
	c.Flags().BoolVarP(&summary, "summary", "s", false, "one total per path")
	c.Flags().BoolVarP(&human, "human", "h", false, "sizes like 1.5 G")
	c.Flags().Bool("help", false, "help for du")
	return c
}

func fsSetrepCmd(f *fsFlags) *cobra.Command {
	var wait bool
	var timeout time.Duration
	c := &cobra.Command{
		Use: "setrep [-w] N PATH...", Short: "Set the replication of files (every file under a directory)",
		Example: "  smarth fs setrep -w 2 /data/big.dat", Args: nArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 1 {
				return usageErr("setrep: replication %q must be a positive number", args[0])
			}
			return f.run(func(ctx context.Context, sh *fsshell.Shell, paths []string) error {
				return sh.Setrep(ctx, n, paths, wait, timeout)
			})(cmd, args[1:])
		},
	}
	c.Flags().BoolVarP(&wait, "wait", "w", false, "wait until every block has N replicas")
	c.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "with -w, give up after this long")
	return c
}

func fsFsckCmd(f *fsFlags) *cobra.Command {
	var verbose bool
	c := &cobra.Command{
		Use: "fsck [PATH]", Short: "Check block health: blocks, replicas, under-replicated/missing/corrupt summary",
		Example: "  smarth fs fsck /\n  smarth fs fsck -v /data", Args: cobra.MaximumNArgs(1),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			p := "/"
			if len(args) == 1 {
				p = args[0]
			}
			return sh.Fsck(ctx, p, verbose)
		}),
	}
	c.Flags().BoolVarP(&verbose, "blocks", "v", false, "list every block with its replicas")
	return c
}
