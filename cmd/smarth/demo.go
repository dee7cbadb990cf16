package main

import (
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"smarth/internal/cluster/demo"
	"smarth/internal/units"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newDemoCmd()} })

func newDemoCmd() *cobra.Command {
	var (
		opts     demo.Options
		size     string
		progress string
	)
	c := &cobra.Command{
		Use:   "demo",
		Short: "Start a local cluster, upload a file, list it, read it back and verify it, run a job",
		Long: `Runs the whole system once on this machine: starts a namenode and datanodes
(and the MapReduce daemons when present) as local processes on 127.0.0.1,
generates a sample file, uploads it, lists it, reads it back and checks its
SHA-256, runs WordCount on a generated text, then takes the cluster down.
Needs nothing but this binary. Configs, logs and data go under ./.smarth/demo
(removed after a successful run, kept after a failure); with --keep the cluster
stays up afterwards.`,
		Example: `  go run ./cmd/smarth demo
  smarth demo --size 1GiB --keep --home ./.smarth`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := units.ParseSize(size)
			if err != nil || n <= 0 {
				return usageErr("--size: want a positive size such as 200MiB, got %q", size)
			}
			opts.Size = n
			switch progress {
			case "auto":
				opts.Progress = term.IsTerminal(int(os.Stdout.Fd()))
			case "always":
				opts.Progress = true
			case "never":
			default:
				return usageErr("--progress must be auto, always or never")
			}
			opts.NodeManagers = rootHasCommand(cmd, "resourcemanager") && rootHasCommand(cmd, "nodemanager")
			opts.Out = cmd.OutOrStdout()
			ctx, stop := cancelOnSignal(cmd)
			defer stop()
			return demo.Run(ctx, opts)
		},
	}
	f := c.Flags()
	f.StringVar(&size, "size", "200MiB", "size of the sample file")
	f.IntVar(&opts.DataNodes, "datanodes", 3, "number of datanodes")
	f.StringVar(&opts.Home, "home", "", "cluster home (default ./.smarth/demo, or $SMARTH_HOME/demo; removed after a successful run)")
	f.BoolVar(&opts.Keep, "keep", false, "leave the cluster running at the end")
	f.StringVar(&progress, "progress", "auto", "progress bars: auto (when stdout is a terminal), always, never")
	return c
}
