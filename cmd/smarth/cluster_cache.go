package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"smarth/internal/cluster"
	"smarth/internal/daemonconf"
	"smarth/internal/testbed/topo"
	"smarth/internal/units"
)

// clusterCacheFlags are `smarth cluster up`'s seed 003 switches: the block
// cache, the cache policy, the scheduler, drop-behind and a disk cap.
type clusterCacheFlags struct {
	capacity, policy, scheduler, diskRead string
	pageCache                             string
	dropBehind                            bool
	cacheSkips                            int
}

func (c *clusterCacheFlags) add(f *pflag.FlagSet) {
	f.StringVar(&c.capacity, "cache-capacity", "", "in-memory block cache per datanode, e.g. 256MiB (default: the datanode's)")
	f.StringVar(&c.policy, "cache-policy", "", "namenode cache policy: "+strings.Join(daemonconf.CachePolicies(), "|")+" (default: the namenode's)")
	f.StringVar(&c.scheduler, "scheduler", "", "resource manager scheduler: "+strings.Join(daemonconf.Schedulers(), "|")+" (default: the resource manager's)")
	f.IntVar(&c.cacheSkips, "cache-skips", 0, "the cachelocal scheduler's C, skips for cache locality (default: the resource manager's, 3)")
	f.StringVar(&c.diskRead, "disk-read-rate", "", "cap each datanode's disk reads, e.g. 40MB/s (blkio/io cgroup; needs root)")
	f.StringVar(&c.pageCache, "page-cache", "", "with drop-behind, bytes of recently read blocks each datanode keeps in the page cache, e.g. 128MiB (default 0: drop every read at once)")
	f.BoolVar(&c.dropBehind, "drop-behind", false, "datanodes drop read and written blocks from the page cache, so uncached reads hit the disk (default: on when --cache-policy is given)")
}

// apply checks the flags (usage errors name the flag) and fills opts.
func (c *clusterCacheFlags) apply(cmd *cobra.Command, opts *cluster.CacheOptions) error {
	if c.capacity != "" {
		n, err := units.ParseSize(c.capacity)
		if err != nil {
			return usageErr("--cache-capacity: %v", err)
		}
		opts.CacheCapacity = n
	}
	if c.pageCache != "" {
		n, err := units.ParseSize(c.pageCache)
		if err != nil {
			return usageErr("--page-cache: %v", err)
		}
		opts.PageCache = n
	}
	if c.policy != "" {
		if err := daemonconf.CheckCachePolicy(c.policy); err != nil {
			return usageErr("--cache-policy: %v", err)
		}
		opts.CachePolicy = c.policy
	}
	if c.scheduler != "" {
		if err := daemonconf.CheckScheduler(c.scheduler); err != nil {
			return usageErr("--scheduler: %v", err)
		}
		opts.Scheduler = c.scheduler
	}
	if c.cacheSkips < 0 {
		return usageErr("--cache-skips must not be negative")
	}
	opts.CacheSkips = c.cacheSkips
	if c.diskRead != "" {
		r, err := topo.ParseByteRate(c.diskRead)
		if err != nil {
			return usageErr("--disk-read-rate: %v", err)
		}
		opts.DiskReadRate = int64(r)
	}
	// Comparing cache policies is only fair when the no-cache baseline
	// reads the disk too, so drop-behind follows --cache-policy unless
	// it is set explicitly.
	opts.DropBehind = c.dropBehind
	if !cmd.Flags().Changed("drop-behind") && c.policy != "" {
		opts.DropBehind = true
	}
	return nil
}
