package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"smarth/internal/bench/scenario"
	"smarth/internal/testbed"
)

// parseRange reads "MIN-MAX" (or one number for both).
func parseRange(flag, v string) (scenario.Range, error) {
	lo, hi, found := strings.Cut(v, "-")
	if !found {
		hi = lo
	}
	a, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
	b, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
	if err1 != nil || err2 != nil {
		return scenario.Range{}, usageErr("%s: want MIN-MAX such as 2-3, got %q", flag, v)
	}
	return scenario.Range{Min: a, Max: b}, nil
}

// randomSpec builds the ranges from the flags.
func randomSpec(f *benchScenarioFlags, size, blockSize int64, maxPipelines int) (scenario.RandomSpec, error) {
	s := scenario.DefaultRandomSpec()
	s.Seed, s.Count, s.Size = f.seed, f.topologies, size
	s.ConcurrentPlacement = f.concPlacement
	if blockSize > 0 {
		s.BlockSize = blockSize
	}
	if maxPipelines > 0 {
		s.MaxPipelines = maxPipelines
	}
	var err error
	for _, r := range []struct {
		flag, v string
		dst     *scenario.Range
	}{{"--racks", f.racks, &s.Racks}, {"--rack-size", f.rackSize, &s.RackSize}, {"--datanodes-range", f.dnCount, &s.DataNodes},
		{"--nic", f.nicMbit, &s.NICMbit}, {"--cross-rack", f.crossMb, &s.CrossMbit}} {
		if *r.dst, err = parseRange(r.flag, r.v); err != nil {
			return s, err
		}
	}
	if err := s.Check(); err != nil {
		return s, usageErr("%v", err)
	}
	return s, nil
}

// runBenchRandom is `smarth bench scenario random`.
func runBenchRandom(ctx context.Context, cmd *cobra.Command, f *benchScenarioFlags, o scenario.Options) error {
	out := cmd.OutOrStdout()
	if f.fromJSON != "" {
		rep, err := scenario.ReadRandomReport(f.fromJSON)
		if err != nil {
			return err
		}
		rep.Recompute()
		rep.PrintTable(out)
		return saveRandom(out, rep, f)
	}
	spec, err := randomSpec(f, o.Size, o.BlockSize, o.MaxPipelines)
	if err != nil {
		return err
	}
	if f.dryRun {
		tops, err := scenario.RandomTopologies(spec)
		if err != nil {
			return err
		}
		for _, t := range tops {
			fmt.Fprintf(out, "%2d %-10s %-28s k=%d P=%d classic %.0f Mbit/s, multi %.0f Mbit/s, ideal %.2fx, schedule %.2fx\n", t.Index, t.Name, t.Shape(),
				t.Ideal.Local, t.Ideal.Pipelines, t.Ideal.Classic/1e6, t.Ideal.Multi/1e6, t.Ideal.Speedup, t.Ideal.ScheduleSpeedup)
		}
		return nil
	}
	m, err := testbed.New(testbed.Options{StateRoot: f.stateDir, WorkRoot: f.workDir, Binary: f.binary, Out: cmd.ErrOrStderr()})
	if err != nil {
		return err
	}
	if err := m.Preflight(); err != nil {
		return err
	}
	rep, runErr := scenario.RunRandom(ctx, func(t scenario.RandomTopology) scenario.Bed {
		return &scenario.TestbedBed{Manager: m, Topology: t.YAML, TempDir: o.TempDir}
	}, spec, o)
	if rep == nil || len(rep.Results) == 0 {
		return runErr
	}
	fmt.Fprintln(out)
	rep.PrintTable(out)
	if err := saveRandom(out, rep, f); err != nil {
		return err
	}
	return runErr
}

// saveRandom writes the report's JSON and plot where the flags say.
func saveRandom(out io.Writer, rep *scenario.RandomReport, f *benchScenarioFlags) error {
	jsonPath, plotPath := f.jsonPath, f.plotPath
	if f.outDir != "" {
		if err := os.MkdirAll(f.outDir, 0o755); err != nil {
			return err
		}
		name := fmt.Sprintf("random-%d", rep.Spec.Seed)
		if jsonPath == "" {
			jsonPath = filepath.Join(f.outDir, name+".json")
		}
		if plotPath == "" {
			plotPath = filepath.Join(f.outDir, name+".svg")
		}
	}
	if jsonPath != "" {
		if err := rep.WriteJSON(jsonPath); err != nil {
			return err
		}
		fmt.Fprintf(out, "report written to %s\n", jsonPath)
	}
	if plotPath != "" {
		if err := rep.Plot(plotPath); err != nil {
			return err
		}
		fmt.Fprintf(out, "plot written to %s\n", plotPath)
	}
	return nil
}
