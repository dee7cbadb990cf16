package main

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"

	"smarth/internal/client/fsshell"
)

// fsFileDataCmds are appendToFile, truncate and concat, as hdfs dfs has
// them.
func fsFileDataCmds(f *fsFlags) []*cobra.Command {
	appendTo := &cobra.Command{
		Use:   "appendToFile LOCAL... REMOTE",
		Short: "Append local files (or stdin, -) to a file, creating it if missing",
		Long: `Append local files, in order, or standard input ("-", as the only source) to
REMOTE, as hdfs dfs -appendToFile. REMOTE is created when it does not exist.
Bytes go into the file's partial last block first (reopened on the datanodes
holding it), then into new blocks written with the write mode (--write-mode).`,
		Example: "  smarth fs appendToFile today.log /logs/app.log\n  echo done | smarth fs appendToFile - /logs/app.log",
		Args:    nArgs(2),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			return sh.AppendToFile(ctx, args[:len(args)-1], args[len(args)-1])
		}),
	}

	var wait bool
	truncate := &cobra.Command{
		Use:   "truncate [-w] LENGTH PATH...",
		Short: "Cut files to LENGTH bytes",
		Long: `Cut files to LENGTH bytes, as hdfs dfs -truncate. A cut on a block boundary
is done at once; otherwise the datanodes cut the last block (block recovery)
and the file is under construction until they are done: -w waits for that.`,
		Example: "  smarth fs truncate -w 1048576 /logs/app.log\n  smarth fs truncate 0 '/tmp/scratch-*'",
		Args:    nArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || n < 0 {
				return usageErr("truncate: Illegal length %q, a non-negative integer expected", args[0])
			}
			return f.run(func(ctx context.Context, sh *fsshell.Shell, paths []string) error {
				return sh.Truncate(ctx, n, paths, wait)
			})(cmd, args[1:])
		},
	}
	truncate.Flags().BoolVarP(&wait, "wait", "w", false, "wait until the last block is cut and the file closed")

	concat := &cobra.Command{
		Use:   "concat TARGET SOURCE...",
		Short: "Move the blocks of SOURCEs to the end of TARGET and delete the SOURCEs",
		Long: `Concatenate files without copying, as hdfs dfs -concat: the blocks of the
SOURCEs, in order, become the end of TARGET and the SOURCEs are deleted, in one
step. HDFS's rules apply: all in one directory, none empty or open, the same
replication, every block full except the last block of the last SOURCE.`,
		Example: "  smarth fs concat /data/all /data/part-0 /data/part-1",
		Args:    nArgs(2),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			return sh.Concat(ctx, args[0], args[1:])
		}),
	}
	return []*cobra.Command{appendTo, truncate, concat}
}
