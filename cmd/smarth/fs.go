package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

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

// shell connects to the namenode an hdfs:// or smarth:// URI among args
// names, else --namenode, $SMARTH_NAMENODE, the local cluster of
// $SMARTH_HOME, or 127.0.0.1:8020 (the order every command uses).
func (f *fsFlags) shell(cmd *cobra.Command, args []string) (*fsshell.Shell, func(), error) {
	mode, err := fsshell.ParseProgress(f.progress)
	if err != nil {
		return nil, nil, usageErr("%v", err)
	}
	if f.writeMode != "" && !slices.Contains(client.WriteModes(), f.writeMode) {
		return nil, nil, usageErr("--write-mode must be one of %s, not %q", strings.Join(client.WriteModes(), ", "), f.writeMode)
	}
	nn, err := fsshell.NameNodeOf(args)
	if err != nil {
		return nil, nil, usageErr("%s: %v", cmd.Name(), err)
	}
	if nn == "" {
		nn = f.namenode
	}
	if nn == "" {
		nn = cluster.DefaultNameNode()
	}
	fsys, err := newClient(client.Config{NameNode: nn, User: f.user, WriteMode: f.writeMode})
	if err != nil {
		return nil, nil, err
	}
	sh := &fsshell.Shell{
		FS: fsys, URI: "hdfs://" + nn, Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr(), Stdin: cmd.InOrStdin(),
		Progress: mode, IsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
	}
	return sh, func() { fsys.Close() }, nil
}

// run wraps a command body with its shell. Per-path errors of a
// multi-path command are printed already, so only the exit code is left.
func (f *fsFlags) run(body func(ctx context.Context, sh *fsshell.Shell, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		sh, done, err := f.shell(cmd, args)
		if err != nil {
			return err
		}
		defer done()
		err = body(cmd.Context(), sh, args)
		var ee *exitError
		switch {
		case err == nil || errors.As(err, &ee):
			return err
		case errors.Is(err, fsshell.ErrSome):
			return &exitError{code: 1, err: err, quiet: true}
		}
		// hdfs dfs's form, "CMD: ...", with no "smarth: " before it.
		if !strings.HasPrefix(err.Error(), cmd.Name()+": ") {
			err = fmt.Errorf("%s: %w", cmd.Name(), err)
		}
		return &exitError{code: 1, err: err, bare: true}
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
		Long: `Use the distributed file system, as "hdfs dfs" does.

Paths: absolute (/data/x), relative to the home directory /user/$USER
(--user changes it), or URIs hdfs://HOST:PORT/path and smarth://HOST:PORT/path
whose HOST:PORT is the namenode to use (port 8020 when left out). Globs
* ? [abc] [!a-c] {a,b} are expanded against the file system (quote them
from your shell); a glob that matches nothing is "No such file or directory".

The namenode is the one a URI names, else --namenode, else $SMARTH_NAMENODE,
else the local cluster started by "smarth cluster up" (under $SMARTH_HOME),
else 127.0.0.1:8020. --namenode and $SMARTH_NAMENODE may name the namenodes
of an HA group as a comma list (a:8020,b:8020,c:8020): calls go to the
active one and fail over when it changes. With SMARTH_OBSERVER_READS=true,
namespace reads (ls, stat, cat's block locations, ...) go to a standby first,
which serves them once it has every edit this command has seen acknowledged
(read-your-writes), else the active does; SMARTH_OBSERVER_AUTO_MSYNC_PERIOD=0
makes each such read first ask the active how far it is (msync), so it also
sees other clients' writes.

Messages, output and exit codes are hdfs dfs's: "ls: ` + "`/x'" + `: No such file or
directory" on stderr, relative paths printed relative, rm's "Moved: ... to
trash at: ..." on stderr with full URIs. A test runs 116 command lines through
Hadoop's own FsShell and through smarth fs and compares them
(internal/webhdfs/fsshell_compare_test.go).

Exit status, one rule for every smarth command: 0 success, 1 failure (a path
that failed, test's "false", an unhealthy fsck), 2 bad usage (unknown command
or flag, bad arguments). Where Hadoop differs, by design:
  - bad usage: hdfs dfs exits 255 (-1) and lists all its commands; smarth exits
    2 and points to --help. The first line of the message is HDFS's
    ("-nosuch: Unknown command", "-chmod: chmod : mode 'x' does not match
    the expected pattern.").
  - -help CMD and -usage CMD describe smarth's options of CMD, not Hadoop's.
  - getmerge and get write no .NAME.crc side file (Hadoop's LocalFileSystem
    checksums, which only it reads).`,
		Example: `  smarth fs put big.dat /data/big.dat
  smarth fs put --replication 2 --block-size 128M logs/ /logs
  cat x | smarth fs put - /x
  smarth fs ls -R -h /data
  smarth fs ls 'hdfs://nn1:8020/data/part-*'
  smarth fs chmod -R go-w /data
  smarth fs get /data/big.dat ./copy.dat
  smarth fs --write-mode multipipeline put big.dat /data/big2.dat
  smarth fs -ls /data          # hdfs dfs's spelling works too; -help CMD, -usage CMD
  smarth fs -fs hdfs://nn:8020 -D dfs.replication=1 -put a.txt /a.txt   # and its generic options`,
		Args: cobra.ArbitraryArgs,
		// Without RunE cobra prints help and exits 0 for "fs nosuch";
		// an unknown command is an error, as in hdfs dfs.
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			msg := "Usage: smarth fs [generic options] COMMAND [ARGS...]"
			if s := cmd.SuggestionsFor(strings.TrimPrefix(args[0], "-")); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return hadoopUsageErr(args[0]+": Unknown command", "%s (see 'smarth fs --help')", msg)
		},
	}
	c.SuggestionsMinimumDistance = 2 // cobra's own default, which SuggestionsFor does not apply
	c.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageErr("%s: %v; usage: %s", cmd.Name(), err, cmd.UseLine())
	})
	c.PersistentFlags().StringVar(&f.namenode, "namenode", "", "namenode HOST:PORT, or an HA group's as a comma list (default $SMARTH_NAMENODE, the local cluster, or 127.0.0.1:8020)")
	c.PersistentFlags().StringVar(&f.user, "user", "", "act as this user; relative paths start at /user/USER (default: the OS user)")
	c.PersistentFlags().StringVar(&f.writeMode, "write-mode", "", "write path: classic, multipipeline (SMARTH), multipipeline-paper (Algorithm 2 as printed), or multipipeline-concurrent (several blocks in flight, each on its own first datanode) (default classic)")
	c.PersistentFlags().StringVar(&f.progress, "progress", "auto", "progress bar on put/get: auto (terminal and large file), always, never")
	c.AddCommand(fsPutCmd(f, "put"), fsPutCmd(f, "copyFromLocal"), fsPutCmd(f, "moveFromLocal"),
		fsGetCmd(f, "get"), fsGetCmd(f, "copyToLocal"), fsGetmergeCmd(f), fsCatCmd(f), fsTextCmd(f), fsHeadCmd(f), fsTailCmd(f),
		fsLsCmd(f), fsMkdirCmd(f), fsRmCmd(f), fsRmdirCmd(f), fsMvCmd(f), fsCpCmd(f), fsTouchzCmd(f), fsTouchCmd(f), fsExpungeCmd(f), fsChecksumCmd(f), fsGetfattrCmd(f), fsSetfattrCmd(f), fsTestCmd(f),
		fsStatCmd(f), fsDuCmd(f), fsCountCmd(f), fsDfCmd(f), fsFindCmd(f), fsSetrepCmd(f), fsFsckCmd(f), fsFetchdtCmd(f),
		fsChmodCmd(f), fsChownCmd(f), fsChgrpCmd(f))
	c.AddCommand(fsFeatureCmds(f)...)
	c.AddCommand(fsFileDataCmds(f)...)
	return c
}

// hadoopArgs rewrites a command line in hdfs dfs's spelling of an fs
// command, "fs -ls /", "fs -help ls", "fs -usage ls", into ours ("fs ls /",
// "fs ls --help"), keeping the flags before it (fs --namenode X -ls / is
// fs ls / with --namenode X) and turning Hadoop's generic options before
// it into ours (fs -fs hdfs://nn:8020 -ls /, fs -D dfs.replication=1 -put
// ... is fs --namenode nn:8020 ls /, fs put -D dfs.replication=1 ...). It must run before cobra routes the line:
// cobra would take the first later word naming a command as the command
// ("fs -mkdir test" ran fs test), and pflag reads "-ls" as -l -s.
func hadoopArgs(root *cobra.Command, args []string) []string {
	if len(args) < 2 || args[0] != "fs" {
		return args
	}
	fs := findFsCmd(root, "fs")
	if fs == nil {
		return args
	}
	if rewritten, ok := hadoopFsArgs(fs, args[1:]); ok {
		return append([]string{"fs"}, rewritten...)
	}
	return args
}

func hadoopFsArgs(cmd *cobra.Command, args []string) (rewritten []string, ok bool) {
	var lead, defines []string // flags before the command; Hadoop's -D k=v
	generic := false           // a generic option was rewritten
	for i := 0; i < len(args); i++ {
		a := args[i]
		if generic && !strings.HasPrefix(a, "-") && findFsCmd(cmd, a) != nil {
			a = "-" + a // fs -D k=v put ...: our spelling after generic options
		}
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			return nil, false
		}
		if strings.HasPrefix(a, "--") {
			lead = append(lead, a)
			name, _, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if f := cmd.PersistentFlags().Lookup(name); f != nil && !hasValue && f.NoOptDefVal == "" && f.Value.Type() != "bool" && i+1 < len(args) {
				i++ // its value
				lead = append(lead, args[i])
			}
			continue
		}
		word := a[1:]
		// Hadoop's generic options (GenericOptionsParser), before the
		// command: -D k=v (or -Dk=v) and -fs URI. fs.defaultFS and -fs name
		// the namenode; other keys go to the command when it takes -D
		// (put's dfs.replication) and are otherwise ignored, as a
		// Configuration key the command does not read.
		if word == "D" || word == "fs" || strings.HasPrefix(word, "D") && strings.Contains(word, "=") {
			v := strings.TrimPrefix(word, "D")
			if word == "D" || word == "fs" {
				if i+1 >= len(args) {
					return nil, false // cobra reports the missing value
				}
				i++
				v = args[i]
			}
			if k, uri, _ := strings.Cut(v, "="); word == "fs" || k == "fs.defaultFS" {
				if word == "fs" {
					uri = v
				}
				addr, _, err := fsshell.SplitURI(uri)
				if err != nil || addr == "" {
					return nil, false // not a namenode: left for cobra to refuse
				}
				lead = append(lead, "--namenode", addr)
			} else {
				defines = append(defines, v)
			}
			generic = true
			continue
		}
		switch {
		case word == "help" || word == "usage":
			// hdfs dfs -help [cmd ...]: each command's help, or all.
			if i+1 < len(args) && findFsCmd(cmd, args[i+1]) != nil {
				return append(lead, args[i+1], "--help"), true
			}
			return append(lead, "--help"), true
		case findFsCmd(cmd, word) != nil:
			out := append(lead, word)
			if sub := findFsCmd(cmd, word); sub.Flags().Lookup("define") != nil {
				for _, d := range defines {
					// Only the keys the command reads: Hadoop takes any
					// generic -D and ignores what no one reads.
					if k, _, _ := strings.Cut(d, "="); slices.Contains(putDefineKeys, k) {
						out = append(out, "-D", d)
					}
				}
			}
			return append(out, args[i+1:]...), true
		}
		if len(word) > 1 && cmd.Flags().Lookup(word) == nil {
			// "-nosuch": an unknown command, said as one (pflag would
			// complain of an unknown shorthand flag 'n').
			return append(append(lead, "--"), args[i:]...), true
		}
		if generic {
			return append(lead, args[i:]...), true
		}
		return nil, false // a flag of fs's own (-h)
	}
	if generic {
		return lead, true
	}
	return nil, false
}

// findFsCmd is parent's subcommand named (or aliased) name, or nil.
func findFsCmd(parent *cobra.Command, name string) *cobra.Command {
	for _, c := range parent.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return c
		}
	}
	return nil
}

// humanFlag adds -h for human-readable sizes, as hdfs dfs's ls, du, df
// and count have it; help stays on --help.
func humanFlag(c *cobra.Command, v *bool) {
	c.Flags().BoolVarP(v, "human", "h", false, "sizes like 1.5 K, 64 M")
	c.Flags().Bool("help", false, "help for "+c.Name())
}

// expandLocal expands glob patterns among local paths ("-" is stdin), for
// patterns quoted past the user's shell as hdfs dfs allows.
func expandLocal(cmd string, args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if a == "-" || !strings.ContainsAny(a, "*?[") {
			out = append(out, a)
			continue
		}
		m, err := filepath.Glob(a)
		if err != nil || len(m) == 0 {
			return nil, fmt.Errorf("%s: `%s': No such file or directory", cmd, a)
		}
		out = append(out, m...)
	}
	return out, nil
}
