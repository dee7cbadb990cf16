package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{versionCmd()} })

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the source revision and the Go toolchain, as `hadoop version`",
		Long: `Print what this binary is, in the shape of hadoop version's lines: the
module version (the Go build records "(devel)" for a build from a work tree),
the source revision and its commit time when the build recorded them (a
build from a git checkout does; "(modified)" if it had uncommitted changes),
the Go toolchain and platform, and the binary's path.`,
		Example: "  smarth version\n  smarth version | head -1",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi, _ := debug.ReadBuildInfo()
			exe, _ := os.Executable()
			writeVersion(cmd.OutOrStdout(), bi, exe)
			return nil
		},
	}
}

// writeVersion prints the version lines from bi (nil when the binary
// carries no build information) and the binary's path exe.
func writeVersion(w io.Writer, bi *debug.BuildInfo, exe string) {
	version, rev, at, modified := "(devel)", "", "", false
	if bi != nil {
		if v := bi.Main.Version; v != "" {
			version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	fmt.Fprintf(w, "smarth %s\n", version)
	if rev != "" {
		line := "Source code revision " + rev
		if modified {
			line += " (modified)"
		}
		if at != "" {
			line += " committed " + at
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "Compiled with %s for %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if exe != "" {
		fmt.Fprintf(w, "This command was run using %s\n", exe)
	}
}
