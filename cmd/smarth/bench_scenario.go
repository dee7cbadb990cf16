package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"smarth/internal/bench/scenario"
	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/placement"
	"smarth/internal/testbed"
	"smarth/internal/testbed/topo"
	"smarth/internal/units"
)

// `smarth bench scenario` and its client half join `smarth bench` through
// bench.go's hook.
var (
	_ = addBenchSubcommand(newBenchScenarioCmd)
	_ = addBenchSubcommand(newBenchScenarioPutCmd)
)

type benchScenarioFlags struct {
	size, blockSize, warmup      string
	modes, placements            string
	jsonPath, plotPath, outDir   string
	logDir                       string
	stateDir, workDir, binary    string
	runs, phaseRuns, replication int
	localThreshold               float64
	maxPipelines                 int
	datanodes                    int
	dropCaches                   bool
	// random-topology mode
	topologies                                 int
	seed                                       int64
	racks, rackSize, dnCount, nicMbit, crossMb string
	dryRun                                     bool
	fromJSON                                   string
	concPlacement                              string
}

func newBenchScenarioCmd() *cobra.Command {
	var f benchScenarioFlags
	c := &cobra.Command{
		Use:   "scenario TOPOLOGY.yaml|local|random",
		Short: "Run a SMARTH write experiment end to end: testbed up, classic vs multi-pipeline uploads per placement, report, testbed down",
		Long: `Runs the classic vs multi-pipeline upload comparison of SMARTH (seed 000,
section V) on a testbed topology, or with "local" on a loopback cluster of
--datanodes datanodes. The namenode's placement is one setting per cluster, so
each placement (--placements, default rackaware = HDFS, speedaware = SMARTH;
speedaware-paper is Algorithm 1 exactly as printed) is a phase of its own: the cluster is brought up with it (as testbed
sc-NAME, never touching a testbed you brought up by hand), the client host
uploads --size bytes once per write mode (modes interleaved A B, B A, ...
across runs and phases, each mode through its own client, after an untimed
--warmup upload if asked, and as root the page cache emptied before each upload, see
--drop-caches), the datanodes' block logs are read, and the cluster is taken
down and its data deleted. Phases alternate (A B B A ...) until every
placement and mode has --runs uploads.

The table shows each cell's times, MiB/s, gain over HDFS (classic writes,
rackaware placement), share of the client's link rate (the III.D bound), and
from the block logs: the first datanodes' receive rate, the share of blocks
begun on a datanode slower than the client's link, the pipelines open, the
share of the run the client was sending and the drain time at the end.

With "random" it draws --topologies two- or three-rack topologies from --seed
(--racks, datanodes per rack --rack-size, --datanodes in all, the client in one
of the racks, every host's NIC from --nic and its cross-rack rate from
--cross-rack, in Mbit/s), and on each compares HDFS (classic, rackaware) with
multi-pipeline under rackaware, SMARTH (multi-pipeline, speedaware) and
multipipeline-concurrent (under --concurrent-placement), one upload each, no
warm-up. It prints each topology's speedups beside the ideal
speedup, the min-cut bound of the topology (see docs/benchmarks.md), and their
distribution; --out writes random-SEED.json and random-SEED.svg. --dry-run
only prints the topologies and their ideals.

A testbed needs root. Everything is taken down also when a step fails or the
command is interrupted.`,
		Example: `  sudo smarth bench scenario testbed/two-rack-50.yaml --size 256MiB --block-size 16MiB --runs 3
  sudo smarth bench scenario testbed/hetero.yaml --out docs/bench
  smarth bench scenario local --datanodes 9 --runs 3 --placements rackaware
  sudo smarth bench scenario random --topologies 10 --seed 1 --size 128MiB --block-size 16MiB --out docs/bench`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("want one topology file (e.g. testbed/two-rack-50.yaml), \"local\" or \"random\", got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runBenchScenario(cmd, args[0], &f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.size, "size", "256MiB", "bytes per upload")
	fl.StringVar(&f.blockSize, "block-size", "16MiB", "block size (and the datanodes' per-client buffer); 0 keeps the topology's")
	fl.IntVar(&f.replication, "replication", 0, "replication (0: the namenode's)")
	fl.StringVar(&f.warmup, "warmup", "0", "untimed upload per client and phase first (0: none, as a user's put; speed records of the client host persist between uploads anyway)")
	fl.IntVar(&f.runs, "runs", 3, "timed uploads per placement and mode")
	fl.IntVar(&f.phaseRuns, "phase-runs", 1, "uploads per mode in one phase (one cluster start); --runs must be a multiple")
	fl.StringVar(&f.modes, "modes", strings.Join(scenario.DefaultModes, ","), "write modes, comma-separated")
	fl.StringVar(&f.placements, "placements", strings.Join(scenario.DefaultPlacements, ","), "namenode placements, comma-separated; one phase each")
	fl.StringVar(&f.jsonPath, "json", "", "write the report as JSON to this file")
	fl.StringVar(&f.plotPath, "plot", "", "write a plot to this .svg or .png file")
	fl.StringVar(&f.outDir, "out", "", "write NAME.json and NAME.svg to this directory (NAME: the topology's name, or loopback)")
	fl.Float64Var(&f.localThreshold, "local-threshold", 0, "clients' Algorithm 2 threshold (0: the default 0.8; 1: never swap the first target)")
	fl.IntVar(&f.maxPipelines, "max-pipelines", 0, "cap on a multi-pipeline file's open pipelines (0: the client's default)")
	fl.BoolVar(&f.dropCaches, "drop-caches", os.Geteuid() == 0, "sync and empty the page cache before each upload, so each starts alike (needs root; default: when root)")
	fl.StringVar(&f.logDir, "logs", "", "copy each phase's daemon logs to this directory (round<N>-<placement>/)")
	fl.IntVar(&f.datanodes, "datanodes", 9, "datanodes of the local cluster")
	fl.StringVar(&f.stateDir, "state-dir", testbed.DefaultStateRoot, "where testbed state files live")
	fl.StringVar(&f.workDir, "work-dir", testbed.DefaultWorkRoot, "where testbed configs, data and logs live")
	fl.StringVar(&f.binary, "binary", "", "the smarth binary for the daemons and the client (default: this one)")
	fl.IntVar(&f.topologies, "topologies", 10, "random: how many topologies")
	fl.Int64Var(&f.seed, "seed", 1, "random: the seed the topologies are drawn from")
	fl.StringVar(&f.racks, "racks", "2-3", "random: racks per topology, MIN-MAX")
	fl.StringVar(&f.rackSize, "rack-size", "1-5", "random: datanodes per rack, MIN-MAX")
	fl.StringVar(&f.dnCount, "datanodes-range", "6-10", "random: datanodes per topology, MIN-MAX")
	fl.StringVar(&f.nicMbit, "nic", "200-400", "random: every host's NIC, Mbit/s, MIN-MAX")
	fl.StringVar(&f.crossMb, "cross-rack", "40-150", "random: every host's rate between racks, Mbit/s, MIN-MAX")
	fl.BoolVar(&f.dryRun, "dry-run", false, "random: print the topologies and their ideals, run nothing")
	fl.StringVar(&f.concPlacement, "concurrent-placement", "mincut", "random: the placement of the multipipeline-concurrent upload (the one that plans several first hops at once; another than speedaware is a phase of its own, speedaware shares SMARTH's)")
	fl.StringVar(&f.fromJSON, "from-json", "", "random: print (and with --out, --json, --plot save) a saved report again, ideals recomputed; run nothing")
	return c
}

func runBenchScenario(cmd *cobra.Command, target string, f *benchScenarioFlags) error {
	o := scenario.Options{Runs: f.runs, PhaseRuns: f.phaseRuns, Replication: f.replication, LogDir: f.logDir,
		LocalThreshold: f.localThreshold, MaxPipelines: f.maxPipelines, DropCaches: f.dropCaches, Out: cmd.ErrOrStderr()}
	if f.localThreshold < 0 || f.localThreshold > 1 || f.maxPipelines < 0 {
		return usageErr("--local-threshold must be within 0..1 and --max-pipelines not negative")
	}
	var err error
	if o.Size, err = units.ParseSize(f.size); err != nil || o.Size <= 0 {
		return usageErr("--size: want a positive size such as 256MiB, got %q", f.size)
	}
	if o.BlockSize, err = units.ParseSize(f.blockSize); err != nil {
		return usageErr("--block-size: %v", err)
	}
	if o.Warmup, err = units.ParseSize(f.warmup); err != nil {
		return usageErr("--warmup: %v", err)
	}
	if o.Modes, err = listFlag("--modes", f.modes, client.WriteModes()); err != nil {
		return err
	}
	if o.Placements, err = listFlag("--placements", f.placements, placement.Names()); err != nil {
		return err
	}
	cp, err := listFlag("--concurrent-placement", f.concPlacement, placement.Names())
	if err != nil {
		return err
	}
	if len(cp) != 1 {
		return usageErr("--concurrent-placement: give one of %s, got %q", strings.Join(placement.Names(), ", "), f.concPlacement)
	}
	f.concPlacement = cp[0] // trimmed: the namenode's placement name as is
	if f.runs < 1 || f.phaseRuns < 1 || f.runs%f.phaseRuns != 0 {
		return usageErr("--runs (%d) must be a positive multiple of --phase-runs (%d)", f.runs, f.phaseRuns)
	}
	if f.plotPath != "" {
		if ext := strings.ToLower(filepath.Ext(f.plotPath)); ext != ".svg" && ext != ".png" {
			return usageErr("--plot: want a .svg or .png file name, got %q", f.plotPath)
		}
	}
	tmp, err := os.MkdirTemp("", "smarth-scenario-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	o.TempDir = tmp
	var bed scenario.Bed
	if target == "local" {
		o.Scenario, o.Description = "loopback", fmt.Sprintf("loopback cluster, %d datanodes, no shaping", f.datanodes)
		bed = &scenario.LocalBed{DataNodes: f.datanodes, Binary: f.binary, TempDir: tmp, Out: cmd.ErrOrStderr()}
	} else if target != "random" {
		data, err := os.ReadFile(target)
		if err != nil {
			return err
		}
		t, err := topo.Parse(data)
		if err != nil {
			return fmt.Errorf("topology %s: %w", target, err)
		}
		o.Scenario, o.Description = t.Name, t.Description
		m, err := testbed.New(testbed.Options{StateRoot: f.stateDir, WorkRoot: f.workDir, Binary: f.binary, Out: cmd.ErrOrStderr()})
		if err != nil {
			return err
		}
		if err := m.Preflight(); err != nil {
			return err
		}
		bed = &scenario.TestbedBed{Manager: m, Topology: data, TempDir: tmp}
	}
	ctx, stop := cancelOnSignal(cmd)
	defer stop()
	if target == "random" {
		return runBenchRandom(ctx, cmd, f, o)
	}
	rep, runErr := scenario.Run(ctx, bed, o)
	if rep == nil || len(rep.Runs) == 0 {
		return runErr
	}
	fmt.Fprintln(cmd.OutOrStdout())
	rep.PrintTable(cmd.OutOrStdout())
	jsonPath, plotPath := f.jsonPath, f.plotPath
	if f.outDir != "" {
		if err := os.MkdirAll(f.outDir, 0o755); err != nil {
			return err
		}
		if jsonPath == "" {
			jsonPath = filepath.Join(f.outDir, o.Scenario+".json")
		}
		if plotPath == "" {
			plotPath = filepath.Join(f.outDir, o.Scenario+".svg")
		}
	}
	if jsonPath != "" {
		if err := rep.WriteJSON(jsonPath); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "report written to %s\n", jsonPath)
	}
	if plotPath != "" {
		if err := rep.Plot(plotPath); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "plot written to %s\n", plotPath)
	}
	return runErr
}

// listFlag splits a comma-separated flag and checks every item is known.
func listFlag(flag, v string, known []string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !slices.Contains(known, s) {
			return nil, usageErr("%s: unknown value %q (want some of %s)", flag, s, strings.Join(known, ", "))
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, usageErr("%s: give at least one of %s", flag, strings.Join(known, ", "))
	}
	return out, nil
}

// newBenchScenarioPutCmd is the client half of a scenario phase, run by
// `smarth bench scenario` on the client host; hidden from help.
func newBenchScenarioPutCmd() *cobra.Command {
	var (
		size, blockSize, warmup, modes, jsonPath, namenode, user string
		p                                                        scenario.PutPlan
	)
	c := &cobra.Command{
		Use:    "scenario-put",
		Short:  "The client half of `smarth bench scenario`: timed uploads per mode, each mode through its own client",
		Hidden: true,
		Example: `  SMARTH_NAMENODE=10.77.1.11:8020 smarth bench scenario-put --size 256MiB --runs 1 \
      --modes classic,multipipeline --warmup 64MiB --json /tmp/phase.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if p.Size, err = units.ParseSize(size); err != nil || p.Size <= 0 {
				return usageErr("--size: want a positive size, got %q", size)
			}
			if p.BlockSize, err = units.ParseSize(blockSize); err != nil {
				return usageErr("--block-size: %v", err)
			}
			if p.Warmup, err = units.ParseSize(warmup); err != nil {
				return usageErr("--warmup: %v", err)
			}
			if p.Modes, err = listFlag("--modes", modes, client.WriteModes()); err != nil {
				return err
			}
			if p.Runs < 1 {
				return usageErr("--runs must be at least 1")
			}
			if jsonPath == "" {
				return usageErr("--json is required: the scenario reads the results from it")
			}
			if namenode == "" {
				namenode = cluster.DefaultNameNode()
			}
			cfg, err := secured(client.Config{NameNode: namenode, User: user, LocalThreshold: p.LocalThreshold, MaxPipelines: p.MaxPipelines})
			if err != nil {
				return err
			}
			if p.ClientLog != "" {
				lf, err := os.OpenFile(p.ClientLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
				if err != nil {
					return err
				}
				defer lf.Close()
				cfg.Logger = slog.New(slog.NewJSONHandler(lf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			}
			ctx, stop := cancelOnSignal(cmd)
			defer stop()
			p.Out = cmd.OutOrStdout()
			res, err := scenario.PutRuns(ctx, func() (*client.FileSystem, error) {
				c := cfg
				return client.New(c)
			}, p)
			if err != nil {
				return err
			}
			b, err := json.MarshalIndent(res, "", "  ")
			if err != nil {
				return err
			}
			return os.WriteFile(jsonPath, b, 0o644)
		},
	}
	fl := c.Flags()
	fl.StringVar(&size, "size", "256MiB", "bytes per upload")
	fl.StringVar(&blockSize, "block-size", "0", "block size (0: the namenode's)")
	fl.IntVar(&p.Replication, "replication", 0, "replication (0: the namenode's)")
	fl.StringVar(&warmup, "warmup", "0", "untimed upload per mode first (0: none)")
	fl.IntVar(&p.Runs, "runs", 1, "timed uploads per mode, modes interleaved")
	fl.StringVar(&modes, "modes", "classic,multipipeline", "write modes, comma-separated")
	fl.StringVar(&p.Dir, "dir", "/benchmarks/scenario", "directory of the uploads")
	fl.StringVar(&jsonPath, "json", "", "write the results to this file (required)")
	fl.StringVar(&namenode, "namenode", "", "namenode host:port (default $SMARTH_NAMENODE)")
	fl.StringVar(&user, "user", "", "user name (default: the OS user)")
	fl.Float64Var(&p.LocalThreshold, "local-threshold", 0, "Algorithm 2 threshold (0: the client's default)")
	fl.IntVar(&p.MaxPipelines, "max-pipelines", 0, "cap on open pipelines (0: the client's default)")
	fl.StringVar(&p.ClientLog, "client-log", "", "append the clients' debug log (JSON) to this file")
	fl.IntVar(&p.FirstRun, "first-run", 0, "index of this phase's first run in the campaign (continues the mode order)")
	fl.BoolVar(&p.DropCaches, "drop-caches", false, "empty the page cache before each upload (root)")
	return c
}
