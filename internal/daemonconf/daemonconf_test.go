package daemonconf

import (
	"strings"
	"testing"
)

func TestCheckAcceptsEveryKeyUnderItsRole(t *testing.T) {
	for _, c := range []struct {
		role string
		cfg  map[string]any
	}{
		{NameNode, map[string]any{"cache_policy": "bg", "cache_window": "30m", "cache_ttl": "10m",
			"cache_affinity": map[string]any{"grep": 0.638, "kmeans": 0}, "placement": "anything"}},
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
		{NameNode, map[string]any{"cache_policy": "lfu"}, `unknown cache policy "lfu" (known: none, pinned, lru, ca, bg)`},
		{ResourceManager, map[string]any{"scheduler": "fair"}, `unknown scheduler "fair" (known: fifo, delay, cachelocal)`},
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
