package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/units"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newCacheCmd()} })

// cacheFlags are the flags every `smarth cache` command shares.
type cacheFlags struct {
	namenode string
	user     string
}

// run wraps a command body with a client of the namenode.
func (f *cacheFlags) run(body func(ctx context.Context, fs *client.FileSystem, w io.Writer, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		nn := f.namenode
		if nn == "" {
			nn = cluster.DefaultNameNode()
		}
		fs, err := newClient(client.Config{NameNode: nn, User: f.user})
		if err != nil {
			return err
		}
		defer fs.Close()
		return body(cmd.Context(), fs, cmd.OutOrStdout(), args)
	}
}

func newCacheCmd() *cobra.Command {
	f := &cacheFlags{}
	c := &cobra.Command{
		Use:   "cache",
		Short: "Manage in-memory caching, like `hdfs cacheadmin`: pools, directives, stats",
		Long: `Manage the namenode's in-memory block cache. Pools group directives; a
directive pins a path (a file, or the files directly in a directory) in
datanode memory when the namenode runs cache_policy "pinned". "stats" shows
what every policy cached: per datanode, per application, hits, misses,
evictions and the running jobs' cached input fraction R_j.

The namenode is --namenode, else $SMARTH_NAMENODE, else the local cluster
started by "smarth cluster up", else 127.0.0.1:8020.
Exit status: 0 success, 1 failure, 2 bad usage.`,
		Example: `  smarth cache addPool hot --limit 4G
  smarth cache addDirective --path /data/grep-input --pool hot --replication 2
  smarth cache listDirectives --stats
  smarth cache stats`,
	}
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr("%v", err) })
	c.PersistentFlags().StringVar(&f.namenode, "namenode", "", "namenode HOST:PORT (default $SMARTH_NAMENODE, the local cluster, or 127.0.0.1:8020)")
	c.PersistentFlags().StringVar(&f.user, "user", "", "act as this user (default: the OS user)")
	c.AddCommand(cacheAddPoolCmd(f), cacheListPoolsCmd(f), cacheRemovePoolCmd(f),
		cacheAddDirectiveCmd(f), cacheListDirectivesCmd(f), cacheRemoveDirectiveCmd(f), cacheStatsCmd(f))
	for _, sub := range c.Commands() {
		sub.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr("%v", err) })
	}
	return c
}

func cacheAddPoolCmd(f *cacheFlags) *cobra.Command {
	var p client.CachePool
	var mode, limit string
	c := &cobra.Command{
		Use:     "addPool NAME [--owner O] [--group G] [--mode 0755] [--limit SIZE]",
		Short:   "Add a cache pool (superusers only)",
		Example: "  smarth cache addPool hot --owner etl --mode 0775 --limit 8G",
		Args:    exactArgs(1),
		RunE: f.run(func(ctx context.Context, fs *client.FileSystem, w io.Writer, args []string) error {
			p.Name = args[0]
			if mode != "" {
				m, err := strconv.ParseUint(mode, 8, 32)
				if err != nil || m > 0o777 {
					return usageErr("addPool: --mode %q is not an octal permission like 0755", mode)
				}
				p.Mode = uint32(m)
			}
			if limit != "" {
				n, err := units.ParseSize(limit)
				if err != nil {
					return usageErr("addPool: --limit %q: %v", limit, err)
				}
				p.Limit = n
			}
			if err := fs.AddCachePool(ctx, p); err != nil {
				return err
			}
			fmt.Fprintf(w, "Successfully added cache pool %s.\n", p.Name)
			return nil
		}),
	}
	c.Flags().StringVar(&p.Owner, "owner", "", "owner of the pool (default: you)")
	c.Flags().StringVar(&p.Group, "group", "", "group of the pool (default: your primary group)")
	c.Flags().StringVar(&mode, "mode", "", "octal mode; write lets users add directives (default 0755)")
	c.Flags().StringVar(&limit, "limit", "", "bytes the pool's directives may pin, e.g. 4G (default unlimited)")
	return c
}

func cacheRemovePoolCmd(f *cacheFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "removePool NAME",
		Short:   "Remove a cache pool and its directives (superusers only)",
		Example: "  smarth cache removePool hot",
		Args:    exactArgs(1),
		RunE: f.run(func(ctx context.Context, fs *client.FileSystem, w io.Writer, args []string) error {
			if err := fs.RemoveCachePool(ctx, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(w, "Successfully removed cache pool %s.\n", args[0])
			return nil
		}),
	}
}

func cacheListPoolsCmd(f *cacheFlags) *cobra.Command {
	var stats bool
	c := &cobra.Command{
		Use:     "listPools [--stats]",
		Short:   "List the cache pools",
		Example: "  smarth cache listPools --stats",
		Args:    exactArgs(0),
		RunE: f.run(func(ctx context.Context, fs *client.FileSystem, w io.Writer, _ []string) error {
			pools, err := fs.ListCachePools(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "Found %d result(s).\n", len(pools))
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprint(tw, "NAME\tOWNER\tGROUP\tMODE\tLIMIT")
			if stats {
				fmt.Fprint(tw, "\tBYTES_NEEDED\tBYTES_CACHED\tFILES")
			}
			fmt.Fprintln(tw)
			for _, p := range pools {
				lim := "unlimited"
				if p.Limit > 0 {
					lim = units.FormatSize(p.Limit)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%#o\t%s", p.Name, p.Owner, p.Group, p.Mode, lim)
				if stats {
					fmt.Fprintf(tw, "\t%s\t%s\t%d", units.FormatSize(p.BytesNeeded), units.FormatSize(p.BytesCached), p.Files)
				}
				fmt.Fprintln(tw)
			}
			return tw.Flush()
		}),
	}
	c.Flags().BoolVar(&stats, "stats", false, "show bytes needed, bytes cached and files")
	return c
}

func cacheAddDirectiveCmd(f *cacheFlags) *cobra.Command {
	var d client.CacheDirective
	c := &cobra.Command{
		Use:   "addDirective --path PATH --pool NAME [--replication N]",
		Short: "Pin a file, or the files directly in a directory, in datanode memory",
		Example: `  smarth cache addDirective --path /data/grep-input --pool hot
  smarth cache addDirective --path /data/pagerank/edges --pool hot --replication 3`,
		Args: exactArgs(0),
		RunE: f.run(func(ctx context.Context, fs *client.FileSystem, w io.Writer, _ []string) error {
			switch {
			case d.Path == "" || d.Pool == "":
				return usageErr("addDirective: --path and --pool are required")
			case d.Replication < 0:
				return usageErr("addDirective: --replication %d must be at least 1", d.Replication)
			}
			id, err := fs.AddCacheDirective(ctx, d)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "Added cache directive %d\n", id)
			return nil
		}),
	}
	c.Flags().StringVar(&d.Path, "path", "", "file or directory to cache")
	c.Flags().StringVar(&d.Pool, "pool", "", "pool the directive belongs to")
	c.Flags().IntVar(&d.Replication, "replication", 1, "cached copies of each block")
	return c
}

func cacheRemoveDirectiveCmd(f *cacheFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "removeDirective ID",
		Short:   "Remove a cache directive; its blocks are uncached",
		Example: "  smarth cache removeDirective 3",
		Args:    exactArgs(1),
		RunE: f.run(func(ctx context.Context, fs *client.FileSystem, w io.Writer, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id < 1 {
				return usageErr("removeDirective: %q is not a directive id (see listDirectives)", args[0])
			}
			if err := fs.RemoveCacheDirective(ctx, id); err != nil {
				return err
			}
			fmt.Fprintf(w, "Removed cache directive %d\n", id)
			return nil
		}),
	}
}

func cacheListDirectivesCmd(f *cacheFlags) *cobra.Command {
	var pool, path string
	var stats bool
	c := &cobra.Command{
		Use:   "listDirectives [--pool NAME] [--path PATH] [--stats]",
		Short: "List cache directives",
		Example: `  smarth cache listDirectives
  smarth cache listDirectives --pool hot --stats`,
		Args: exactArgs(0),
		RunE: f.run(func(ctx context.Context, fs *client.FileSystem, w io.Writer, _ []string) error {
			ds, err := fs.ListCacheDirectives(ctx, pool, path)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "Found %d entr%s\n", len(ds), map[bool]string{true: "y", false: "ies"}[len(ds) == 1])
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprint(tw, "ID\tPOOL\tREPL\tPATH")
			if stats {
				fmt.Fprint(tw, "\tBYTES_NEEDED\tBYTES_CACHED\tFILES")
			}
			fmt.Fprintln(tw)
			for _, d := range ds {
				fmt.Fprintf(tw, "%d\t%s\t%d\t%s", d.ID, d.Pool, d.Replication, d.Path)
				if stats {
					fmt.Fprintf(tw, "\t%s\t%s\t%d", units.FormatSize(d.BytesNeeded), units.FormatSize(d.BytesCached), d.Files)
				}
				fmt.Fprintln(tw)
			}
			return tw.Flush()
		}),
	}
	c.Flags().StringVar(&pool, "pool", "", "only this pool's directives")
	c.Flags().StringVar(&path, "path", "", "only directives for this path")
	c.Flags().BoolVar(&stats, "stats", false, "show bytes needed, bytes cached and files")
	return c
}

func cacheStatsCmd(f *cacheFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "stats",
		Short:   "Show the cache per datanode and per application, hits, misses, evictions and jobs' R_j",
		Example: "  smarth cache stats --namenode 10.0.0.1:8020",
		Args:    exactArgs(0),
		RunE: f.run(func(ctx context.Context, fs *client.FileSystem, w io.Writer, _ []string) error {
			st, err := fs.CacheStats(ctx)
			if err != nil {
				return err
			}
			printCacheStats(w, st)
			return nil
		}),
	}
}

func printCacheStats(w io.Writer, st *dfspb.GetCacheStatsResponse) {
	total := st.GetHits() + st.GetMisses()
	ratio := 0.0
	if total > 0 {
		ratio = 100 * float64(st.GetHits()) / float64(total)
	}
	fmt.Fprintf(w, "Cache policy %s: %d hits, %d misses (%.1f%% hit ratio), %d evictions\n\n",
		st.GetPolicy(), st.GetHits(), st.GetMisses(), ratio, st.GetEvictions())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DATANODE\tHOST\tCAPACITY\tUSED\tBLOCKS\tPENDING_CACHE\tPENDING_UNCACHE")
	for _, n := range st.GetNodes() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\n", n.GetDatanodeId(), n.GetHostname(), units.FormatSize(n.GetCapacity()),
			units.FormatSize(n.GetUsed()), n.GetBlocks(), n.GetPendingCache(), n.GetPendingUncache())
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "APP\tAFFINITY\tCACHED_BLOCKS\tCACHED_BYTES\tACCESSES\tHITS")
	for _, a := range st.GetApps() {
		fmt.Fprintf(tw, "%s\t%.3f\t%d\t%s\t%d\t%d\n", a.GetApp(), a.GetAffinity(), a.GetCachedBlocks(),
			units.FormatSize(a.GetCachedBytes()), a.GetAccesses(), a.GetHits())
	}
	tw.Flush()
	printAffinityEstimates(w, st)
	if len(st.GetJobs()) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tR_j\tCACHED_BLOCKS")
	for _, j := range st.GetJobs() {
		fmt.Fprintf(tw, "%s\t%.2f\t%d\n", j.GetJobId(), j.GetCachedFraction(), len(j.GetBlocks()))
	}
	tw.Flush()
}

// printAffinityEstimates lists the learned cache affinities (the caller's
// own; a service sees everyone's) and the reads behind each: an estimate
// steers the cache once it is "used" (3 hot and 3 cold reads in the
// window) and the source is learned.
func printAffinityEstimates(w io.Writer, st *dfspb.GetCacheStatsResponse) {
	fmt.Fprintf(w, "\nLearned cache affinity (source %s): CA = (cold - hot read time) / cold task time (1 - hot/cold read time without task times), medians over the window\n", st.GetAffinitySource())
	if len(st.GetAffinityEstimates()) == 0 {
		fmt.Fprintln(w, "no reads sampled yet")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "USER\tAPP\tESTIMATE\tN_HOT\tN_COLD\tHOT_MiB/s\tCOLD_MiB/s\tCOLD_TASK_MiB/s\tUSED")
	for _, e := range st.GetAffinityEstimates() {
		task := "-"
		if e.GetColdTaskSamples() > 0 {
			task = fmt.Sprintf("%.1f", e.GetColdTaskMibPerSec())
		}
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%d\t%d\t%.1f\t%.1f\t%s\t%v\n", e.GetUser(), e.GetApp(), e.GetAffinity(),
			e.GetHotSamples(), e.GetColdSamples(), e.GetHotMibPerSec(), e.GetColdMibPerSec(), task, e.GetUsed())
	}
	tw.Flush()
}
