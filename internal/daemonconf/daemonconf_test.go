package daemonconf

import (
	"strings"
	"testing"

	"smarth/internal/cache"
	"smarth/internal/placement"
	"smarth/internal/sched"
)

func TestCheckAcceptsEveryKeyUnderItsRole(t *testing.T) {
	for _, c := range []struct {
		role string
		cfg  map[string]any
	}{
		{NameNode, map[string]any{"cache_policy": "bg", "cache_window": "30m", "cache_ttl": "10m",
			"cache_affinity": map[string]any{"grep": 0.638, "kmeans": 0}, "placement": "speedaware"}},
		{NameNode, map[string]any{"cache_affinity": map[string]float64{"grep": 0.5}}},
		{DataNode, map[string]any{"cache_capacity": 268435456, "memory_budget": int64(1 << 30),
			"drop_cache_behind_reads": true, "drop_cache_behind_writes": false}},
		{ResourceManager, map[string]any{"scheduler": "cachelocal", "cache_skips": 3, "max_allocations": 2}},
	} {
		if err := Check(c.role, c.cfg); err != nil {
			t.Errorf("Check(%s, %v) = %v, want nil", c.role, c.cfg, err)
		}
	}
}

func TestCheckRefusesBadValuesClearly(t *testing.T) {
	for _, c := range []struct {
		role string
		cfg  map[string]any
		want string
	}{
		{NameNode, map[string]any{"cache_policy": "lfu"}, `unknown cache policy "lfu" (known: bg, ca, lru, none, pinned)`},
		{ResourceManager, map[string]any{"scheduler": "fair"}, `unknown scheduler "fair" (known: cachelocal, delay, fifo)`},
		{NameNode, map[string]any{"placement": "random"}, `unknown placement policy "random" (known: rackaware, speedaware, speedaware-paper)`},
		{DataNode, map[string]any{"placement": "rackaware"}, "placement is a namenode key"},
		{NameNode, map[string]any{"scheduler": "delay"}, "scheduler is a resourcemanager key, not a namenode one"},
		{DataNode, map[string]any{"cache_policy": "lru"}, "cache_policy is a namenode key"},
		{NameNode, map[string]any{"cache_window": "soon"}, "positive duration"},
		{NameNode, map[string]any{"cache_affinity": map[string]any{"grep": 1.5}}, "grep: want an affinity between 0 and 1"},
		{DataNode, map[string]any{"cache_capacity": "256MiB"}, "want a whole number (bytes for sizes)"},
		{DataNode, map[string]any{"cache_capacity": -1}, "want at least 0"},
		{DataNode, map[string]any{"drop_cache_behind_reads": "yes"}, "want true or false"},
		{DataNode, map[string]any{"cache_capacity": 2048, "memory_budget": 1024}, "cache_capacity 2048 is larger than memory_budget 1024"},
		{ResourceManager, map[string]any{"max_allocations": 0}, "max_allocations: want at least 1"},
	} {
		err := Check(c.role, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%s, %v) = %v, want an error containing %q", c.role, c.cfg, err, c.want)
		}
	}
}

// TestPolicyNamesComeFromThePolicyPackages: a policy registered in
// cache.Policies, sched.Policies or placement.Policies is accepted under
// its key with no change here, and a name they do not list is refused
// with the names they do.
func TestPolicyNamesComeFromThePolicyPackages(t *testing.T) {
	cache.Policies["test-cache"] = cache.Policies["lru"]
	sched.Policies["test-sched"] = sched.Policies["fifo"]
	placement.Policies["test-placement"] = placement.Policies["rackaware"]
	t.Cleanup(func() {
		delete(cache.Policies, "test-cache")
		delete(sched.Policies, "test-sched")
		delete(placement.Policies, "test-placement")
	})
	for _, c := range []struct {
		role, key string
		names     []string
	}{
		{NameNode, "cache_policy", cache.Names()},
		{ResourceManager, "scheduler", sched.Names()},
		{NameNode, "placement", placement.Names()},
	} {
		for _, name := range c.names {
			if err := Check(c.role, map[string]any{c.key: name}); err != nil {
				t.Errorf("%s: %s=%q, listed by its package: %v", c.role, c.key, name, err)
			}
		}
		err := Check(c.role, map[string]any{c.key: "nonesuch"})
		if err == nil || !strings.Contains(err.Error(), strings.Join(c.names, ", ")) {
			t.Errorf("%s: %s=nonesuch: %v, want an error listing %v", c.role, c.key, err, c.names)
		}
	}
}
