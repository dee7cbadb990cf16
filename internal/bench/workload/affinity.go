package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"smarth/internal/mapreduce"
	"smarth/internal/rpc/dfspb"
)

// AffinityOptions describe one cache-affinity measurement (seed 003,
// section 3.1).
type AffinityOptions struct {
	App    string
	Params map[string]string // the app's parameters; "input" is required, "output" is chosen per run
	Runs   int               // cold/hot pairs, interleaved; default 3
	// CacheTimeout bounds the wait for the input to be fully cached
	// (default 5m).
	CacheTimeout time.Duration
	OutDir       string    // where run outputs go (deleted after each run); default /benchmarks/affinity
	Out          io.Writer // one line per run; default discard
}

// AffinityResult is CA = max(1 - hot/cold, 0) over the median runtimes.
type AffinityResult struct {
	App        string    `json:"app"`
	Input      []string  `json:"input"`
	Cold       []float64 `json:"cold_s"`
	Hot        []float64 `json:"hot_s"`
	ColdMedian float64   `json:"cold_median_s"`
	HotMedian  float64   `json:"hot_median_s"`
	CA         float64   `json:"affinity"`
}

// Affinity is the paper's CA = max(1 - hot/cold, 0).
func Affinity(cold, hot float64) float64 {
	if cold <= 0 {
		return 0
	}
	return math.Max(1-hot/cold, 0)
}

// Median of xs (0 for none).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// MeasureAffinity runs opts.App cold (its input not cached) and hot (a
// directive on every input path, waited for until fully cached), Runs
// times each, interleaved cold, hot, cold, ..., so that drift of a shared
// machine hits both alike. The cluster must run the pinned policy: with
// any other, map tasks' own accesses would cache the input during the cold
// runs. Its directives are removed at the end, also on failure.
func MeasureAffinity(ctx context.Context, nn dfspb.ClientProtocolClient, r mapreduce.Runner, reg *mapreduce.Registry, opts AffinityOptions) (*AffinityResult, error) {
	if opts.Runs <= 0 {
		opts.Runs = 3
	}
	if opts.CacheTimeout <= 0 {
		opts.CacheTimeout = 5 * time.Minute
	}
	if opts.OutDir == "" {
		opts.OutDir = "/benchmarks/affinity"
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	inputs := strings.Split(opts.Params["input"], ",")
	if opts.Params["input"] == "" {
		return nil, errors.New("--input is required: the affinity is that of the app on its input")
	}
	admin := cacheAdmin{nn}
	pol, err := admin.Policy(ctx)
	if err != nil {
		return nil, err
	}
	if pol != "pinned" {
		return nil, fmt.Errorf("the cluster runs cache policy %q; measuring affinity needs %q so that only the directive caches the input: start one with `smarth cluster up --cache-policy pinned --cache-capacity 256MiB` (the cache must hold the whole input)", pol, "pinned")
	}
	res := &AffinityResult{App: opts.App, Input: inputs}
	defer unpinAll(context.WithoutCancel(ctx), admin, inputs)
	for i := range opts.Runs {
		for _, hot := range []bool{false, true} {
			secs, err := affinityRun(ctx, admin, r, reg, opts, inputs, i, hot)
			if err != nil {
				return nil, err
			}
			kind := "cold"
			if hot {
				kind, res.Hot = "hot", append(res.Hot, secs)
			} else {
				res.Cold = append(res.Cold, secs)
			}
			fmt.Fprintf(opts.Out, "run %d %-4s %s %.2fs\n", i+1, kind, opts.App, secs)
		}
	}
	res.ColdMedian, res.HotMedian = Median(res.Cold), Median(res.Hot)
	res.CA = Affinity(res.ColdMedian, res.HotMedian)
	return res, nil
}

// affinityRun sets the cache state (nothing cached, or every input
// cached) untimed, then times one run of the app.
func affinityRun(ctx context.Context, admin cacheAdmin, r mapreduce.Runner, reg *mapreduce.Registry, opts AffinityOptions, inputs []string, i int, hot bool) (float64, error) {
	if err := unpinAll(ctx, admin, inputs); err != nil {
		return 0, err
	}
	if hot {
		for _, in := range inputs {
			if _, err := admin.Pin(ctx, in); err != nil {
				return 0, err
			}
		}
		for _, in := range inputs {
			if err := admin.WaitCached(ctx, in, opts.CacheTimeout); err != nil {
				return 0, err
			}
		}
	} else if err := admin.WaitEmpty(ctx, opts.CacheTimeout); err != nil {
		return 0, err
	}
	p := map[string]string{}
	for k, v := range opts.Params {
		p[k] = v
	}
	p["output"] = fmt.Sprintf("%s/%s-%d-%v", opts.OutDir, opts.App, i+1, map[bool]string{false: "cold", true: "hot"}[hot])
	ar := runApp(ctx, r, reg, App{Label: opts.App, App: opts.App}, p)
	if ar.Error != "" {
		return 0, fmt.Errorf("%s: %s", opts.App, ar.Error)
	}
	return ar.Seconds, nil
}

func unpinAll(ctx context.Context, admin cacheAdmin, inputs []string) error {
	var errs []error
	for _, in := range inputs {
		errs = append(errs, admin.Unpin(ctx, in))
	}
	return errors.Join(errs...)
}

// PrintAffinity writes the result as `smarth job affinity` shows it.
func PrintAffinity(w io.Writer, r *AffinityResult) {
	fmt.Fprintf(w, "%s on %s: cold median %.2fs (%d runs), hot median %.2fs (%d runs)\n", r.App, strings.Join(r.Input, ","),
		r.ColdMedian, len(r.Cold), r.HotMedian, len(r.Hot))
	fmt.Fprintf(w, "cache affinity CA = max(1 - hot/cold, 0) = %.3f\n", r.CA)
}
