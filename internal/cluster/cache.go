package cluster

import (
	"fmt"

	"smarth/internal/daemonconf"
)

// CacheOptions select the seed 003 baseline a cluster runs: the datanodes'
// block cache, the namenode's cache policy, the resource manager's
// scheduler and a disk that behaves like one. Zero values leave each
// daemon's own default, so a cluster started without them is the plain
// Hadoop-style one.
type CacheOptions struct {
	CacheCapacity int64  // bytes of block cache per datanode (cache_capacity)
	CachePolicy   string // namenode cache_policy: none, pinned, lru, ca, bg
	Scheduler     string // resource manager scheduler: fifo, delay, cachelocal
	CacheSkips    int    // cachelocal's C (cache_skips); 0 = the resource manager's default
	// Affinity is the namenode's configured cache affinity per app
	// (cache_affinity), used when a job does not carry its own.
	Affinity map[string]float64
	// DropBehind sets the datanodes' drop_cache_behind_reads and
	// drop_cache_behind_writes (HDFS's drop-behind), so that the page
	// cache does not hide the disk: an uncached block read really reads
	// the disk, and the no-cache baseline is not secretly cached by the
	// kernel. Cache experiments set it for every policy alike.
	DropBehind bool
	// PageCache is each datanode's page_cache_budget with DropBehind: how
	// many bytes of recently read blocks stay in the page cache (the page
	// cache a node with a memory budget keeps), so a block cached right
	// after a map read it does not cost a second disk read. 0 = the
	// datanode's default (every read dropped at once).
	PageCache int64
	// DiskReadRate caps each datanode's disk reads at this many bytes/s
	// with the blkio (v1) or io (v2) cgroup on the disk holding the
	// cluster home; 0 = no cap. It needs root and the controller, and Up
	// fails with the reason otherwise.
	DiskReadRate int64
}

// check refuses unknown names and impossible sizes before anything starts.
func (c *CacheOptions) check() error {
	if c.CacheCapacity < 0 {
		return fmt.Errorf("--cache-capacity must not be negative, got %d", c.CacheCapacity)
	}
	if c.CacheSkips < 0 {
		return fmt.Errorf("--cache-skips must not be negative, got %d", c.CacheSkips)
	}
	if c.PageCache < 0 {
		return fmt.Errorf("--page-cache must not be negative, got %d", c.PageCache)
	}
	if c.DiskReadRate < 0 {
		return fmt.Errorf("--disk-read-rate must not be negative, got %d", c.DiskReadRate)
	}
	if c.CachePolicy != "" {
		if err := daemonconf.CheckCachePolicy(c.CachePolicy); err != nil {
			return fmt.Errorf("--cache-policy: %w", err)
		}
	}
	if c.Scheduler != "" {
		if err := daemonconf.CheckScheduler(c.Scheduler); err != nil {
			return fmt.Errorf("--scheduler: %w", err)
		}
	}
	return nil
}

// nameNode, dataNode and resourceManager set the config fields the
// options select (zero ones leave each daemon's default); the caller's
// extra keys are merged over them.
func (c *CacheOptions) nameNode(cfg *daemonconf.NameNodeConfig) {
	cfg.CachePolicy, cfg.CacheAffinity = c.CachePolicy, c.Affinity
}

func (c *CacheOptions) dataNode(cfg *daemonconf.DataNodeConfig) {
	cfg.CacheCapacity = c.CacheCapacity
	if c.DropBehind {
		cfg.DropCacheBehindReads, cfg.DropCacheBehindWrites = true, true
		cfg.PageCacheBudget = c.PageCache
	}
}

func (c *CacheOptions) resourceManager(cfg *daemonconf.ResourceManagerConfig) {
	cfg.Scheduler, cfg.CacheSkips = c.Scheduler, c.CacheSkips
}

// checkExtraKeys runs the seed 003 key checks over every daemon's final
// extra keys, so a bad value passed through Options.NameNode & co. fails
// as early as one given by flag.
func (o *Options) checkExtraKeys() error {
	for role, m := range map[string]map[string]any{
		daemonconf.NameNode: o.NameNode, daemonconf.DataNode: o.DataNode,
		daemonconf.ResourceManager: o.ResourceManager, daemonconf.NodeManager: o.NodeManager,
	} {
		if err := daemonconf.Check(role, m); err != nil {
			return err
		}
	}
	return nil
}
