package main

import (
	"context"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"smarth/internal/client/fsshell"
	"smarth/internal/units"
)

// putFlags are put's flags; copyFromLocal and moveFromLocal share them.
type putFlags struct {
	o         fsshell.PutOptions
	blockSize string
	defines   []string // -D key=value, Hadoop's generic option
	preserve  bool
	oldR      bool // -r: replication before, nothing in hdfs dfs; refused
}

// putDefineKeys are the -D keys put reads.
var putDefineKeys = []string{"dfs.replication", "dfs.blocksize", "dfs.block.size"}

// check turns the flags into PutOptions: -D dfs.replication and
// dfs.blocksize as Hadoop spells them, --replication and --block-size as
// smarth does.
func (p *putFlags) check(name string) error {
	if p.oldR {
		return usageErr("%s: -r is not a flag of hdfs dfs -put; for replication use --replication N or -D dfs.replication=N", name)
	}
	for _, d := range p.defines {
		k, v, ok := strings.Cut(d, "=")
		switch {
		case !ok:
			return usageErr("%s: -D %q: want KEY=VALUE", name, d)
		case k == "dfs.replication":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return usageErr("%s: -D dfs.replication=%s: want a positive number", name, v)
			}
			p.o.Replication = n
		case k == "dfs.blocksize" || k == "dfs.block.size":
			p.blockSize = v
		default:
			return usageErr("%s: -D %s: unknown key (known: dfs.replication, dfs.blocksize)", name, k)
		}
	}
	if p.blockSize != "" {
		n, err := units.ParseSize(p.blockSize)
		if err != nil || n <= 0 {
			return usageErr("%s: --block-size %q: want a size like 64M or 134217728", name, p.blockSize)
		}
		p.o.BlockSize = n
	}
	if p.o.Replication < 0 {
		return usageErr("%s: --replication %d: replication must be positive", name, p.o.Replication)
	}
	return nil
}

// putHelp is the short help and example of put and its aliases.
func putHelp(name string) (short, example string) {
	switch name {
	case "copyFromLocal":
		return "Same as put (local sources only)", "  smarth fs copyFromLocal -f data.csv /in/"
	case "moveFromLocal":
		return "Like put, then delete the local sources once all are copied", "  smarth fs moveFromLocal day-*.log /logs/"
	}
	return "Copy local files or directories (or - for stdin) into the file system",
		"  smarth fs put data.csv /in/data.csv\n  smarth fs put -f --replication 2 a.txt b.txt /in/\n  smarth fs put -D dfs.replication=1 'logs/*.gz' logs/\n  tar c dir | smarth fs put - /backup/dir.tar"
}

func fsPutCmd(f *fsFlags, name string) *cobra.Command {
	p := &putFlags{}
	short, example := putHelp(name)
	c := &cobra.Command{
		Use:     name + " [-f] [-p] [--replication N] [--block-size S] [-D key=value] LOCAL... REMOTE",
		Short:   short,
		Example: example,
		Args:    nArgs(2),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			p.o.WriteMode, p.o.Cmd = f.writeMode, name
			return p.check(name)
		},
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			return runPut(ctx, sh, name, p, args)
		}),
	}
	c.Flags().BoolVarP(&p.o.Overwrite, "force", "f", false, "overwrite an existing file")
	c.Flags().BoolVarP(&p.preserve, "preserve", "p", false, "keep the local modification/access times and permissions")
	c.Flags().IntVar(&p.o.Replication, "replication", 0, "replication of the new files (default: the namenode's)")
	c.Flags().StringVar(&p.blockSize, "block-size", "", "block size of the new files, e.g. 64M (default: the namenode's)")
	c.Flags().StringArrayVarP(&p.defines, "define", "D", nil, "dfs.replication=N or dfs.blocksize=SIZE, as Hadoop's -D")
	c.Flags().BoolVarP(&p.oldR, "r", "r", false, "refused: hdfs dfs has no -r on put")
	_ = c.Flags().MarkHidden("r")
	return c
}

func runPut(ctx context.Context, sh *fsshell.Shell, name string, p *putFlags, args []string) error {
	locals, err := expandLocal(name, args[:len(args)-1])
	if err != nil {
		return err
	}
	if name != "put" && len(locals) > 0 && locals[0] == "-" && len(locals) == 1 {
		return usageErr("%s: reads local files; use put to read stdin", name)
	}
	remote, err := sh.Target(ctx, name, args[len(args)-1])
	if err != nil {
		return err
	}
	targets := make([]string, len(locals))
	attrs := make([]fsshell.LocalAttrs, len(locals))
	for i, l := range locals {
		targets[i] = sh.PutTarget(ctx, l, remote)
		if p.preserve && l != "-" {
			// Before the put reads them: reading moves access times.
			if attrs[i], err = fsshell.SnapLocal(l); err != nil {
				return err
			}
		}
	}
	if err := sh.Put(ctx, locals, remote, p.o); err != nil {
		return err
	}
	for i, l := range locals {
		if p.preserve && l != "-" {
			if err := sh.KeepLocalModes(ctx, attrs[i], targets[i]); err != nil {
				return err
			}
		}
	}
	if name == "moveFromLocal" {
		// Only now that every source is in the file system.
		for _, l := range locals {
			if err := os.RemoveAll(l); err != nil {
				return err
			}
		}
	}
	return nil
}

func fsGetCmd(f *fsFlags, name string) *cobra.Command {
	var o fsshell.GetOptions
	short := "Copy files or directories out of the file system (LOCAL - for stdout)"
	if name != "get" {
		short = "Same as get"
	}
	c := &cobra.Command{
		Use:     name + " [-f] [-p] REMOTE... LOCAL",
		Short:   short,
		Example: "  smarth fs " + name + " /out/part-00000 ./result.txt\n  smarth fs " + name + " -f '/logs/2024-*' ./logs/",
		Args:    nArgs(2),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			return sh.Get(ctx, args[:len(args)-1], args[len(args)-1], o)
		}),
	}
	c.Flags().BoolVarP(&o.Overwrite, "force", "f", false, "overwrite an existing local file")
	c.Flags().BoolVarP(&o.Preserve, "preserve", "p", false, "keep modification/access times and permissions")
	return c
}

func fsGetmergeCmd(f *fsFlags) *cobra.Command {
	var o fsshell.MergeOptions
	c := &cobra.Command{
		Use:   "getmerge [-nl] [-skip-empty-file] SRC... LOCALDST",
		Short: "Concatenate files (a directory: its files in name order) into one local file",
		Long: `Concatenate remote files into one local file, as hdfs dfs -getmerge. A
source directory contributes its files (not its subdirectories) in name
order. -nl adds a newline after each file, -skip-empty-file none after an
empty one. A missing source is an error and nothing is written; an existing
LOCALDST is replaced, a directory is an error.`,
		Example:            "  smarth fs getmerge /out ./result.txt\n  smarth fs getmerge -nl '/logs/day-*' ./all.log",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, help, err := hdfsWords(cmd, args, "nl", "skip-empty-file")
			if help || err != nil {
				return err
			}
			if len(args) < 2 {
				return usageErr("getmerge: needs at least 2 argument(s); usage: %s", cmd.UseLine())
			}
			return f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
				return sh.GetMerge(ctx, args[:len(args)-1], args[len(args)-1], o)
			})(cmd, args)
		},
	}
	c.Flags().BoolVar(&o.NewLine, "nl", false, "add a newline after each file")
	c.Flags().BoolVar(&o.SkipEmptyFiles, "skip-empty-file", false, "with -nl, no newline after an empty file")
	c.Flags().Bool("help", false, "help for getmerge")
	return c
}

func fsCpCmd(f *fsFlags) *cobra.Command {
	var o fsshell.CpOptions
	c := &cobra.Command{
		Use:   "cp [-f] [-p] SRC... DST",
		Short: "Copy files or directories inside the file system",
		Long: `Copy files or directory trees inside the file system. Each file is
written to DST._COPYING_ and renamed when complete. With several sources DST
must be a directory. -p keeps modification and access times, permissions,
owner and group (a new owner needs a superuser).`,
		Example: "  smarth fs cp /data/in.csv /backup/\n  smarth fs cp -f -p '/data/part-*' /backup/run1",
		Args:    nArgs(2),
		RunE: f.run(func(ctx context.Context, sh *fsshell.Shell, args []string) error {
			return sh.Cp(ctx, args[:len(args)-1], args[len(args)-1], o)
		}),
	}
	c.Flags().BoolVarP(&o.Overwrite, "force", "f", false, "overwrite an existing file")
	c.Flags().BoolVarP(&o.Preserve, "preserve", "p", false, "keep times, permissions, owner and group")
	return c
}
