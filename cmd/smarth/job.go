package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/mapreduce/jobclient"
	"smarth/internal/rpc/mrpb"
	"smarth/internal/units"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newJobCmd()} })

type jobFlags struct{ rm, nn string }

func (f *jobFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.rm, "resourcemanager", "", "resource manager host:port (default: $SMARTH_RESOURCEMANAGER, the local cluster, 127.0.0.1:8032)")
	fs.StringVar(&f.nn, "namenode", "", "namenode host:port (default: $SMARTH_NAMENODE, the local cluster, 127.0.0.1:8020)")
}

// client connects to the cluster; the DFS client only when withFS.
func (f *jobFlags) client(reg *mapreduce.Registry, withFS bool, progress func(*mrpb.JobStatus)) (*jobclient.Client, func(), error) {
	rm, nn := f.rm, f.nn
	if rm == "" {
		rm = cluster.DefaultResourceManager()
	}
	if nn == "" {
		nn = cluster.DefaultNameNode()
	}
	tokenFile, tlsCfg, err := jobSecurity(nn)
	if err != nil {
		return nil, nil, err
	}
	cfg := jobclient.Config{ResourceManager: rm, Registry: reg, Progress: progress, TokenFile: tokenFile, TLS: tlsCfg}
	closeFS := func() {}
	if withFS {
		dfs, err := newClient(client.Config{NameNode: nn})
		if err != nil {
			return nil, nil, fmt.Errorf("namenode %s: %w", nn, err)
		}
		cfg.FS, closeFS = mapreduce.DFS(dfs), func() { dfs.Close() }
	}
	jc, err := jobclient.New(cfg)
	if err != nil {
		closeFS()
		return nil, nil, err
	}
	return jc, func() { jc.Close(); closeFS() }, nil
}

func newJobCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "job",
		Short: "Run and manage MapReduce jobs",
		Example: `  smarth job apps
  smarth job run wordcount --input /data/text --output /out/wc --reduces 2
  smarth job run --detach wordcount --input /data/text --output /out/wc2
  smarth job list --state RUNNING
  smarth job status job_20250101120000_0001
  smarth job logs job_20250101120000_0001 m_000000
  smarth job kill job_20250101120000_0001`,
	}
	c.AddCommand(newJobRunCmd(), newJobAppsCmd(), newJobListCmd(), newJobStatusCmd(), newJobKillCmd(), newJobAffinityCmd(), newJobLogsCmd(), newJobNodesCmd(), newJobRefreshNodesCmd())
	return c
}

func newJobAppsCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "apps",
		Short:   "List the built-in MapReduce applications",
		Example: "  smarth job apps",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			for _, a := range mrRegistry().Apps() {
				fmt.Fprintf(w, "%s\t%s\n", a.Name(), a.Description())
			}
			return w.Flush()
		},
	}
}

func newJobRunCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "run APP [app flags] [--param k=v]",
		Short: "Submit a job, follow it with a progress bar and print its counters",
		Example: `  smarth job run wordcount --input /data/text --output /out/wc
  smarth job run teragen --rows 10000000 --maps 4 --output /tera/in
  smarth job run terasort --input /tera/in --output /tera/out --reduces 2
  smarth job run pi --maps 4 --samples 1000000
  smarth job run --detach wordcount --input /data/text --output /out/wc   # prints the job ID and returns
  smarth job run streaming --files mapper.py --archives libs.zip#libs \
      --input /data/text --output /out/py --mapper 'python3 mapper.py' --reducer NONE
  smarth job run wordcount --help        # the app's own flags`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || args[0] == "--help" || args[0] == "-h" {
				return cmd.Help()
			}
			app, rest, err := splitJobArgs(hadoopJobArgs(args))
			if err != nil {
				return err
			}
			return runJob(cmd, app, rest)
		},
	}
}

// runFlags are the flags every app takes, whether given before the app's
// name or after it.
type runFlags struct {
	jobFlags
	params     []string
	noProgress bool
	detach     bool
	affinity   string
	files      []string
	archives   []string
}

func (rf *runFlags) add(fs *pflag.FlagSet) {
	rf.jobFlags.add(fs)
	fs.BoolVar(&rf.noProgress, "no-progress", false, "do not draw a progress bar")
	fs.BoolVar(&rf.detach, "detach", false, "submit, print the job ID and return (follow it with: smarth job status ID)")
	fs.StringArrayVar(&rf.params, "param", nil, "app parameter k=v (repeatable)")
	fs.StringVar(&rf.affinity, "cache-affinity", "", "the app's cache affinity in [0,1] sent with its cache accesses (default: the namenode's configured value)")
	fs.StringArrayVar(&rf.files, "files", nil, "local files to ship to every task's work directory, comma-separated, each as path[#name] (Hadoop's -files)")
	fs.StringArrayVar(&rf.archives, "archives", nil, "local archives (.zip .jar .tar .tar.gz .tgz) to unpack in every task's work directory, as path[#name] (Hadoop's -archives)")
}

// hadoopJobArgs accepts Hadoop's single-dash generic options of
// `hadoop jar`/streaming (-files, -archives) as their double-dash forms.
func hadoopJobArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		name, val, hasVal := strings.Cut(a, "=")
		switch name {
		case "-files", "-archives":
			a = "-" + name
			if hasVal {
				a += "=" + val
			}
		}
		out[i] = a
	}
	return out
}

// splitJobArgs finds the app's name in `job run`'s arguments: the common
// flags may come before it (`job run --detach wordcount --input ...`, as
// `hadoop jar` takes its generic options first), the app's own flags only
// after it. It returns the name and every other argument, in order.
func splitJobArgs(args []string) (app string, rest []string, err error) {
	fs := pflag.NewFlagSet("job run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetInterspersed(false) // stop at the app's name
	var rf runFlags
	rf.add(fs)
	if err := fs.Parse(args); err != nil {
		return "", nil, usageErr("job run: %v (an app's own flags go after its name: smarth job run APP [app flags])", err)
	}
	if fs.NArg() == 0 {
		return "", nil, usageErr("job run: no app named (see `smarth job apps`)")
	}
	lead := args[:len(args)-fs.NArg()]
	lead = lead[:len(lead):len(lead)] // appending must not write into args
	return fs.Arg(0), append(lead, fs.Args()[1:]...), nil
}

// paramUsage makes a job parameter's error (missing --input, a bad
// number) a usage error, exit 2, as any other bad usage; other errors and
// nil pass through.
func paramUsage(err error) error {
	if pe := (*mapreduce.ParamError)(nil); errors.As(err, &pe) {
		return usageErr("%v", err)
	}
	return err
}

// runJob parses the app's own flags (from its Params) and the common ones,
// then runs it on the cluster.
func runJob(cmd *cobra.Command, appName string, args []string) error {
	out := cmd.OutOrStdout()
	reg := mapreduce.NewRegistry(apps.AllWith(apps.Options{Out: out})...)
	app, err := reg.Lookup(appName)
	if err != nil {
		return usageErr("%v (see `smarth job apps`)", err)
	}
	fs := pflag.NewFlagSet("job run "+appName, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var rf runFlags
	rf.add(fs)
	vals := map[string]*string{}
	for _, p := range app.Params() {
		vals[p.Name] = fs.String(p.Name, p.Default, p.Help)
	}
	// Only the app's own parameters become flags: --input, --output and
	// --reduces appear for the apps that take them (a map-only generator
	// has no --input or --reduces), so a flag an app would ignore is an
	// error instead.
	help := fs.BoolP("help", "h", false, "this help")
	if err := fs.Parse(args); err != nil {
		return usageErr("%s: %v\n%s", appName, err, fs.FlagUsages())
	}
	if *help {
		fmt.Fprintf(out, "%s: %s\n\nUsage: smarth job run %s [flags]\n\nFlags:\n%s", app.Name(), app.Description(), app.Name(), fs.FlagUsages())
		return nil
	}
	if fs.NArg() > 0 {
		return usageErr("%s: unexpected argument %q", appName, fs.Arg(0))
	}
	params := map[string]string{}
	for name, v := range vals {
		if f := fs.Lookup(name); f.Changed || *v != "" {
			params[name] = *v
		}
	}
	for _, kv := range rf.params {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageErr("--param %q: want k=v", kv)
		}
		params[k] = v
	}
	if rf.affinity != "" {
		if v, err := strconv.ParseFloat(rf.affinity, 64); err != nil || v < 0 || v > 1 {
			return usageErr("--cache-affinity %q: want a number between 0 and 1", rf.affinity)
		}
		params[mapreduce.ParamCacheAffinity] = rf.affinity
	}

	if rf.detach {
		return submitDetached(cmd, reg, rf, appName, params)
	}
	bar := newJobBar(cmd.ErrOrStderr(), rf.noProgress)
	bar.plain = !isTerminal(cmd.ErrOrStderr())
	// Each job's counters as it ends: a driver (grep, pi, pagerank) runs
	// several, and its own result has none.
	printed := map[string]bool{}
	progress := func(st *mrpb.JobStatus) {
		bar.update(st)
		if jobEnded(st.GetState()) && !printed[st.GetJobId()] {
			printed[st.GetJobId()] = true
			bar.finish()
			printCounters(out, jobclient.Result(st))
		}
	}
	jc, closeAll, err := rf.client(reg, true, progress)
	if err != nil {
		return err
	}
	defer closeAll()
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	staging, err := rf.ship(ctx, jc, params)
	if err != nil {
		return err
	}
	if staging != "" {
		// The job is over when Run returns (or was killed with ctx), as
		// Hadoop's application master removes its staging directory.
		defer jc.FS().Delete(context.WithoutCancel(ctx), staging, true)
	}
	start := time.Now()
	res, err := jc.Run(ctx, appName, params)
	bar.finish()
	if res != nil && len(res.Counters) > 0 && !printed[res.JobID] {
		printCounters(out, res)
		printed[res.JobID] = true
	}
	if err != nil {
		return paramUsage(err)
	}
	if !printed[res.JobID] { // a driver's result; a job's was said once
		fmt.Fprintf(out, "%s %s in %.2fs\n", res.JobID, res.State, time.Since(start).Seconds())
	}
	return nil
}

// ship uploads the --files and --archives to a staging directory and
// adds the job parameters naming them; it returns the directory ("" when
// nothing is shipped).
func (rf *runFlags) ship(ctx context.Context, jc *jobclient.Client, params map[string]string) (string, error) {
	if len(rf.files) == 0 && len(rf.archives) == 0 {
		return "", nil
	}
	home := "/"
	if h, ok := jc.FS().(mapreduce.Homed); ok {
		home = h.Home()
	}
	add, staging, err := jobclient.Ship(ctx, jc.FS(), home, rf.files, rf.archives)
	if err != nil {
		return "", err
	}
	for k, v := range add {
		if old := params[k]; old != "" { // also given as --param
			v = old + "," + v
		}
		params[k] = v
	}
	return staging, nil
}

func jobEnded(state string) bool {
	return state == mapreduce.StateSucceeded || state == mapreduce.StateFailed || state == mapreduce.StateKilled
}

// isTerminal says whether w is a terminal, where a progress bar may redraw
// itself; in a log it would leave a carriage-return smear.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// jobBar shows a job's progress: on a terminal a bar of tasks done with
// maps, reduces and bytes read; elsewhere (a log, a pipe) plain lines as
// Hadoop's job client writes them, " map 50% reduce 0%", when the
// percentages change and at most every plainEvery, and the outcome once.
type jobBar struct {
	w     io.Writer
	off   bool
	plain bool
	bar   *progressbar.ProgressBar
	job   string

	lastLine string
	lastAt   time.Time
	state    string
}

const plainEvery = 5 * time.Second

func newJobBar(w io.Writer, off bool) *jobBar { return &jobBar{w: w, off: off} }

func (b *jobBar) update(st *mrpb.JobStatus) {
	if b.off {
		return
	}
	if b.plain {
		b.line(st)
		return
	}
	total := int64(st.GetMapsTotal() + st.GetReducesTotal())
	if b.bar == nil || b.job != st.GetJobId() {
		b.finish()
		b.job = st.GetJobId()
		b.bar = progressbar.NewOptions64(max(total, 1), progressbar.OptionSetWriter(b.w),
			progressbar.OptionSetWidth(30), progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionSetPredictTime(false))
	}
	b.bar.Describe(fmt.Sprintf("%s maps %d/%d reduces %d/%d read %s", st.GetJobId(), st.GetMapsDone(), st.GetMapsTotal(),
		st.GetReducesDone(), st.GetReducesTotal(), units.FormatSize(st.GetBytesRead())))
	b.bar.Set64(int64(st.GetMapsDone() + st.GetReducesDone()))
}

// line writes Hadoop's plain progress lines for st.
func (b *jobBar) line(st *mrpb.JobStatus) {
	if st.GetJobId() != b.job {
		b.job, b.lastLine, b.state = st.GetJobId(), "", ""
		fmt.Fprintf(b.w, "Running job: %s\n", b.job)
	}
	pct := func(done, total int32) int {
		if total <= 0 {
			return 0 // a map-only job: Hadoop's "reduce 0%" throughout
		}
		return int(100 * int64(done) / int64(total))
	}
	l := fmt.Sprintf(" map %d%% reduce %d%%", pct(st.GetMapsDone(), st.GetMapsTotal()), pct(st.GetReducesDone(), st.GetReducesTotal()))
	ended := jobEnded(st.GetState())
	if l != b.lastLine && (ended || time.Since(b.lastAt) >= plainEvery || b.lastLine == "") {
		fmt.Fprintln(b.w, l)
		b.lastLine, b.lastAt = l, time.Now()
	}
	if ended && b.state == "" {
		b.state = st.GetState()
		if b.state == mapreduce.StateSucceeded {
			fmt.Fprintf(b.w, "Job %s completed successfully\n", b.job)
		} else {
			fmt.Fprintf(b.w, "Job %s failed with state %s\n", b.job, b.state)
		}
	}
}

// finish ends the bar at its last count; the terminal line is cleared.
func (b *jobBar) finish() {
	if b.bar != nil {
		b.bar.Finish()
		b.bar = nil
	}
}

func printCounters(w io.Writer, res *mapreduce.Result) {
	fmt.Fprintf(w, "Job %s %s", res.JobID, res.State)
	if res.Elapsed > 0 {
		fmt.Fprintf(w, " (%.2fs)", res.Elapsed.Seconds())
	}
	fmt.Fprintln(w)
	if res.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", res.Error)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	for _, g := range mapreduce.CounterGroups(res.Counters) {
		fmt.Fprintf(tw, "  %s\t\t\n", g)
		names := make([]string, 0, len(res.Counters[g]))
		for n := range res.Counters[g] {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(tw, "\t    %s=\t%d\t\n", n, res.Counters[g][n])
		}
	}
	tw.Flush()
}

func newJobListCmd() *cobra.Command {
	var jf jobFlags
	var states []string
	c := &cobra.Command{
		Use:   "list",
		Short: "List the jobs the resource manager knows, newest first",
		Long: `List your jobs (every job for an admin of the resource manager), newest first:
the running ones and the finished ones its job history keeps (history_dir, for
history_retention, 7 days by default), also after it restarted; a job that
was running when it stopped shows FAILED.`,
		Example: "  smarth job list\n  smarth job list --state RUNNING\n  smarth job list --state FAILED,KILLED",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			want, err := jobStates(states)
			if err != nil {
				return err
			}
			jc, closeAll, err := jf.client(nil, false, nil)
			if err != nil {
				return err
			}
			defer closeAll()
			jobs, err := jc.List(cmd.Context(), want...)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "JOB\tAPP\tUSER\tSTATE\tMAPS\tREDUCES\tELAPSED")
			for _, st := range jobs {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d/%d\t%d/%d\t%s\n", st.GetJobId(), st.GetApp(), st.GetUser(), st.GetState(),
					st.GetMapsDone(), st.GetMapsTotal(), st.GetReducesDone(), st.GetReducesTotal(), elapsed(st))
			}
			return w.Flush()
		},
	}
	jf.add(c.Flags())
	c.Flags().StringSliceVar(&states, "state", nil, "only jobs in these states: PENDING, RUNNING, SUCCEEDED, FAILED, KILLED (comma-separated or repeated)")
	return c
}

func elapsed(st *mrpb.JobStatus) string {
	end := st.GetFinishTimeMs()
	if end == 0 {
		end = time.Now().UnixMilli()
	}
	return (time.Duration(end-st.GetSubmitTimeMs()) * time.Millisecond).Round(time.Millisecond).String()
}

func newJobStatusCmd() *cobra.Command {
	var jf jobFlags
	c := &cobra.Command{
		Use:   "status JOB_ID",
		Short: "Show a job's state, progress and counters",
		Long: `Show a job's state, progress, counters, diagnostics and every task attempt with
the node it ran on. A finished job is read from the resource manager's job
history (history_dir), so it answers after a restart until history_retention
(7 days by default) removes it; only the job's owner and the resource
manager's admins may see it.`,
		Example: "  smarth job status job_20250101120000_0001",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("status takes one job ID")
			}
			jc, closeAll, err := jf.client(nil, false, nil)
			if err != nil {
				return err
			}
			defer closeAll()
			st, err := jc.Status(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "job %s (%s, user %s): %s, maps %d/%d, reduces %d/%d, read %s, elapsed %s\n", st.GetJobId(),
				st.GetApp(), st.GetUser(), st.GetState(), st.GetMapsDone(), st.GetMapsTotal(), st.GetReducesDone(),
				st.GetReducesTotal(), units.FormatSize(st.GetBytesRead()), elapsed(st))
			printJobTimes(w, st)
			printLocality(w, st)
			printTasks(w, st)
			printCounters(w, jobclient.Result(st))
			return nil
		},
	}
	jf.add(c.Flags())
	return c
}

// printLocality shows the job's launched maps by locality level (seed
// 003). DATA_LOCAL_MAPS counts cache-local maps too (they are node-local),
// so "node-local" here is node-local without the block in memory.
func printLocality(w io.Writer, st *mrpb.JobStatus) {
	c := map[string]int64{}
	for _, x := range st.GetCounters() {
		if x.GetGroup() == mapreduce.GroupJob {
			c[x.GetName()] = x.GetValue()
		}
	}
	cache := c[mapreduce.CacheLocalMaps]
	fmt.Fprintf(w, "maps by locality: cache-local %d, node-local %d, rack-local %d, off-rack %d; input cached (R_j) %.0f%%\n",
		cache, c[mapreduce.DataLocalMaps]-cache, c[mapreduce.RackLocalMaps], c[mapreduce.OtherLocalMaps],
		100*st.GetCachedFraction())
}

func newJobKillCmd() *cobra.Command {
	var jf jobFlags
	c := &cobra.Command{
		Use:     "kill JOB_ID",
		Short:   "Kill a running job (its output is removed)",
		Example: "  smarth job kill job_20250101120000_0001",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("kill takes one job ID")
			}
			jc, closeAll, err := jf.client(nil, false, nil)
			if err != nil {
				return err
			}
			defer closeAll()
			if err := jc.Kill(cmd.Context(), args[0]); err != nil {
				return err
			}
			// The job is KILLED once its attempts have stopped and its
			// staging directory is gone: say so only then.
			st, err := waitEnded(cmd.Context(), jc, args[0], killWait)
			if err != nil {
				return err
			}
			if st.GetState() != mapreduce.StateKilled {
				fmt.Fprintf(cmd.OutOrStdout(), "kill of %s requested; it is still %s after %v (its attempts are stopping)\n",
					args[0], st.GetState(), killWait)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "killed %s\n", args[0])
			return nil
		},
	}
	jf.add(c.Flags())
	return c
}

// killWait bounds how long `job kill` waits for the job to end.
const killWait = 30 * time.Second

// waitEnded polls a job until it is over or wait has passed, and returns
// its last status.
func waitEnded(ctx context.Context, jc *jobclient.Client, id string, wait time.Duration) (*mrpb.JobStatus, error) {
	deadline := time.Now().Add(wait)
	for {
		st, err := jc.Status(ctx, id)
		if err != nil {
			return nil, err
		}
		switch st.GetState() {
		case mapreduce.StateSucceeded, mapreduce.StateFailed, mapreduce.StateKilled:
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(100 * time.Millisecond): // poll interval of the job's status
		}
	}
}
