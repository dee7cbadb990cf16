package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"smarth/internal/bench/tunemeasure"
	"smarth/internal/cluster"
	"smarth/internal/testbed"
	"smarth/internal/tune"
	"smarth/internal/tune/ga"
	"smarth/internal/units"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newTuneCmd()} })

func newTuneCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "tune",
		Short: "Network tuning (seed 001): transfer-log report, settings profiles, genetic search",
		Example: `  smarth tune report --cluster
  smarth tune check 'fast:so_rcvbuf=1048576,so_busy_poll=50'
  smarth tune ga --profile 64MiB,64KiB --budget 3m --population 8 --generations 4`,
	}
	c.AddCommand(newTuneReportCmd(), newTuneCheckCmd(), newTuneGACmd(), newTuneSysctlCmd(), newTuneABCmd())
	return c
}

func newTuneReportCmd() *cobra.Command {
	var logs []string
	var fromCluster bool
	c := &cobra.Command{
		Use:   "report",
		Short: "Throughput and CPU per transfer from datanode transfer logs, grouped by profile, size and packet size",
		Example: `  smarth tune report --cluster                 # every datanode of the local cluster
  smarth tune report --log dn1/transfer.jsonl --log dn2/transfer.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if fromCluster {
				found, err := filepath.Glob(filepath.Join(cluster.Home(), "data", "*", "transfer.jsonl"))
				if err != nil {
					return err
				}
				logs = append(logs, found...)
			}
			if len(logs) == 0 {
				return usageErr("give --log FILE or --cluster")
			}
			var recs []tune.Record
			for _, p := range logs {
				f, err := os.Open(p)
				if err != nil {
					return err
				}
				rs, bad, err := tune.ReadLog(f)
				f.Close()
				if err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
				if bad > 0 {
					fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d malformed lines skipped\n", p, bad)
				}
				recs = append(recs, rs...)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d transfers from %d logs (CPU: datanode process time over each transfer)\n", len(recs), len(logs))
			return tune.WriteReport(cmd.OutOrStdout(), tune.Report(recs))
		},
	}
	c.Flags().StringArrayVar(&logs, "log", nil, "transfer log file (repeatable)")
	c.Flags().BoolVar(&fromCluster, "cluster", false, "read the local cluster's datanode logs ($SMARTH_HOME/data/*/transfer.jsonl)")
	return c
}

func newTuneCheckCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check PROFILE",
		Short: "Validate a profile and apply it to a loopback socket pair, showing what is really in force",
		Long: `PROFILE is a JSON file ({"name":..,"settings":{..}}) or name:key=value,...
Socket settings are set on both ends of a loopback TCP connection and read
back with getsockopt; a setting the kernel clamps, refuses or cannot honour
(busy polling without NAPI) is shown as not in force.`,
		Example: `  smarth tune check 'latency:so_busy_poll=50'
  smarth tune check profile.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := tune.ParseProfile(tune.LocalHost(), args[0])
			if err != nil {
				return usageErr("%v", err)
			}
			states, err := checkOnLoopback(p)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "%s\n", p)
			for _, st := range states {
				fmt.Fprintf(out, "  %-18s want %-10s got %-10s in force %-5v %s\n", st.Setting, st.Want, st.Got, st.InForce, st.Note)
			}
			for n, v := range p.Settings {
				if s, _ := tune.Lookup(n); s.Level != tune.Socket {
					fmt.Fprintf(out, "  %-18s %s (%s setting, applied by %s)\n", n, v, s.Level, map[tune.Level]string{tune.Client: "the writing client", tune.Sysctl: "smarth tune sysctl"}[s.Level])
				}
			}
			return nil
		},
	}
}

func newTuneSysctlCmd() *cobra.Command {
	var set []string
	var restore bool
	var revertFile string
	c := &cobra.Command{
		Use:   "sysctl",
		Short: "Change host-wide network sysctls with a revert file, or restore them",
		Long: `Writes the revert file (old values, synced) before changing anything;
--restore puts the old values back. Only net.core.busy_read, busy_poll,
rmem_default and net.ipv4.tcp_rmem/tcp_wmem are accepted.`,
		Example: `  smarth tune sysctl --set net.core.busy_read=50 --set net.core.busy_poll=50
  smarth tune sysctl --restore`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s := tune.Sysctls{Root: "/proc/sys", RevertFile: revertFile}
			if restore {
				old, err := s.Restore()
				if err == nil {
					fmt.Fprintf(cmd.OutOrStdout(), "restored %v\n", old)
				}
				return err
			}
			if len(set) == 0 {
				return usageErr("give --set NAME=VALUE or --restore")
			}
			vals := map[string]string{}
			for _, kv := range set {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return usageErr("--set %q is not NAME=VALUE", kv)
				}
				vals[k] = v
			}
			if err := s.Apply(vals); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "set %v; old values in %s (smarth tune sysctl --restore)\n", vals, revertFile)
			return nil
		},
	}
	c.Flags().StringArrayVar(&set, "set", nil, "NAME=VALUE (repeatable)")
	c.Flags().BoolVar(&restore, "restore", false, "restore the values in the revert file")
	c.Flags().StringVar(&revertFile, "revert-file", defaultRevertFile(), "where old values are kept")
	return c
}

func defaultRevertFile() string { return filepath.Join(cluster.Home(), "run", "sysctl.revert") }

type gaFlags struct {
	profile, space, selection, crossKind, keepLog string
	testbed, stateDir, workDir                    string
	population, generations, tournament, elites   int
	samples, repeats, abRuns                      int
	mutation, crossover                           float64
	budget                                        time.Duration
	seed                                          uint64
	sysctl                                        bool
}

// openTestbed is the testbed --testbed names, checked for a run (root,
// tools), or nil for a local bench.
func (f gaFlags) openTestbed(cmd *cobra.Command) (*tunemeasure.Testbed, error) {
	if f.testbed == "" {
		return nil, nil
	}
	m, err := testbed.New(testbed.Options{StateRoot: f.stateDir, WorkRoot: f.workDir, Out: cmd.ErrOrStderr()})
	if err != nil {
		return nil, err
	}
	if err := m.Preflight(); err != nil {
		return nil, err
	}
	return &tunemeasure.Testbed{Manager: m, Topology: f.testbed}, nil
}

// startBench starts the tuning bench of tune ga and tune ab, on bed or
// locally, and returns it with the function that stops it (keeping the
// transfer log with --keep-log).
func (f gaFlags) startBench(ctx context.Context, cmd *cobra.Command, opts tunemeasure.Options, bed *tunemeasure.Testbed) (*tunemeasure.Bench, func(), error) {
	var bench *tunemeasure.Bench
	var err error
	if bed != nil {
		var pair tunemeasure.Pair
		if bench, pair, err = tunemeasure.StartTestbed(ctx, opts, *bed); err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "testbed %s: client %s -> datanode %s, link %s\n", f.testbed, pair.Client.Name, pair.DataNode.Name, pair.Link)
	} else if bench, err = tunemeasure.Start(ctx, opts); err != nil {
		return nil, nil, err
	}
	return bench, func() {
		if err := bench.Close(f.keepLog); err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "stopping the bench: %v\n", err)
		}
	}, nil
}

func newTuneGACmd() *cobra.Command {
	var f gaFlags
	c := &cobra.Command{
		Use:   "ga",
		Short: "Search network settings for a transmission profile with the seed 001 genetic algorithm",
		Long: `Starts a throw-away local cluster (one datanode), and for each genome writes
files of SIZE bytes in PACKET-byte packets, reading each transfer's
throughput from the datanode's transfer log; fitness is the median of
--repeats transfers. The winner is confirmed against the default by an
interleaved A/B (and, for the socket space, against the network-latency
baseline, so_busy_poll 50 us) before it is called better. --space noop is
the control: settings that change nothing, which must come out "no
significant difference".

--testbed FILE runs the transfers on a testbed instead (root): the
topology (one client host, one datanode, a shaped link between them; see
testbed/tune-*.yaml) is brought up for the run and taken down at the end,
the client writes from inside its host's namespace, and --space sysctl
changes only per-namespace sysctls inside the datanode's namespace, never
the host's.`,
		Example: `  smarth tune ga --profile 64MiB,64KiB --budget 3m --population 8 --generations 5
  smarth tune ga --profile 16MiB,64KiB --space noop --budget 2m
  smarth tune ga --profile 1GiB,64KiB --space sysctl --sysctl
  sudo smarth tune ga --testbed testbed/tune-300.yaml --profile 64MiB,64KiB --budget 12m --population 10`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTuneGA(cmd, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.profile, "profile", "", "transmission profile SIZE,PACKET, e.g. 64MiB,64KiB (required)")
	fl.StringVar(&f.space, "space", "socket", "search space: "+strings.Join(tunemeasure.Spaces(), ", "))
	fl.IntVar(&f.population, "population", 50, "individuals per generation")
	fl.IntVar(&f.generations, "generations", 100, "generations")
	fl.Float64Var(&f.mutation, "mutation", 0.2, "probability that a child's gene is redrawn")
	fl.Float64Var(&f.crossover, "crossover", 0.9, "probability that two parents are crossed")
	fl.StringVar(&f.crossKind, "crossover-kind", "single", "single (single-point) or uniform")
	fl.StringVar(&f.selection, "selection", "tournament", "tournament, roulette or rank")
	fl.IntVar(&f.tournament, "tournament-size", 2, "individuals per tournament")
	fl.IntVar(&f.elites, "elites", 2, "best individuals kept unchanged (and re-measured)")
	fl.IntVar(&f.samples, "max-samples", 3, "measurements of an elite genome (median)")
	fl.IntVar(&f.repeats, "repeats", 3, "transfers per measurement (median)")
	fl.IntVar(&f.abRuns, "ab-runs", 6, "interleaved rounds per side in the confirmation (at least 6; one value per side per round)")
	fl.DurationVar(&f.budget, "budget", 0, "wall-clock budget of the search (0 = none)")
	fl.Uint64Var(&f.seed, "seed", 1, "random seed")
	fl.BoolVar(&f.sysctl, "sysctl", false, "allow host-wide sysctl changes (revert file written first, restored after each measurement, on exit and at the next start)")
	fl.StringVar(&f.keepLog, "keep-log", "", "copy the datanode's transfer log here at the end")
	fl.StringVar(&f.testbed, "testbed", "", "topology FILE: measure on a testbed brought up for the run (root)")
	fl.StringVar(&f.stateDir, "state-dir", testbed.DefaultStateRoot, "where testbed state files live (with --testbed)")
	fl.StringVar(&f.workDir, "work-dir", testbed.DefaultWorkRoot, "where testbed configs, data and logs live (with --testbed)")
	return c
}

func runTuneGA(cmd *cobra.Command, f gaFlags) error {
	size, packet, err := parseTransmission(f.profile)
	if err != nil {
		return usageErr("--profile: %v", err)
	}
	if _, err := tunemeasure.NewSpace(f.space, tune.LocalHost()); err != nil {
		return usageErr("--space: %v", err)
	}
	if f.space == "sysctl" && !f.sysctl {
		return usageErr("--space sysctl changes host-wide settings: add --sysctl to allow it")
	}
	if f.abRuns < tunemeasure.MinRounds { // before the search, not after it
		return usageErr("--ab-runs %d: want at least %d rounds", f.abRuns, tunemeasure.MinRounds)
	}
	out := cmd.OutOrStdout()
	opts := tunemeasure.Options{Size: size, PacketSize: packet, Repeats: f.repeats, Out: out}
	bed, err := f.openTestbed(cmd)
	if err != nil {
		return err
	}
	if f.sysctl && bed != nil {
		// Changed inside the datanode's namespace and restored there after
		// each measurement; a crash leaves them in a namespace that
		// `smarth testbed down` deletes, values and all, so the host's own
		// are never at stake and nothing is restored here.
		s := tune.Sysctls{Root: "/proc/sys", RevertFile: filepath.Join(os.TempDir(), fmt.Sprintf("smarth-tune-sysctl-%d.revert", os.Getpid()))}
		opts.Sysctl = &s
		defer os.Remove(s.RevertFile)
	} else if f.sysctl {
		s := tune.Sysctls{Root: "/proc/sys", RevertFile: defaultRevertFile()}
		// A crash during an earlier run left its revert file: restore first.
		if old, err := s.Restore(); err != nil {
			return err
		} else if old != nil {
			fmt.Fprintf(out, "restored sysctls left by an earlier run: %v\n", old)
		}
		opts.Sysctl = &s
		defer s.Restore()
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(out, "load average at start: %s\n", tunemeasure.LoadAvg())
	bench, closeBench, err := f.startBench(ctx, cmd, opts, bed)
	if err != nil {
		return err
	}
	defer closeBench()
	o, err := tunemeasure.RunGA(ctx, bench, tunemeasure.GAOptions{
		Space: f.space, Budget: f.budget, ABRuns: f.abRuns, Host: tune.LocalHost(), Out: out, Testbed: bed != nil,
		GA: ga.Options{Population: f.population, Generations: f.generations, Mutation: f.mutation, Crossover: f.crossover,
			CrossoverKind: f.crossKind, Selection: f.selection, TournamentSize: f.tournament, Elites: f.elites,
			MaxSamples: f.samples, Seed: f.seed},
	})
	if err != nil {
		return err
	}
	return printOutcome(out, o)
}

func printOutcome(out interface{ Write([]byte) (int, error) }, o tunemeasure.Outcome) error {
	fmt.Fprintln(out, "top genomes (median Mbps, samples):")
	for i, s := range o.Result.Measured[:min(5, len(o.Result.Measured))] {
		fmt.Fprintf(out, "  %d. %8.1f  n=%d  %s\n", i+1, s.Fitness, len(s.Samples), o.Space.Describe(s.Genome))
	}
	if o.Default.Verdict != "" {
		tunemeasure.WriteVerdict(out, o.Default)
	}
	if o.Baseline.Verdict != "" {
		tunemeasure.WriteVerdict(out, o.Baseline)
	}
	if o.Win {
		fmt.Fprintf(out, "result: %s beats the default and the baseline\n", o.Best)
	} else {
		fmt.Fprintln(out, "result: no setting in this space was confirmed better than the default (and baseline) here")
	}
	return nil
}

// parseTransmission parses SIZE,PACKET, each a size as units.ParseSize
// reads it (binary units: 64MiB, 64k; a bare number is bytes).
func parseTransmission(s string) (int64, int, error) {
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return 0, 0, fmt.Errorf("want SIZE,PACKET such as 64MiB,64KiB, got %q", s)
	}
	size, err := units.ParseSize(a)
	if err != nil {
		return 0, 0, err
	}
	pkt, err := units.ParseSize(b)
	if err != nil {
		return 0, 0, err
	}
	if err := (tune.Profile{Settings: map[string]string{"packet_size": strconv.FormatInt(pkt, 10)}}).Validate(tune.LocalHost()); err != nil || pkt == 0 {
		return 0, 0, fmt.Errorf("packet size: %v", err)
	}
	if size <= 0 || size > 4<<30 {
		return 0, 0, fmt.Errorf("size %d out of range (1 B .. 4 GiB)", size)
	}
	return size, int(pkt), nil
}

func newTuneABCmd() *cobra.Command {
	var f gaFlags
	var a, b string
	c := &cobra.Command{
		Use:   "ab",
		Short: "Interleaved A/B of two settings profiles on the tuning bench (no search): re-check a GA winner, or one gene alone",
		Long: `Starts the same bench as 'tune ga' (a local cluster, or the --testbed
topology), then measures profile A and profile B interleaved A B B A ...
for --ab-runs rounds of --repeats transfers each, and judges B against A
with the statistics of 'smarth bench ab' (median speedup, Hodges-Lehmann
95% interval, Mann-Whitney p, verdict at p < 0.05). A profile is
"default", "network-latency", a JSON file or name:key=value,...`,
		Example: `  smarth tune ab --profile 64MiB,64KiB --b 'win160:window=160'
  sudo smarth tune ab --testbed testbed/tune-300.yaml --profile 64MiB,1536B --a default --b 'win160:window=160' --ab-runs 10`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			size, packet, err := parseTransmission(f.profile)
			if err != nil {
				return usageErr("--profile: %v", err)
			}
			pa, err := namedProfile(a)
			if err != nil {
				return usageErr("--a: %v", err)
			}
			pb, err := namedProfile(b)
			if err != nil {
				return usageErr("--b: %v", err)
			}
			if pa.Name == pb.Name {
				return usageErr("--a and --b are both named %q: the A/B tells the sides apart by name", pa.Name)
			}
			if len(pa.Level(tune.Sysctl))+len(pb.Level(tune.Sysctl)) > 0 {
				return usageErr("tune ab compares socket and client settings; sysctl profiles go through 'tune ga --space sysctl --sysctl'")
			}
			if f.abRuns < tunemeasure.MinRounds {
				return usageErr("--ab-runs %d: want at least %d rounds", f.abRuns, tunemeasure.MinRounds)
			}
			out := cmd.OutOrStdout()
			opts := tunemeasure.Options{Size: size, PacketSize: packet, Repeats: f.repeats, Out: out}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			fmt.Fprintf(out, "load average at start: %s\n", tunemeasure.LoadAvg())
			bed, err := f.openTestbed(cmd)
			if err != nil {
				return err
			}
			bench, closeBench, err := f.startBench(ctx, cmd, opts, bed)
			if err != nil {
				return err
			}
			defer closeBench()
			res, err := tunemeasure.Confirm(ctx, bench, pa, pb, f.abRuns, out)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "done, load %s\n", tunemeasure.LoadAvg())
			tunemeasure.WriteVerdict(out, res)
			return nil
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.profile, "profile", "", "transmission profile SIZE,PACKET, e.g. 64MiB,64KiB (required)")
	fl.StringVar(&a, "a", "default", "profile A (the reference)")
	fl.StringVar(&b, "b", "", "profile B (required)")
	fl.IntVar(&f.repeats, "repeats", 3, "transfers per measurement")
	fl.IntVar(&f.abRuns, "ab-runs", 10, "interleaved rounds per side (at least 6)")
	fl.StringVar(&f.keepLog, "keep-log", "", "copy the datanode's transfer log here at the end")
	fl.StringVar(&f.testbed, "testbed", "", "topology FILE: measure on a testbed brought up for the run (root)")
	fl.StringVar(&f.stateDir, "state-dir", testbed.DefaultStateRoot, "where testbed state files live (with --testbed)")
	fl.StringVar(&f.workDir, "work-dir", testbed.DefaultWorkRoot, "where testbed configs, data and logs live (with --testbed)")
	_ = c.MarkFlagRequired("profile")
	_ = c.MarkFlagRequired("b")
	return c
}

// namedProfile is "default", "network-latency" or a profile argument.
func namedProfile(arg string) (tune.Profile, error) {
	switch arg {
	case "default":
		return tune.Default(), nil
	case "network-latency":
		return tune.LatencyBaseline(), nil
	}
	return tune.ParseProfile(tune.LocalHost(), arg)
}
