package tunemeasure

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"
	"time"

	"smarth/internal/bench/ab"
	"smarth/internal/tune"
	"smarth/internal/tune/ga"
)

// GAOptions describe one tuning run.
type GAOptions struct {
	Space  string
	GA     ga.Options
	Budget time.Duration // wall-clock budget of the search (0 = none)
	ABRuns int           // interleaved runs per side in each confirmation; default 6
	Host   tune.Host
	// Testbed says the bench's receiver is a testbed namespace: the
	// sysctl space is then the per-namespace sysctls (SysctlSpace).
	Testbed bool
	Out     io.Writer
}

// Outcome is a tuning run's result.
type Outcome struct {
	Result   ga.Result
	Space    ga.Space
	Best     tune.Profile
	Default  ab.Comparison // best vs default
	Baseline ab.Comparison // best vs the network-latency baseline (socket space)
	Win      bool          // faster than the default and than the baseline
}

// RunGA searches the space on bench and confirms the winner.
func RunGA(ctx context.Context, bench *Bench, o GAOptions) (Outcome, error) {
	space, err := NewSpace(o.Space, o.Host)
	if err != nil {
		return Outcome{}, err
	}
	if o.Space == "sysctl" && o.Testbed {
		space = SysctlSpace(true)
		fmt.Fprintln(o.Out, "sysctl space on a testbed: only sysctls a namespace has its own writable copy of (net.ipv4.tcp_rmem), changed in the datanode's namespace;"+
			" net.core.busy_read/busy_poll are host-wide (absent in a namespace) and cannot take effect on veth (no NAPI), net.core.rmem_default is read-only"+
			" in a namespace (the host's value): left out")
	}
	var sysNames []string
	if o.Space == "sysctl" {
		for _, g := range space {
			sysNames = append(sysNames, g.Name)
		}
		before, err := bench.SysctlValues(sysNames)
		if err != nil {
			return Outcome{}, err
		}
		fmt.Fprintf(o.Out, "sysctls before the search: %v\n", before)
		defer func() {
			after, err := bench.SysctlValues(sysNames)
			switch {
			case err != nil:
				fmt.Fprintf(o.Out, "sysctls after the search: %v\n", err)
			case maps.Equal(before, after):
				fmt.Fprintf(o.Out, "sysctls after the search: %v (restored: same as before)\n", after)
			default:
				fmt.Fprintf(o.Out, "WARNING: sysctls after the search differ from before: %v (smarth tune sysctl --restore)\n", after)
			}
		}()
	}
	if o.ABRuns <= 0 {
		o.ABRuns = 6
	}
	start := time.Now()
	gopts := o.GA
	gopts.Initial = append([]ga.Genome{make(ga.Genome, len(space))}, gopts.Initial...)
	gopts.Stop = func() bool { return ctx.Err() != nil || (o.Budget > 0 && time.Since(start) > o.Budget) }
	gopts.OnGeneration = func(s ga.GenStats) {
		fmt.Fprintf(o.Out, "generation %d: best %.1f Mbps (%s), mean %.1f, %d measurements, load %s\n",
			s.Generation+1, s.Best, space.Describe(s.BestGenome), s.Mean, s.Evals, LoadAvg())
	}
	fit := func(g ga.Genome) (float64, error) {
		s, err := bench.Measure(ctx, ProfileOf(space, g))
		return s.Mbps, err
	}
	res, err := ga.Run(space, gopts, fit)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Result: res, Space: space, Best: ProfileOf(space, res.Best.Genome)}
	fmt.Fprintf(o.Out, "search: %d generations, %d measurements in %s%s; best %s at %.1f Mbps (median of %d)\n",
		res.Generations, res.Evals, time.Since(start).Round(time.Second), stopped(res.Stopped),
		out.Best, res.Best.Fitness, len(res.Best.Samples))
	def := tune.Default()
	if o.Space == "noop" {
		def.Name = "noop-default" // same settings, a different name so the A/B can tell the sides apart
		out.Best.Name = "noop-" + res.Best.Genome.Key()
	}
	if out.Best.Name == def.Name {
		fmt.Fprintln(o.Out, "the default profile was the best measured: nothing to confirm")
		return out, nil
	}
	fmt.Fprintf(o.Out, "confirming %s against %s (%d interleaved runs each), load %s\n", out.Best.Name, def.Name, o.ABRuns, LoadAvg())
	if out.Default, err = Confirm(ctx, bench, def, out.Best, o.ABRuns, o.Out); err != nil {
		return out, err
	}
	out.Win = out.Default.Verdict == ab.Faster
	// The baseline is measured whatever the first verdict, so that the
	// report always has both intervals.
	if o.Space == "socket" {
		base := tune.LatencyBaseline()
		fmt.Fprintf(o.Out, "confirming %s against the %s baseline, load %s\n", out.Best.Name, base.Name, LoadAvg())
		if out.Baseline, err = Confirm(ctx, bench, base, out.Best, o.ABRuns, o.Out); err != nil {
			return out, err
		}
		out.Win = out.Win && out.Baseline.Verdict == ab.Faster
	}
	fmt.Fprintf(o.Out, "done, load %s\n", LoadAvg())
	return out, nil
}

// LoadAvg is the machine's 1, 5 and 15 minute load averages, to be
// recorded with every measurement on this shared machine.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func stopped(s bool) string {
	if s {
		return " (budget spent)"
	}
	return ""
}
