package suite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
)

// Phase names, as in the paper's Table III.
const (
	DFSIOWrite   = "TestDFSIO-write"
	DFSIORead    = "TestDFSIO-read"
	TeraGen      = "TeraGen"
	TeraSort     = "TeraSort"
	TeraValidate = "TeraValidate"
	Pi           = "Pi"
)

// AllPhases is the suite in the order it runs.
var AllPhases = []string{DFSIOWrite, DFSIORead, TeraGen, TeraSort, TeraValidate, Pi}

// needs names the phase whose output a phase reads.
var needs = map[string]string{DFSIORead: DFSIOWrite, TeraSort: TeraGen, TeraValidate: TeraSort}

// Sizes are the amounts of work of one run.
type Sizes struct {
	DFSIOFiles    int   `json:"dfsio_files"`
	DFSIOFileSize int64 `json:"dfsio_file_bytes"`
	TeraRows      int64 `json:"tera_rows"`
	TeraMaps      int   `json:"tera_maps"`
	TeraReduces   int   `json:"tera_reduces"`
	PiMaps        int   `json:"pi_maps"`
	PiSamples     int64 `json:"pi_samples"`
}

// Scales are the named sizes. "large" is the paper's own: TestDFSIO 10
// files of 1000 MB and TeraSort of 3 GB (30M rows); its Pi (500 maps of
// 10G samples) would run for hours, so Pi stays at 16 × 100M.
var Scales = map[string]Sizes{
	"small": {DFSIOFiles: 4, DFSIOFileSize: 16 << 20, TeraRows: 1_000_000, TeraMaps: 4, TeraReduces: 2,
		PiMaps: 4, PiSamples: 1_000_000},
	"medium": {DFSIOFiles: 4, DFSIOFileSize: 256 << 20, TeraRows: 10_000_000, TeraMaps: 8, TeraReduces: 3,
		PiMaps: 4, PiSamples: 10_000_000},
	"large": {DFSIOFiles: 10, DFSIOFileSize: 1000 << 20, TeraRows: 30_000_000, TeraMaps: 24, TeraReduces: 6,
		PiMaps: 16, PiSamples: 100_000_000},
}

// ScaleNames lists the scales, smallest first.
func ScaleNames() []string { return []string{"small", "medium", "large"} }

// ForNodes scales the task counts to a cluster of n node managers (with
// Hadoop's defaults of two map slots and one reduce slot each): at least
// two maps and one reduce per node, and a TestDFSIO file per node, so
// every node works. The amounts of data stay those of the scale: a
// testbed's hosts share one machine's disk, so more nodes do not mean
// more room.
func (s Sizes) ForNodes(n int) Sizes {
	if n <= 0 {
		return s
	}
	s.TeraMaps = max(s.TeraMaps, 2*n)
	s.TeraReduces = max(s.TeraReduces, n)
	s.DFSIOFiles = max(s.DFSIOFiles, n)
	s.PiMaps = max(s.PiMaps, 2*n)
	return s
}

// Validate rejects sizes no phase could run with.
func (s Sizes) Validate() error {
	switch {
	case s.DFSIOFiles < 1 || s.DFSIOFileSize < 1:
		return fmt.Errorf("TestDFSIO needs at least one file of at least one byte (files %d, size %d)", s.DFSIOFiles, s.DFSIOFileSize)
	case s.TeraRows < 1 || s.TeraMaps < 1 || s.TeraReduces < 1:
		return fmt.Errorf("TeraSort needs rows, maps and reduces >= 1 (rows %d, maps %d, reduces %d)", s.TeraRows, s.TeraMaps, s.TeraReduces)
	case s.PiMaps < 1 || s.PiSamples < 1:
		return fmt.Errorf("Pi needs maps and samples >= 1 (maps %d, samples %d)", s.PiMaps, s.PiSamples)
	}
	return nil
}

// Options configure a run.
type Options struct {
	Sizes  Sizes
	Scale  string   // the name Sizes came from, for the report ("custom" if changed)
	Label  string   // names the run in comparisons, e.g. "rpcbind-off"
	Phases []string // default AllPhases
	// BaseDir holds the suite's data on the file system; it is removed
	// at the end unless Keep.
	BaseDir string
	Keep    bool
	// Log, if set, gets a line as each phase starts and ends.
	Log io.Writer
}

// Phase is the outcome of one phase.
type Phase struct {
	Name    string             `json:"name"`
	Seconds float64            `json:"seconds"` // wall time of the phase
	JobID   string             `json:"job_id,omitempty"`
	Metrics map[string]float64 `json:"metrics,omitempty"`
	Error   string             `json:"error,omitempty"`
	Skipped bool               `json:"skipped,omitempty"`
}

// Results are one run of the suite.
type Results struct {
	Label   string    `json:"label"`
	Scale   string    `json:"scale"`
	Sizes   Sizes     `json:"sizes"`
	Started time.Time `json:"started"`
	Seconds float64   `json:"seconds"` // whole run
	Phases  []Phase   `json:"phases"`
}

// Phase returns the named phase, if it ran.
func (r *Results) Phase(name string) (Phase, bool) {
	for _, p := range r.Phases {
		if p.Name == name {
			return p, true
		}
	}
	return Phase{}, false
}

// Run runs the suite through r. It always returns the results so far;
// the error lists the phases that failed.
func Run(ctx context.Context, r mapreduce.Runner, opts Options) (*Results, error) {
	if err := opts.Sizes.Validate(); err != nil {
		return nil, err
	}
	phases := opts.Phases
	if len(phases) == 0 {
		phases = AllPhases
	}
	for _, p := range phases {
		if !slices.Contains(AllPhases, p) {
			return nil, fmt.Errorf("unknown phase %q (phases: %s)", p, strings.Join(AllPhases, ", "))
		}
	}
	opts.Phases = phases
	if opts.BaseDir == "" {
		opts.BaseDir = "/benchmarks/suite"
	}
	s := &run{r: r, opts: opts, dirs: dirs(opts.BaseDir), done: map[string]bool{}}
	res := &Results{Label: opts.Label, Scale: opts.Scale, Sizes: opts.Sizes, Started: time.Now()}
	var failed []string
	for _, name := range AllPhases { // in suite order whatever the order asked
		if !slices.Contains(phases, name) {
			continue
		}
		p := s.phase(ctx, name)
		res.Phases = append(res.Phases, p)
		if p.Error != "" {
			failed = append(failed, name+": "+p.Error)
		}
		if ctx.Err() != nil {
			break
		}
	}
	res.Seconds = time.Since(res.Started).Seconds()
	if !opts.Keep {
		if err := r.FS().Delete(context.WithoutCancel(ctx), opts.BaseDir, true); err != nil && !errors.Is(err, fs.ErrNotExist) {
			failed = append(failed, "cleanup: "+err.Error())
		}
	}
	if len(failed) > 0 {
		return res, fmt.Errorf("benchmark suite: %s", strings.Join(failed, "; "))
	}
	return res, nil
}

type suiteDirs struct{ dfsio, teraIn, teraOut, teraReport string }

func dirs(base string) suiteDirs {
	return suiteDirs{dfsio: path.Join(base, "TestDFSIO"), teraIn: path.Join(base, "tera-in"),
		teraOut: path.Join(base, "tera-out"), teraReport: path.Join(base, "tera-validate")}
}

type run struct {
	r        mapreduce.Runner
	opts     Options
	dirs     suiteDirs
	done     map[string]bool // phases that succeeded in this run
	checksum int64           // TeraGen's, for TeraValidate
	haveSum  bool
}

// phase runs one phase and times it.
func (s *run) phase(ctx context.Context, name string) Phase {
	p := Phase{Name: name, Metrics: map[string]float64{}}
	if dep, ok := needs[name]; ok && !s.done[dep] && slices.Contains(s.opts.Phases, dep) {
		p.Skipped, p.Error = true, "skipped: "+dep+" did not succeed"
		return p
	}
	if s.opts.Log != nil {
		fmt.Fprintf(s.opts.Log, "%-16s running\n", name)
	}
	start := time.Now()
	err := s.do(ctx, name, &p)
	p.Seconds = time.Since(start).Seconds()
	if err != nil {
		p.Error = err.Error()
	} else {
		s.done[name] = true
	}
	if s.opts.Log != nil {
		status := "ok"
		if err != nil {
			status = "FAILED: " + err.Error()
		}
		fmt.Fprintf(s.opts.Log, "%-16s %8.2fs  %s\n", name, p.Seconds, status)
	}
	return p
}

func (s *run) do(ctx context.Context, name string, p *Phase) error {
	z := s.opts.Sizes
	switch name {
	case DFSIOWrite, DFSIORead:
		mode := "write"
		if name == DFSIORead {
			mode = "read"
		}
		d, err := apps.RunDFSIO(ctx, s.r, map[string]string{"mode": mode, "baseDir": s.dirs.dfsio,
			"nrFiles": strconv.Itoa(z.DFSIOFiles), "fileSize": strconv.FormatInt(z.DFSIOFileSize, 10) + "B"})
		p.JobID = d.JobID
		if err != nil {
			return err
		}
		p.Metrics["mbytes"] = float64(d.Bytes) / (1 << 20)
		p.Metrics["throughput_mb_s"] = d.Throughput
		p.Metrics["average_io_rate_mb_s"] = d.AvgRate
		p.Metrics["io_rate_std_dev"] = d.StdDev
		p.Metrics["exec_time_s"] = d.ExecTime.Seconds()
		return nil
	case TeraGen:
		for _, d := range []string{s.dirs.teraIn, s.dirs.teraOut, s.dirs.teraReport} {
			if err := s.r.FS().Delete(ctx, d, true); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		res, err := s.job(ctx, p, "teragen", "rows", strconv.FormatInt(z.TeraRows, 10),
			"maps", strconv.Itoa(z.TeraMaps), "output", s.dirs.teraIn)
		if err != nil {
			return err
		}
		s.checksum, s.haveSum = res.Counters[apps.GroupTera][apps.CounterChecksum], true
		p.Metrics["rows"] = float64(res.Counters[apps.GroupTera][apps.CounterRows])
		return nil
	case TeraSort:
		if err := s.r.FS().Delete(ctx, s.dirs.teraOut, true); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		_, err := s.job(ctx, p, "terasort", "input", s.dirs.teraIn, "output", s.dirs.teraOut,
			"reduces", strconv.Itoa(z.TeraReduces))
		return err
	case TeraValidate:
		if err := s.r.FS().Delete(ctx, s.dirs.teraReport, true); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		res, err := s.job(ctx, p, "teravalidate", "input", s.dirs.teraOut, "output", s.dirs.teraReport)
		if err != nil {
			return err
		}
		t := res.Counters[apps.GroupTera]
		p.Metrics["rows"], p.Metrics["misordered"] = float64(t[apps.CounterRows]), float64(t[apps.CounterMisorder])
		if t[apps.CounterMisorder] != 0 {
			return fmt.Errorf("TeraSort output is not sorted: %d misordered rows (see %s)", t[apps.CounterMisorder], s.dirs.teraReport)
		}
		if s.haveSum && t[apps.CounterChecksum] != s.checksum {
			return fmt.Errorf("row checksum %x differs from TeraGen's %x: rows were lost or changed",
				uint64(t[apps.CounterChecksum]), uint64(s.checksum))
		}
		return nil
	case Pi:
		est, res, err := apps.RunPi(ctx, s.r, map[string]string{"maps": strconv.Itoa(z.PiMaps),
			"samples": strconv.FormatInt(z.PiSamples, 10)})
		if res != nil {
			p.JobID = res.JobID
		}
		if err != nil {
			return err
		}
		p.Metrics["estimate"] = est
		return nil
	}
	return fmt.Errorf("unknown phase %q", name)
}

// job runs one app and records its ID.
func (s *run) job(ctx context.Context, p *Phase, app string, kv ...string) (*mapreduce.Result, error) {
	params := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		params[kv[i]] = kv[i+1]
	}
	res, err := s.r.Run(ctx, app, params)
	if res != nil {
		p.JobID = res.JobID
	}
	if err == nil && res != nil && res.State != mapreduce.StateSucceeded {
		err = fmt.Errorf("job %s %s: %s", res.JobID, res.State, res.Error)
	}
	if err == nil && res == nil {
		err = fmt.Errorf("%s: the runner returned no result", app)
	}
	return res, err
}
