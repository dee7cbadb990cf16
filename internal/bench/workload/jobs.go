package workload

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"sync"
	"time"

	"smarth/internal/mapreduce"
)

// recorder is a mapreduce.Runner that drives driver apps itself and keeps
// the result of every job, so that the locality counters of a multi-job
// app (grep, join, kmeans, pagerank) are summed over its stages; the job
// client's own Run reports a driver app without counters.
type recorder struct {
	next    mapreduce.Runner // the job client
	reg     *mapreduce.Registry
	mu      sync.Mutex // guards results: a driver may run stages concurrently
	results []*mapreduce.Result
}

func (r *recorder) FS() mapreduce.FS { return r.next.FS() }

func (r *recorder) Run(ctx context.Context, app string, params map[string]string) (*mapreduce.Result, error) {
	a, err := r.reg.Lookup(app)
	if err != nil {
		return nil, err
	}
	if d, ok := a.(mapreduce.Driver); ok {
		start := time.Now()
		err := d.Drive(ctx, r, params)
		res := &mapreduce.Result{JobID: "driver_" + app, State: mapreduce.StateSucceeded, Elapsed: time.Since(start)}
		if err != nil {
			res.State, res.Error = mapreduce.StateFailed, err.Error()
		}
		return res, err
	}
	res, err := r.next.Run(ctx, app, params)
	if res != nil {
		r.mu.Lock()
		r.results = append(r.results, res)
		r.mu.Unlock()
	}
	return res, err
}

// counter sums one job counter over every recorded job.
func (r *recorder) counter(name string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n int64
	for _, res := range r.results {
		n += res.Counters[mapreduce.GroupJob][name]
	}
	return n
}

// Counter names of seed 003 beside Hadoop's.
const counterCacheLocal = "CACHE_LOCAL_MAPS"

// Job params the experiments pass to every job of an app. The resource
// manager must honour max_running_maps (the app's share of the map slots)
// and the map tasks report cache_affinity with their accesses.
const (
	ParamAffinity       = "cache_affinity"
	ParamMaxRunningMaps = "max_running_maps"
)

// appParams are the parameters of one app run reading input (the path of
// its generated input) and writing out.
func appParams(a App, input, out string, maxMaps int) map[string]string {
	p := map[string]string{"output": out, ParamAffinity: strconv.FormatFloat(a.Affinity, 'f', 3, 64)}
	switch a.App {
	case "aggregation":
		p["input"] = path.Join(input, "uservisits")
	case "grep":
		p["regex"] = "[a-z]+ing"
	}
	if p["input"] == "" {
		p["input"] = input
	}
	if maxMaps > 0 {
		p[ParamMaxRunningMaps] = strconv.Itoa(maxMaps)
	}
	for k, v := range a.Params {
		p[k] = v
	}
	return p
}

// runApp runs one app to its end and reports its runtime and map
// locality. The output is deleted afterwards, untimed, to spare the disk.
func runApp(ctx context.Context, jc mapreduce.Runner, reg *mapreduce.Registry, a App, params map[string]string) AppRun {
	rec := &recorder{next: jc, reg: reg}
	start := time.Now()
	_, err := rec.Run(ctx, a.App, params)
	ar := AppRun{Label: a.Label, App: a.App, Seconds: time.Since(start).Seconds(),
		Maps: rec.counter(mapreduce.LaunchedMaps), CacheLocal: rec.counter(counterCacheLocal),
		DataLocal: rec.counter(mapreduce.DataLocalMaps), RackLocal: rec.counter(mapreduce.RackLocalMaps)}
	if err != nil {
		ar.Error = err.Error()
	}
	if derr := jc.FS().Delete(context.WithoutCancel(ctx), params["output"], true); derr != nil && err == nil && !errors.Is(derr, context.Canceled) {
		ar.Error = fmt.Sprintf("delete output %s: %v", params["output"], derr)
	}
	return ar
}
