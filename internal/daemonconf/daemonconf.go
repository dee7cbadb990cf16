// Package daemonconf is the daemons' config files: the typed configs
// whose YAML keys are the contract between the daemons and the launchers
// that write their files (NameNodeConfig, DataNodeConfig,
// ResourceManagerConfig, NodeManagerConfig), the one writer and merge the
// launchers use (Keys, Marshal), the one reader the daemons use (Load),
// and the checks run before any daemon starts.
//
// What it decides: which keys each daemon's file may hold, how a
// launcher's typed config and a user's overrides become that file, and,
// for the keys that select a baseline of seed 003 (in-memory caching and
// cache-local scheduling: the namenode's placement and cache policies and
// the cache's window, TTL
// and affinities, the datanode's cache capacity, memory budget and
// drop-behind switches, and the resource manager's scheduler and its skip
// and allocation limits), which values are well formed and under which
// daemon each key belongs. So `smarth cluster up` and a testbed topology
// file fail at once with a message naming the key at fault and the keys
// or values accepted, instead of a daemon failing minutes later or
// ignoring a key set on the wrong role. The launchers (internal/cluster,
// internal/testcluster, internal/testbed/topo and daemonplan) call it.
//
// What it leaves to others: what the values mean. Each daemon's Config
// (internal/namenode, internal/datanode, internal/resourcemanager,
// internal/nodemanager) embeds the type here and owns its defaults and
// its Validate, run when it loads; the types live here, not there, so
// that the launchers build them without importing daemon code (see
// internal/layering). The policy names come from the pure policy
// packages the daemons choose from (internal/cache, internal/sched,
// internal/placement: no I/O, no daemon code), so a policy added to one
// of their Policies maps is accepted here at once.
package daemonconf

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"smarth/internal/cache"
	"smarth/internal/placement"
	"smarth/internal/sched"
)

// Daemon roles, as the config sections of a topology file name them.
const (
	NameNode        = "namenode"
	DataNode        = "datanode"
	ResourceManager = "resourcemanager"
	NodeManager     = "nodemanager"
)

// CachePolicies are the namenode's cache replacement policies, as
// internal/cache exports them (cache.Policies): none, pinned, lru, ca, bg.
func CachePolicies() []string { return cache.Names() }

// Schedulers are the resource manager's task schedulers, as internal/sched
// exports them (sched.Policies): fifo, delay, cachelocal.
func Schedulers() []string { return sched.Names() }

// Placements are the namenode's block placement policies, as
// internal/placement exports them (placement.Policies).
func Placements() []string { return placement.Names() }

// CheckCachePolicy refuses a name that is not a cache policy.
func CheckCachePolicy(name string) error { return checkName("cache policy", name, CachePolicies()) }

// CheckScheduler refuses a name that is not a scheduler.
func CheckScheduler(name string) error { return checkName("scheduler", name, Schedulers()) }

// CheckPlacement refuses a name that is not a placement policy.
func CheckPlacement(name string) error { return checkName("placement policy", name, Placements()) }

func checkName(what, name string, known []string) error {
	if !slices.Contains(known, name) {
		return fmt.Errorf("unknown %s %q (known: %s)", what, name, strings.Join(known, ", "))
	}
	return nil
}

// owner maps each seed 003 key to the role whose config holds it.
func owner() map[string]string {
	return map[string]string{
		"cache_policy":             NameNode,
		"placement":                NameNode,
		"cache_window":             NameNode,
		"cache_ttl":                NameNode,
		"cache_affinity":           NameNode,
		"cache_affinity_source":    NameNode,
		"cache_capacity":           DataNode,
		"memory_budget":            DataNode,
		"drop_cache_behind_reads":  DataNode,
		"drop_cache_behind_writes": DataNode,
		"page_cache_budget":        DataNode,
		"scheduler":                ResourceManager,
		"cache_skips":              ResourceManager,
		"max_allocations":          ResourceManager,
	}
}

// Check checks one role's extra config keys (a user's overrides): each
// must be a key of that role's config, with a value that fits its type,
// and the seed 003 keys must sit under their own role with a well-formed
// value. Values are as YAML decodes them: numbers, strings, booleans and
// maps.
func Check(role string, cfg map[string]any) error {
	own := owner()
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first error is the same on every run
	for _, k := range keys {
		want, ok := own[k]
		if !ok {
			continue
		}
		if want != role {
			return fmt.Errorf("%s: %s is a %s key, not a %s one", role, k, want, role)
		}
		if err := checkValue(k, cfg[k]); err != nil {
			return fmt.Errorf("%s: %s: %w", role, k, err)
		}
	}
	if err := checkKeys(role, cfg); err != nil {
		return err
	}
	if err := checkBudget(cfg); err != nil {
		return fmt.Errorf("%s: %w", role, err)
	}
	return nil
}

func checkValue(key string, v any) error {
	switch key {
	case "cache_policy":
		return str(v, CheckCachePolicy)
	case "scheduler":
		return str(v, CheckScheduler)
	case "placement":
		return str(v, CheckPlacement)
	case "cache_window", "cache_ttl":
		return duration(v)
	case "cache_affinity":
		return affinities(v)
	case "cache_affinity_source":
		return str(v, func(s string) error {
			if s != "learned" && s != "table" {
				return fmt.Errorf("want learned or table, got %q", s)
			}
			return nil
		})
	case "cache_capacity", "memory_budget", "page_cache_budget":
		_, err := integer(v, 0)
		return err
	case "cache_skips":
		_, err := integer(v, 0)
		return err
	case "max_allocations":
		_, err := integer(v, 1)
		return err
	case "drop_cache_behind_reads", "drop_cache_behind_writes":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("want true or false, got %v", v)
		}
	}
	return nil
}

// checkBudget refuses a cache larger than the memory budget that must
// also hold it (the "bad input" case), when both are given.
func checkBudget(cfg map[string]any) error {
	c, okc := cfg["cache_capacity"]
	b, okb := cfg["memory_budget"]
	if !okc || !okb {
		return nil
	}
	cv, err1 := integer(c, 0)
	bv, err2 := integer(b, 0)
	if err1 == nil && err2 == nil && bv > 0 && cv > bv {
		return fmt.Errorf("cache_capacity %d is larger than memory_budget %d", cv, bv)
	}
	return nil
}

func str(v any, check func(string) error) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("want a name, got %v", v)
	}
	return check(s)
}

func duration(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("want a duration such as 30m, got %v", v)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("want a positive duration such as 30m, got %q", s)
	}
	return nil
}

// integer accepts the integer kinds YAML and callers produce and refuses
// values below lo. Sizes are plain bytes: the daemons read int64.
func integer(v any, lo int64) (int64, error) {
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int64:
		n = x
	case uint64:
		n = int64(x)
	case float64:
		if x != float64(int64(x)) {
			return 0, fmt.Errorf("want a whole number, got %v", x)
		}
		n = int64(x)
	default:
		return 0, fmt.Errorf("want a whole number (bytes for sizes), got %v", v)
	}
	if n < lo {
		return 0, fmt.Errorf("want at least %d, got %d", lo, n)
	}
	return n, nil
}

// affinities is a map of application name to its cache affinity in [0, 1].
func affinities(v any) error {
	if fm, ok := v.(map[string]float64); ok {
		m := map[string]any{}
		for k, f := range fm {
			m[k] = f
		}
		v = m
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("want a map of application to affinity, got %v", v)
	}
	for app, a := range m {
		f, ok := toFloat(a)
		if !ok || f < 0 || f > 1 {
			return fmt.Errorf("%s: want an affinity between 0 and 1, got %v", app, a)
		}
	}
	return nil
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}
