package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"smarth/internal/bench/workload"
	"smarth/internal/testbed/topo"
	"smarth/internal/units"
)

var _ = addBenchSubcommand(newBenchWorkloadCmd)

func newBenchWorkloadCmd() *cobra.Command {
	var (
		opts                       workload.Options
		combos, capacity, diskRate string
		pageCache                  string
		blockSize, affinity        string
		jsonOut, plotOut           string
	)
	c := &cobra.Command{
		Use:   "workload FILE|W1..W7|dynamic",
		Short: "Run a seed 003 workload under each cache policy combination and print normalized runtimes",
		Long: `Runs a workload of seed 003 (Table 3's W1-W7, or the dynamic workload of section
5.5) under each policy combination, each on its own fresh local cluster, all started
first and then run interleaved round by round (forward, then backward: bench ab's
A B B A), so that a drift of the machine hits every combination alike:
  nocache  cache policy none,   scheduler delay        (baseline)
  dlnr     cache policy pinned, scheduler delay        (directives on every input)
  cllru    cache policy lru,    scheduler cachelocal
  clca     cache policy ca,     scheduler cachelocal
  clbg     cache policy bg,     scheduler cachelocal (affinities learned online)
  clbgtable cache policy bg,    scheduler cachelocal (Table 1's or --affinity, as the paper)
Drop-behind is on for all of them, so uncached reads reach the disk. The workload
runs --runs rounds; the first is reported as cold, the others as warm, normalized
to nocache, and each app's ratio to nocache is taken within each warm round and
given as a geometric mean with a 95% interval over the rounds (a failed app run
counts in "failed runs" and pairs nothing). Each app asks for a 25% share of the map slots with the
job parameter max_running_maps, which the resource manager's scheduler enforces.
Workload files are documented in internal/bench/workload (package doc); the shipped
ones are testbed/workloads/*.yaml.`,
		Example: `  smarth bench workload w1 --policies nocache,dlnr,cllru,clca,clbg --runs 4 --plot w1.svg
  sudo smarth bench workload w5 --disk-read-rate 40MB/s --json w5.json
  smarth bench workload dynamic --policies nocache,clca,clbg --runs 1 --plot dynamic.svg
  smarth bench workload w1 --policies clbg --cache-skips 1 --json c1.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, _ := os.Getwd()
			file, err := workload.Find(args[0], dir)
			if err != nil {
				return usageErr("%v", err)
			}
			w, err := workload.Load(file)
			if err != nil {
				return usageErr("%v", err)
			}
			if opts.Combos, err = workload.ParseCombos(combos); err != nil {
				return usageErr("--policies: %v", err)
			}
			if err := parseWorkloadSizes(&opts, capacity, blockSize, diskRate, pageCache, affinity); err != nil {
				return err
			}
			opts.Out = cmd.ErrOrStderr()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := workload.Run(ctx, w, opts)
			if res != nil {
				res.PrintTable(cmd.OutOrStdout())
				if jsonOut != "" {
					if jerr := res.WriteJSON(jsonOut); jerr != nil {
						return jerr
					}
				}
				if plotOut != "" {
					if perr := res.Plot(plotOut); perr != nil {
						return perr
					}
					fmt.Fprintf(cmd.OutOrStdout(), "plot: %s\n", plotOut)
				}
			}
			return err
		},
	}
	f := c.Flags()
	f.StringVar(&combos, "policies", "nocache,dlnr,cllru,clca,clbg", "policy combinations to compare, in order")
	f.IntVar(&opts.Runs, "runs", 0, "interleaved rounds per combination; the first is the cold one (default 4, dynamic 1)")
	f.IntVar(&opts.DataNodes, "datanodes", 4, "datanodes (and node managers) of each cluster")
	f.IntVar(&opts.MapSlots, "map-slots", 2, "map slots per node manager")
	f.StringVar(&capacity, "cache-capacity", "200MiB", "block cache per datanode")
	f.StringVar(&blockSize, "block-size", "16MiB", "block size of the inputs")
	f.IntVar(&opts.Replication, "replication", 2, "replication of the inputs")
	f.StringVar(&pageCache, "page-cache", "128MiB", "recently read bytes each datanode keeps in the page cache (0: drop every read at once)")
	f.StringVar(&diskRate, "disk-read-rate", "", "cap each datanode's disk reads, e.g. 40MB/s (needs root and a blkio/io cgroup)")
	f.IntVar(&opts.CacheSkips, "cache-skips", 0, "the cache-local scheduler's C (default: the resource manager's, 3); Fig. 10 runs 1, 3, 5")
	f.StringVar(&affinity, "affinity", "", "cache affinity per app, e.g. grep=0.6,wordcount=0.1 (default: Table 1's)")
	f.StringVar(&opts.Home, "home", "", "where the per-combination cluster homes go (default the temp dir)")
	f.StringVar(&jsonOut, "json", "", "save every run, the cache samples and the table as JSON")
	f.StringVar(&plotOut, "plot", "", "draw normalized runtimes (.svg/.png) and, beside it, cached blocks per app over time")
	return c
}

func parseWorkloadSizes(opts *workload.Options, capacity, blockSize, diskRate, pageCache, affinity string) error {
	var err error
	if opts.PageCache, err = units.ParseSize(pageCache); err != nil {
		return usageErr("--page-cache: %v", err)
	}
	if opts.PageCache == 0 {
		opts.PageCache = -1 // the flag's 0 means none; the options' 0 means the default
	}
	if opts.CacheCapacity, err = units.ParseSize(capacity); err != nil {
		return usageErr("--cache-capacity: %v", err)
	}
	if opts.BlockSize, err = units.ParseSize(blockSize); err != nil {
		return usageErr("--block-size: %v", err)
	}
	if diskRate != "" {
		r, err := topo.ParseByteRate(diskRate)
		if err != nil {
			return usageErr("--disk-read-rate: %v", err)
		}
		opts.DiskReadRate = int64(r)
	}
	if affinity != "" {
		opts.Affinity = map[string]float64{}
		for _, kv := range strings.Split(affinity, ",") {
			k, v, ok := strings.Cut(kv, "=")
			a, err := strconv.ParseFloat(v, 64)
			if !ok || err != nil || a < 0 || a > 1 {
				return usageErr("--affinity %q: want app=value with a value in 0..1", kv)
			}
			opts.Affinity[strings.TrimSpace(k)] = a
		}
	}
	if opts.DataNodes < 1 || opts.MapSlots < 1 {
		return usageErr("--datanodes and --map-slots must be at least 1")
	}
	return nil
}
