package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Bed is a cluster that a scenario restarts once per phase with new
// settings: a testbed (TestbedBed) or a loopback cluster (LocalBed).
type Bed interface {
	// Up starts the cluster with the overrides and says where the client is.
	Up(ctx context.Context, o Overrides) (Layout, error)
	// Client runs a smarth command line (without the binary) on the client
	// host, with the namenode's address in SMARTH_NAMENODE.
	Client(ctx context.Context, args []string, stdout, stderr io.Writer) error
	// BlockLogs reads the block records of every datanode of the cluster.
	BlockLogs() ([]BlockRecord, error)
	// SaveLogs copies every daemon's log into dir, for a closer look.
	SaveLogs(dir string) error
	// Down stops the cluster and deletes its data. It is called after
	// every Up, also a failed one, and must then do nothing harmful.
	Down(ctx context.Context) error
}

// Options describe one scenario run.
type Options struct {
	Scenario    string // a name for the report, e.g. the topology's
	Description string
	Size        int64 // bytes per upload
	BlockSize   int64 // 0 = the cluster's
	Replication int   // 0 = the cluster's
	Warmup      int64 // untimed upload per client and phase; 0 = none
	// LocalThreshold and MaxPipelines change the clients' Algorithm 2
	// threshold and pipeline cap (0: the client's defaults), for
	// experiments that take SMARTH apart.
	LocalThreshold float64
	MaxPipelines   int
	// DropCaches empties the page cache before each upload (root; see
	// bench.Settle).
	DropCaches bool
	Modes      []string
	Placements []string
	// PlacementModes, when it names a placement, are the modes its phases
	// run instead of Modes (a random-topology run skips the cells it does
	// not compare).
	PlacementModes map[string][]string
	// Runs is the number of timed uploads per placement and mode, and
	// PhaseRuns how many of them one phase (one cluster start) does; the
	// phases alternate A B B A ... Runs must be a multiple of PhaseRuns.
	Runs, PhaseRuns int
	TempDir         string    // for the phases' result files
	LogDir          string    // if set, each phase's daemon logs are copied to LogDir/round<N>-<placement>
	Out             io.Writer // progress; default discard
	// LoadAvg reads the 1-minute load average (default /proc/loadavg).
	LoadAvg func() (float64, error)
}

// Defaults of a scenario.
var (
	DefaultModes      = []string{"classic", "multipipeline"}
	DefaultPlacements = []string{"rackaware", "speedaware"}
)

func (o *Options) setDefaults() error {
	if o.Size <= 0 {
		return errors.New("the upload size must be positive")
	}
	if len(o.Modes) == 0 {
		o.Modes = DefaultModes
	}
	if len(o.Placements) == 0 {
		o.Placements = DefaultPlacements
	}
	if o.Runs <= 0 {
		o.Runs = 3
	}
	if o.PhaseRuns <= 0 {
		o.PhaseRuns = 1
	}
	if o.Runs%o.PhaseRuns != 0 {
		return fmt.Errorf("runs (%d) must be a multiple of the runs per phase (%d)", o.Runs, o.PhaseRuns)
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.LoadAvg == nil {
		o.LoadAvg = LoadAvg
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	return nil
}

// Run does the scenario on bed: for each round, each placement's phase
// (order reversed every other round), and returns the report. On an error
// the report holds the runs done so far; the cluster is down either way.
func Run(ctx context.Context, bed Bed, o Options) (*Report, error) {
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(o.TempDir, "smarth-scenario-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	rep := &Report{Scenario: o.Scenario, Description: o.Description, Time: time.Now().UTC(), Size: o.Size,
		BlockSize: o.BlockSize, Replication: o.Replication, Warmup: o.Warmup,
		LocalThreshold: o.LocalThreshold, MaxPipelines: o.MaxPipelines, DropCaches: o.DropCaches,
		Modes: o.Modes, Placements: o.Placements}
	rounds := o.Runs / o.PhaseRuns
	for r := range rounds {
		order := slices.Clone(o.Placements)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, pl := range order {
			fmt.Fprintf(o.Out, "== round %d/%d, placement %s\n", r+1, rounds, pl)
			if err := runPhase(ctx, bed, o, rep, r+1, pl, tmp); err != nil {
				rep.Summarize()
				return rep, fmt.Errorf("round %d, placement %s: %w", r+1, pl, err)
			}
		}
	}
	rep.Summarize()
	return rep, nil
}

// runPhase starts the cluster with placement pl, lets the client do its
// uploads, explains them from the block logs and takes the cluster down.
func runPhase(ctx context.Context, bed Bed, o Options, rep *Report, round int, pl, tmp string) (err error) {
	defer func() {
		// Also when ctx is cancelled: the cluster must not outlive us.
		if derr := bed.Down(context.WithoutCancel(ctx)); derr != nil {
			err = errors.Join(err, fmt.Errorf("taking the cluster down: %w", derr))
		}
	}()
	lay, err := bed.Up(ctx, Overrides{Placement: pl, BlockSize: o.BlockSize})
	if err != nil {
		return err
	}
	rep.setLayout(lay)
	modes := o.Modes
	if m, ok := o.PlacementModes[pl]; ok {
		modes = m
	}
	plan := PutPlan{Size: o.Size, BlockSize: o.BlockSize, Replication: o.Replication, Modes: modes,
		Runs: o.PhaseRuns, Warmup: o.Warmup, LocalThreshold: o.LocalThreshold, MaxPipelines: o.MaxPipelines,
		FirstRun: (round - 1) * o.PhaseRuns, DropCaches: o.DropCaches}
	logDir := ""
	if o.LogDir != "" {
		logDir = filepath.Join(o.LogDir, fmt.Sprintf("round%d-%s", round, pl))
		if err := os.MkdirAll(logDir, 0o755); err != nil {
			return err
		}
		plan.ClientLog = filepath.Join(logDir, "client.log")
	}
	out := filepath.Join(tmp, fmt.Sprintf("round%d-%s.json", round, pl))
	load, _ := o.LoadAvg()
	if err := bed.Client(ctx, plan.Args(out), o.Out, o.Out); err != nil {
		return fmt.Errorf("the client's uploads on %s: %w", lay.ClientHost, err)
	}
	var res PhaseResult
	data, err := os.ReadFile(out)
	if err == nil {
		err = json.Unmarshal(data, &res)
	}
	if err != nil {
		return fmt.Errorf("read the client's results: %w", err)
	}
	recs, err := bed.BlockLogs()
	if err != nil {
		return fmt.Errorf("read the datanodes' block logs: %w", err)
	}
	if logDir != "" {
		if err := bed.SaveLogs(logDir); err != nil {
			return fmt.Errorf("save the daemons' logs: %w", err)
		}
		fmt.Fprintf(o.Out, "   logs saved in %s\n", logDir)
	}
	if rep.Replication == 0 || rep.BlockSize == 0 {
		rep.Replication, rep.BlockSize = res.Replication, res.BlockSize
	}
	for _, run := range res.Runs {
		rr := RunRecord{Round: round, Placement: pl, Mode: run.Mode, Client: run.Client, Seconds: run.Seconds,
			MiBps: run.MiBps, Start: run.Start, Load: load,
			Diag: Diagnose(recs, run.Client, run.Start, run.End, lay.SlowFirst)}
		rep.Runs = append(rep.Runs, rr)
		fmt.Fprintf(o.Out, "   %-10s %-14s %7.2f s %6.1f MiB/s  first hop %5.1f Mbit/s, %d/%d blocks on a slow first node, %.1f pipelines open, link busy %.0f%%, tail %.2f s, %d copies\n",
			pl, run.Mode, run.Seconds, run.MiBps, rr.Diag.FirstHopMbit, rr.Diag.SlowFirst, rr.Diag.Blocks,
			rr.Diag.MeanOpen, rr.Diag.BusyPct, rr.Diag.TailSec, rr.Diag.Copies)
	}
	return nil
}

// Args is the command line of the phase's client process, writing its
// result to jsonPath.
func (p PutPlan) Args(jsonPath string) []string {
	a := []string{"bench", "scenario-put", "--size", strconv.FormatInt(p.Size, 10),
		"--runs", strconv.Itoa(p.Runs), "--modes", strings.Join(p.Modes, ","), "--json", jsonPath}
	if p.BlockSize > 0 {
		a = append(a, "--block-size", strconv.FormatInt(p.BlockSize, 10))
	}
	if p.Replication > 0 {
		a = append(a, "--replication", strconv.Itoa(p.Replication))
	}
	if p.Warmup > 0 {
		a = append(a, "--warmup", strconv.FormatInt(p.Warmup, 10))
	}
	if p.Dir != "" {
		a = append(a, "--dir", p.Dir)
	}
	if p.FirstRun > 0 {
		a = append(a, "--first-run", strconv.Itoa(p.FirstRun))
	}
	if p.DropCaches {
		a = append(a, "--drop-caches")
	}
	if p.LocalThreshold > 0 {
		a = append(a, "--local-threshold", strconv.FormatFloat(p.LocalThreshold, 'g', -1, 64))
	}
	if p.MaxPipelines > 0 {
		a = append(a, "--max-pipelines", strconv.Itoa(p.MaxPipelines))
	}
	if p.ClientLog != "" {
		a = append(a, "--client-log", p.ClientLog)
	}
	return a
}

// LoadAvg reads the 1-minute load average from /proc/loadavg.
func LoadAvg() (float64, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, errors.New("/proc/loadavg is empty")
	}
	return strconv.ParseFloat(f[0], 64)
}
