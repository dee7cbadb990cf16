package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"smarth/internal/bench/ab"
	"smarth/internal/bench/suite"
)

var _ = addBenchSubcommand(newBenchABCmd)

type benchABFlags struct {
	a, b, setupA, setupB, cmd string
	suite                     bool
	suiteArgs                 string
	labelA, labelB            string
	runs                      int
	allowFew, verbose         bool
	jsonOut, plot             string
}

func newBenchABCmd() *cobra.Command {
	var f benchABFlags
	c := &cobra.Command{
		Use:   "ab",
		Short: "Compare two configurations by interleaved runs: medians, speedup with 95% CI, Mann-Whitney p, verdict",
		Long: `Runs a benchmark under configuration A and configuration B, interleaved
A B B A A B B A ..., at least 6 times each, and prints per benchmark the
medians, the speedup of B over A (median A / median B for times, so > 1 means B
is faster), its 95% Hodges-Lehmann confidence interval, the two-sided
Mann-Whitney U p-value and a verdict: faster, slower, or no significant
difference at alpha 0.05.

Two forms:
  --a CMD --b CMD            time two commands (run through /bin/sh)
  --a-setup CMD --b-setup CMD with --suite or --cmd CMD
                             switch the host between A and B with the setup
                             commands and run the same benchmark set under
                             each: --suite runs 'smarth bench suite' (TestDFSIO
                             write/read, TeraGen/TeraSort/TeraValidate, Pi) and
                             compares every phase; --cmd times one command.

A setup runs only when the side changes. If a setup fails the run stops and
the other side's setup is run to restore the host, so give setups that undo
each other (start/stop a service). At the end A's configuration is in force.`,
		Example: `  smarth bench ab --a 'sleep 0.2' --b 'sleep 0.1'
  smarth bench ab --label-a rpcbind-off --label-b rpcbind-on \
      --a-setup 'pkill -x rpcbind; true' --b-setup 'rpcbind' \
      --suite --suite-args '--scale small' --runs 6 --json ab.json --plot ab.svg
  smarth bench ab --a-setup 'sysctl -w net.core.busy_read=0' --b-setup 'sysctl -w net.core.busy_read=50' \
      --cmd 'smarth bench put --size 256MiB --runs 1'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBenchAB(cmd, &f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.a, "a", "", "command timed as configuration A")
	fl.StringVar(&f.b, "b", "", "command timed as configuration B")
	fl.StringVar(&f.setupA, "a-setup", "", "shell command that puts configuration A in force (and restores after B)")
	fl.StringVar(&f.setupB, "b-setup", "", "shell command that puts configuration B in force (and restores after A)")
	fl.BoolVar(&f.suite, "suite", false, "the benchmark set is the suite ('smarth bench suite'), every phase compared")
	fl.StringVar(&f.suiteArgs, "suite-args", "--scale small", "flags passed to 'smarth bench suite' (space-separated)")
	fl.StringVar(&f.cmd, "cmd", "", "the benchmark set is this one command, timed")
	fl.StringVar(&f.labelA, "label-a", "A", "name of configuration A")
	fl.StringVar(&f.labelB, "label-b", "B", "name of configuration B")
	fl.IntVar(&f.runs, "runs", 6, "runs of each configuration (at least 6)")
	fl.BoolVar(&f.allowFew, "allow-few", false, "allow fewer than 6 runs (intervals may be unbounded, p may never reach 0.05)")
	fl.BoolVar(&f.verbose, "verbose", false, "show the output of the commands")
	fl.StringVar(&f.jsonOut, "json", "", "write the comparisons as JSON to this file ('-' for standard output, instead of the table)")
	fl.StringVar(&f.plot, "plot", "", "draw the runs to this .svg or .png file")
	return c
}

// validate checks the flag combination; every mistake is a usage error.
func (f *benchABFlags) validate() error {
	twoCmds := f.a != "" || f.b != ""
	set := f.suite || f.cmd != ""
	switch {
	case twoCmds && (f.a == "" || f.b == ""):
		return usageErr("--a and --b go together")
	case twoCmds && set:
		return usageErr("--a/--b time two commands; --suite and --cmd go with --a-setup/--b-setup")
	case !twoCmds && !set:
		return usageErr("give --a CMD --b CMD, or --a-setup/--b-setup with --suite or --cmd CMD")
	case f.suite && f.cmd != "":
		return usageErr("--suite and --cmd are exclusive")
	case set && (f.setupA == "" || f.setupB == ""):
		return usageErr("--suite/--cmd need both --a-setup and --b-setup (each restores the other)")
	case f.runs < 1:
		return usageErr("--runs %d: want at least 1", f.runs)
	case f.runs < 6 && !f.allowFew:
		return usageErr("--runs %d: at least 6 runs of each side are needed for a 95%% interval and p < 0.05; --allow-few to override", f.runs)
	}
	return nil
}

func runBenchAB(cmd *cobra.Command, f *benchABFlags) error {
	if err := f.validate(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	logw := cmd.ErrOrStderr()
	var out io.Writer
	if f.verbose {
		out = logw
	}
	trial, err := f.trial(out, logw)
	if err != nil {
		return err
	}
	var sw ab.Switch
	if f.setupA != "" || f.setupB != "" {
		sw = ab.SetupSwitch(f.setupA, f.setupB, out)
	}
	runs, runErr := ab.Run(ctx, f.runs, sw, trial)
	// Leave A (the baseline) in force: the schedule ends on B for an
	// odd number of runs, and an interrupted run may end anywhere.
	if sw != nil && (runErr != nil || len(runs.Order) > 0 && runs.Order[len(runs.Order)-1] == ab.SideB) {
		if err := sw(context.WithoutCancel(ctx), ab.SideA); err != nil {
			fmt.Fprintf(logw, "smarth: restoring %s: %v\n", f.labelA, err)
		}
	}
	if runErr != nil {
		return runErr
	}
	opts := ab.DefaultOptions()
	if f.allowFew {
		opts.MinRuns = 1
	}
	cs, err := runs.Compare(f.labelA, f.labelB, opts)
	if err != nil {
		return err
	}
	return f.report(cmd.OutOrStdout(), cs)
}

// trial builds what one run of a side does.
func (f *benchABFlags) trial(out, logw io.Writer) (ab.Trial, error) {
	label := func(s ab.Side) string {
		if s == ab.SideA {
			return f.labelA
		}
		return f.labelB
	}
	progress := func(s ab.Side, i int) {
		fmt.Fprintf(logw, "run %d/%d: %s\n", i+1, 2*f.runs, label(s))
	}
	switch {
	case f.a != "":
		return func(ctx context.Context, s ab.Side, i int) ([]ab.Measurement, error) {
			progress(s, i)
			c := f.a
			if s == ab.SideB {
				c = f.b
			}
			secs, err := ab.Shell(ctx, c, out)
			return []ab.Measurement{{Name: "command", Value: secs}}, err
		}, nil
	case f.cmd != "":
		return func(ctx context.Context, s ab.Side, i int) ([]ab.Measurement, error) {
			progress(s, i)
			secs, err := ab.Shell(ctx, f.cmd, out)
			return []ab.Measurement{{Name: "command", Value: secs}}, err
		}, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this program to run the suite: %w", err)
	}
	dir, err := os.MkdirTemp("", "smarth-ab-")
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, s ab.Side, i int) ([]ab.Measurement, error) {
		progress(s, i)
		return runSuiteTrial(ctx, self, filepath.Join(dir, fmt.Sprintf("run%02d.json", i)), label(s), f.suiteArgs, out)
	}, nil
}

// runSuiteTrial runs the suite as a child process, so that each run starts
// a fresh client as a separate benchmark invocation would, and reads the
// phases' wall times from its JSON.
func runSuiteTrial(ctx context.Context, self, jsonPath, label, args string, out io.Writer) ([]ab.Measurement, error) {
	argv := append([]string{"bench", "suite", "--json", jsonPath, "--label", label}, strings.Fields(args)...)
	c := exec.CommandContext(ctx, self, argv...)
	var tail strings.Builder
	w := io.Writer(&tail)
	if out != nil {
		w = io.MultiWriter(out, &tail)
	}
	c.Stdout, c.Stderr = w, w
	if err := c.Run(); err != nil {
		return nil, fmt.Errorf("smarth %s: %w\n%s", strings.Join(argv, " "), err, lastLines(tail.String(), 15))
	}
	res, err := suite.ReadJSON(jsonPath)
	if err != nil {
		return nil, err
	}
	var ms []ab.Measurement
	for _, p := range res.Phases {
		if p.Skipped {
			continue
		}
		if p.Error != "" {
			return nil, fmt.Errorf("suite phase %s: %s", p.Name, p.Error)
		}
		ms = append(ms, ab.Measurement{Name: p.Name, Value: p.Seconds})
	}
	return ms, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func (f *benchABFlags) report(w io.Writer, cs []ab.Comparison) error {
	if f.plot != "" {
		title := fmt.Sprintf("smarth bench ab: %s vs %s, %d runs each", f.labelA, f.labelB, f.runs)
		if err := ab.Plot(f.plot, title, cs); err != nil {
			return err
		}
	}
	switch f.jsonOut {
	case "":
	case "-":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(cs)
	default:
		b, err := json.MarshalIndent(cs, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(f.jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "speedup = median %s / median %s (> 1: %s faster); 95%% Hodges-Lehmann interval; two-sided Mann-Whitney U at alpha 0.05\n", f.labelA, f.labelB, f.labelB)
	return ab.WriteTable(w, cs)
}
