package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"smarth/internal/bench/ab"
	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/mapreduce/jobclient"
	"smarth/internal/units"
)

// DefaultPageCache is each datanode's page cache for recent reads in a
// workload run: a node with a few hundred MiB of block cache also has
// some page cache, and it must hold the blocks maps read in the seconds
// before their cache commands arrive (a heartbeat, 3 s: about 100 MB at
// a 30-40 MB/s disk), or caching a block costs a second disk read.
const DefaultPageCache = 128 << 20

// Options describe a workload run.
type Options struct {
	Combos        []Combo
	Runs          int   // back-to-back runs per combination; default 4 (1 for dynamic)
	DataNodes     int   // default 4
	MapSlots      int   // per node manager; default 2
	CacheCapacity int64 // per datanode; default 200 MiB
	BlockSize     int64 // default 16 MiB
	Replication   int   // default 2
	DiskReadRate  int64 // bytes/s per datanode; 0 = no cap
	PageCache     int64 // page_cache_budget per datanode (recent reads kept); default 128 MiB, < 0 = none
	CacheSkips    int   // the scheduler's C; 0 = the resource manager's default (3)
	Affinity      map[string]float64
	Binary        string    // smarth binary; default the running one
	Home          string    // parent of the per-combination cluster homes; default a temp dir
	Out           io.Writer // progress; default discard
}

func (o *Options) setDefaults(w *Workload) {
	if o.Runs <= 0 {
		o.Runs = 4
		if w.Dynamic() {
			o.Runs = 1
		}
	}
	if o.DataNodes <= 0 {
		o.DataNodes = 4
	}
	if o.MapSlots <= 0 {
		o.MapSlots = 2
	}
	switch {
	case o.PageCache == 0:
		o.PageCache = DefaultPageCache
	case o.PageCache < 0:
		o.PageCache = 0
	}
	if o.CacheCapacity <= 0 {
		o.CacheCapacity = 200 << 20
	}
	if o.BlockSize <= 0 {
		o.BlockSize = 16 << 20
	}
	if o.Replication <= 0 {
		o.Replication = min(2, o.DataNodes)
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
}

// MaxRunningMaps is an app's share of the cluster's map slots, at least
// one: the paper gives each of the four apps 25% of the cluster.
func MaxRunningMaps(share float64, nodes, slotsPerNode int) int {
	return max(1, int(share*float64(nodes*slotsPerNode)))
}

// Run runs w under every combination, interleaved: a fresh cluster per
// combination (so no cache or page-cache state carries over), all started
// first, inputs generated and DL-NR's directives added and waited for;
// then opts.Runs rounds, each running the workload once on every
// combination's cluster, forward in even rounds and backward in odd ones
// (ab.RoundOrder, `bench ab`'s A B B A), so that a drift of the loaded
// machine hits every combination alike and each app's ratio to no cache
// is taken within a round.
func Run(ctx context.Context, w *Workload, opts Options) (*Result, error) {
	opts.setDefaults(w)
	for name, a := range opts.Affinity {
		for i := range w.Apps {
			if w.Apps[i].App == name {
				w.Apps[i].Affinity = a
			}
		}
		for u := range w.Users {
			for i := range w.Users[u].Apps {
				if w.Users[u].Apps[i].App == name {
					w.Users[u].Apps[i].Affinity = a
				}
			}
		}
	}
	if opts.Home != "" {
		// A missing parent failed every combination's MkdirTemp, each
		// logged and the run still "done"; say it once, before any cluster.
		if fi, err := os.Stat(opts.Home); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("--home %s: no such directory", opts.Home)
		} else if err != nil {
			return nil, fmt.Errorf("--home %w", err)
		} else if !fi.IsDir() {
			return nil, fmt.Errorf("--home %s: not a directory", opts.Home)
		}
	}
	res := &Result{Workload: w.Name, Labels: w.Labels(), Combos: make([]ComboResult, len(opts.Combos))}
	var live []*comboRun
	defer func() {
		for _, r := range live {
			r.stop()
		}
	}()
	for i, c := range opts.Combos {
		res.Combos[i] = ComboResult{Combo: c}
		r := &comboRun{cr: &res.Combos[i]}
		r.logf = func(f string, a ...any) { fmt.Fprintf(opts.Out, "[%s] "+f+"\n", append([]any{c.Name}, a...)...) }
		if err := r.prepare(ctx, w, c, opts); err != nil {
			r.cr.Error = err.Error()
			r.logf("failed: %v", err)
		} else {
			live = append(live, r)
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
	}
	for run := range opts.Runs {
		for _, i := range ab.RoundOrder(len(live), run) {
			r := live[i]
			if r.cr.Error != "" {
				continue // failed in an earlier round
			}
			if err := r.round(ctx, w, opts, run); err != nil {
				r.cr.Error = err.Error()
				r.logf("failed: %v", err)
			}
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
		}
	}
	var failed []string
	for _, cr := range res.Combos {
		if cr.Error != "" {
			failed = append(failed, cr.Combo.Name+": "+cr.Error)
		}
	}
	if len(failed) > 0 {
		// The table still shows what ran; the exit status must not say
		// a comparison with missing columns succeeded.
		return res, fmt.Errorf("%d of %d combinations failed:\n  %s", len(failed), len(opts.Combos), strings.Join(failed, "\n  "))
	}
	return res, nil
}

// env is one combination's running cluster.
type env struct {
	fs   *client.FileSystem
	jc   *jobclient.Client
	reg  *mapreduce.Registry
	home string
}

// comboRun is one combination's cluster, kept up across the rounds.
type comboRun struct {
	cr    *ComboResult
	e     *env
	stop  func()
	paths map[string]string
	logf  func(string, ...any)
}

// prepare starts the combination's cluster, generates the inputs and, for
// DL-NR, adds the directives. On failure nothing is left running.
func (r *comboRun) prepare(ctx context.Context, w *Workload, c Combo, opts Options) error {
	e, stop, err := startCluster(ctx, c, opts, r.logf)
	if err != nil {
		return err
	}
	if r.paths, err = ensureInputs(ctx, e.jc, w, "/workload/inputs", opts.DataNodes, r.logf); err == nil && c.Pin {
		err = pinInputs(ctx, cacheAdmin{e.fs.Namenode()}, w, r.paths, r.logf)
	}
	if err != nil {
		stop()
		return err
	}
	r.e, r.stop = e, stop
	return nil
}

// round runs the workload once (round run) on the combination's cluster.
func (r *comboRun) round(ctx context.Context, w *Workload, opts Options, run int) error {
	admin := cacheAdmin{r.e.fs.Namenode()}
	maxMaps := MaxRunningMaps(w.Share, opts.DataNodes, opts.MapSlots)
	h0, m0, _ := cacheCounters(ctx, admin)
	stopSampling := sample(ctx, admin, run, &r.cr.Samples)
	var got []AppRun
	if w.Dynamic() {
		got = runDynamic(ctx, w, r.e, r.paths, maxMaps, run)
	} else {
		got = runStatic(ctx, w, r.e, r.paths, maxMaps, run)
	}
	stopSampling()
	h1, m1, aff := cacheCounters(ctx, admin)
	r.cr.Hits, r.cr.Misses = append(r.cr.Hits, h1-h0), append(r.cr.Misses, m1-m0)
	r.cr.Affinity = append(r.cr.Affinity, aff)
	for _, a := range got {
		r.logf("run %d %-12s %7.1fs  maps %d, cache-local %d, data-local %d %s", run, a.Label, a.Seconds, a.Maps, a.CacheLocal, a.DataLocal, a.Error)
	}
	if len(aff) > 0 {
		r.logf("run %d learned affinity: %s", run, affinityText(aff))
	}
	r.cr.Apps = append(r.cr.Apps, got...)
	return ctx.Err()
}

func startCluster(ctx context.Context, c Combo, opts Options, logf func(string, ...any)) (*env, func(), error) {
	parent := opts.Home
	if parent == "" {
		parent = os.TempDir()
	}
	home, err := os.MkdirTemp(parent, "smarth-workload-"+c.Name+"-")
	if err != nil {
		return nil, nil, err
	}
	rm := map[string]any{}
	if opts.CacheSkips > 0 {
		rm["cache_skips"] = opts.CacheSkips
	}
	copts := cluster.Options{Home: home, Binary: opts.Binary, DataNodes: opts.DataNodes, NodeManagers: true,
		Replication: opts.Replication, BlockSize: opts.BlockSize, NameNodeRPC: "127.0.0.1:0", NameNodeHTTP: "127.0.0.1:0",
		Cache: cluster.CacheOptions{CacheCapacity: opts.CacheCapacity, CachePolicy: c.Policy, Scheduler: c.Scheduler,
			DropBehind: true, PageCache: opts.PageCache, DiskReadRate: opts.DiskReadRate, Affinity: opts.Affinity},
		NameNode: c.nameNodeConfig(), ResourceManager: rm, NodeManager: map[string]any{"map_slots": opts.MapSlots}}
	logf("starting %d datanodes, cache %s each, policy %s, scheduler %s in %s", opts.DataNodes, units.FormatSizeExact(opts.CacheCapacity), c.Policy, c.Scheduler, home)
	st, err := cluster.Up(ctx, copts)
	if err != nil {
		os.RemoveAll(home)
		return nil, nil, fmt.Errorf("start the cluster: %w", err)
	}
	down := func() {
		cluster.Down(home, 10*time.Second)
		os.RemoveAll(home)
	}
	sec, err := st.Security()
	if err != nil {
		down()
		return nil, nil, err
	}
	fs, err := client.New(client.Config{NameNode: st.NameNode, TokenFile: sec.TokenFile, TLS: sec.TLS})
	if err != nil {
		down()
		return nil, nil, err
	}
	reg := mapreduce.NewRegistry(apps.AllWith(apps.Options{Out: io.Discard})...)
	jc, err := jobclient.New(jobclient.Config{ResourceManager: st.ResourceManager, FS: mapreduce.DFS(fs), Registry: reg, TokenFile: sec.TokenFile, TLS: sec.TLS})
	if err != nil {
		fs.Close()
		down()
		return nil, nil, err
	}
	return &env{fs: fs, jc: jc, reg: reg, home: home}, func() { jc.Close(); fs.Close(); down() }, nil
}

// pinInputs is DL-NR's preparation: a directive on every input, added
// before the runs. The whole working set does not fit, so the wait ends
// when the cache stops growing rather than when all is cached.
func pinInputs(ctx context.Context, admin cacheAdmin, w *Workload, paths map[string]string, logf func(string, ...any)) error {
	for _, name := range sortedKeys(paths) {
		if _, err := admin.Pin(ctx, paths[name]); err != nil {
			return err
		}
	}
	var last int64 = -1
	return poll(ctx, 5*time.Minute, func() (bool, error) {
		st, err := admin.Stats(ctx)
		if err != nil {
			return false, err
		}
		var used int64
		for _, n := range st.GetNodes() {
			used += n.GetUsed()
		}
		settled := used == last && used > 0
		if settled {
			logf("directives added; %s cached before the runs", units.FormatSize(used))
		}
		last = used
		return settled, nil
	})
}

// cacheCounters reads the namenode's cumulative hits and misses and its
// learned affinity estimates (the caller's own apps).
func cacheCounters(ctx context.Context, admin cacheAdmin) (hits, misses int64, aff []LearnedAffinity) {
	st, err := admin.Stats(ctx)
	if err != nil {
		return 0, 0, nil
	}
	for _, e := range st.GetAffinityEstimates() {
		aff = append(aff, LearnedAffinity{App: e.GetApp(), Affinity: e.GetAffinity(), Hot: e.GetHotSamples(), Cold: e.GetColdSamples(), Used: e.GetUsed()})
	}
	return st.GetHits(), st.GetMisses(), aff
}

// affinityText is "grep 0.91 (hot 12, cold 20), wordcount 0.40 (hot 2,
// cold 30, not used yet)": an estimate the cache does not use yet says so.
func affinityText(aff []LearnedAffinity) string {
	parts := make([]string, 0, len(aff))
	for _, a := range aff {
		s := fmt.Sprintf("%s %.2f (hot %d, cold %d", a.App, a.Affinity, a.Hot, a.Cold)
		if !a.Used {
			s += ", not used yet"
		}
		parts = append(parts, s+")")
	}
	return strings.Join(parts, ", ")
}

// sample polls the namenode's cache stats every second for the cached
// blocks per app (Fig. 13/14) until the returned stop is called.
func sample(ctx context.Context, admin cacheAdmin, run int, into *[]Sample) func() {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	start := time.Now()
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			if st, err := admin.Stats(ctx); err == nil {
				s := Sample{Run: run, T: time.Since(start).Seconds(), Blocks: map[string]int64{}, Hits: st.GetHits(), Misses: st.GetMisses()}
				for _, a := range st.GetApps() {
					s.Blocks[appOf(a.GetApp())] += a.GetCachedBlocks()
				}
				*into = append(*into, s)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}

// appOf names a stage job by its app: grep.count and kmeans.iter count
// for grep and kmeans.
func appOf(job string) string {
	app, _, _ := strings.Cut(job, ".")
	return app
}

// runStatic submits every app at once and waits for all of them.
func runStatic(ctx context.Context, w *Workload, e *env, paths map[string]string, maxMaps, run int) []AppRun {
	out := make([]AppRun, len(w.Apps))
	var wg sync.WaitGroup
	for i, a := range w.Apps {
		wg.Go(func() {
			p := appParams(a, paths[a.Input], fmt.Sprintf("/workload/out/%d/%s", run, a.Label), maxMaps)
			out[i] = runApp(ctx, e.jc, e.reg, a, p)
			out[i].Run = run
		})
	}
	wg.Wait()
	return out
}

// runDynamic runs each user's loop for w.Duration: one app at a time, in
// turn, the next one Every after the previous start or when it ends.
// An app's first completion counts as cold (Run 0), the later ones warm.
func runDynamic(ctx context.Context, w *Workload, e *env, paths map[string]string, maxMaps, run int) []AppRun {
	var mu sync.Mutex
	var out []AppRun
	seen := map[string]bool{}
	start := time.Now()
	end := start.Add(w.Duration)
	var wg sync.WaitGroup
	for _, u := range w.Users {
		wg.Go(func() {
			for n := 0; time.Now().Before(end) && ctx.Err() == nil; n++ {
				a := u.Apps[n%len(u.Apps)]
				t0 := time.Now()
				p := appParams(a, paths[a.Input], fmt.Sprintf("/workload/out/%d/%s-%s-%d", run, u.Name, a.Label, n), maxMaps)
				ar := runApp(ctx, e.jc, e.reg, a, p)
				ar.StartS = t0.Sub(start).Seconds()
				mu.Lock()
				ar.Run = run + 1
				if !seen[a.Label] {
					ar.Run, seen[a.Label] = run, true
				}
				out = append(out, ar)
				mu.Unlock()
				if d := time.Until(t0.Add(u.Every)); d > 0 && time.Now().Add(d).Before(end) {
					select {
					case <-ctx.Done():
					case <-time.After(d):
					}
				}
			}
		})
	}
	wg.Wait()
	return out
}
