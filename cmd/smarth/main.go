// Command smarth is the single binary of the smarth data platform: every
// daemon and every client tool is a subcommand. This package only parses
// flags and calls into the libraries under internal/; it holds no logic.
package main

import (
	"errors"
	"fmt"
	"os"

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
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, a...)}
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
	return root
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
		if !ee.quiet {
			fmt.Fprintln(os.Stderr, "smarth:", err)
		}
		os.Exit(ee.code)
	}
	fmt.Fprintln(os.Stderr, "smarth:", err)
	os.Exit(1)
}
