// Command smarth is the single binary of the smarth data platform: every
// daemon and every client tool is a subcommand. This package only parses
// flags and calls into the libraries under internal/; it holds no logic.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// exitError carries a process exit code through cobra so scripts can tell
// failures apart (1 = operation failed, 2 = bad usage).
type exitError struct {
	code int
	err  error
	// quiet: the code says it all, or the details are printed already
	// (fs test's false, a multi-path command's per-path errors).
	quiet bool
	// bare: printed as it is, without "smarth: " in front (fs's messages,
	// worded as hdfs dfs words them: "ls: `/x': No such file or directory").
	bare bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, a...)}
}

// hadoopUsageErr is a bad-usage error (exit 2) whose first line is the
// one hdfs dfs prints for it ("-nosuch: Unknown command"), so scripts and
// people reading stderr see HDFS's words; ours follows on the next line.
func hadoopUsageErr(hadoopLine string, format string, a ...any) error {
	return &exitError{code: 2, err: fmt.Errorf("%s\n"+format, append([]any{hadoopLine}, a...)...), bare: true}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "smarth",
		Short: "smarth: a Hadoop-style distributed file system and MapReduce runtime",
		Long: `smarth is a Hadoop-style data platform: a distributed file system (namenode,
datanodes, client) and a MapReduce runtime (resource manager, node managers),
with multi-pipeline writes (SMARTH), network tuning, benchmarks and
cache-affinity in-memory caching.`,
		Example: `  smarth demo                       # local cluster: upload, read back, run a job
  smarth cluster up --datanodes 3   # start a local cluster on loopback
  smarth fs put big.dat /data/big.dat`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// Each area registers its commands from its own file.
	for _, add := range commandGroups {
		root.AddCommand(add()...)
	}
	// One exit status for bad usage everywhere, as hdfs and yarn's
	// scripts see it: 2 for an unknown command or flag at any level (an
	// unknown command under a group printed its help and exited 0, at the
	// top it exited 1; an unknown flag exited 1 outside fs).
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageErr("%s: %v (see '%s --help')", cmd.Name(), err, cmd.CommandPath())
	})
	refuseUnknownSubcommands(root)
	return root
}

// refuseUnknownSubcommands gives every command group (a command with
// subcommands and nothing to run itself) a RunE that prints its help when
// called bare and refuses anything else as an unknown command.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		msg := fmt.Sprintf("unknown command %q", args[0])
		if cmd.HasParent() {
			msg = strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ") + ": " + msg
		}
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, " or ") + "?"
		}
		return usageErr("%s (see '%s --help')", msg, cmd.CommandPath())
	}
}

// commandGroups is filled by the init-free registration in each command file
// through registerCommands, called from package-level var initialisers so
// that files can be added without editing this one.
var commandGroups []func() []*cobra.Command

func registerCommands(f func() []*cobra.Command) bool {
	commandGroups = append(commandGroups, f)
	return true
}

func main() {
	root := newRootCmd()
	root.SetArgs(hadoopArgs(root, os.Args[1:]))
	err := root.Execute()
	if err == nil {
		return
	}
	var ee *exitError
	if errors.As(err, &ee) {
		switch {
		case ee.quiet:
		case ee.bare:
			fmt.Fprintln(os.Stderr, err)
		default:
			fmt.Fprintln(os.Stderr, "smarth:", err)
		}
		os.Exit(ee.code)
	}
	fmt.Fprintln(os.Stderr, "smarth:", err)
	os.Exit(1)
}
