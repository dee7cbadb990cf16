package cluster

import (
	"strings"
	"testing"
)

// The cache options land in the daemons' configs under the keys of the
// daemon config contract, and the extra keys still win.
func TestCacheOptionsInConfigs(t *testing.T) {
	o := Options{Home: t.TempDir(), Binary: "/bin/true", DataNodes: 2, Cache: CacheOptions{
		CacheCapacity: 256 << 20, CachePolicy: "bg", Scheduler: "cachelocal", DropBehind: true, CacheSkips: 1,
		Affinity: map[string]float64{"grep": 0.638},
	}, ResourceManager: map[string]any{"cache_skips": 5}}
	if err := o.setDefaults(); err != nil {
		t.Fatal(err)
	}
	l := layout{o.Home}
	nn := must(o.nameNodeConfig(l))
	if nn["cache_policy"] != "bg" || nn["cache_affinity"].(map[string]any)["grep"] != 0.638 {
		t.Errorf("namenode config %v: want cache_policy bg and the affinities", nn)
	}
	dn := must(o.dataNodeConfig(l, 1, "127.0.0.1:8020"))
	if dn["cache_capacity"] != 256<<20 || dn["drop_cache_behind_reads"] != true || dn["drop_cache_behind_writes"] != true {
		t.Errorf("datanode config %v: want cache_capacity and both drop-behinds", dn)
	}
	rm := must(o.resourceManagerConfig(layout{o.Home}, "127.0.0.1:8020"))
	if rm["scheduler"] != "cachelocal" || rm["cache_skips"] != 5 { // the extra key wins over CacheSkips
		t.Errorf("resource manager config %v: want scheduler cachelocal and the extra cache_skips", rm)
	}
	plain := Options{Home: t.TempDir(), Binary: "/bin/true", DataNodes: 1}
	if err := plain.setDefaults(); err != nil {
		t.Fatal(err)
	}
	if dn := must(plain.dataNodeConfig(l, 0, "x")); dn["cache_capacity"] != nil || dn["drop_cache_behind_reads"] != nil {
		t.Errorf("a cluster without cache options got cache keys: %v", dn)
	}
}

func TestCacheOptionsRefusedUpFront(t *testing.T) {
	for _, c := range []struct {
		cache CacheOptions
		extra map[string]any
		want  string
	}{
		{CacheOptions{CachePolicy: "lfu"}, nil, `--cache-policy: unknown cache policy "lfu" (known: bg, ca, lru, none, pinned)`},
		{CacheOptions{Scheduler: "fair"}, nil, `--scheduler: unknown scheduler "fair" (known: cachelocal, delay, fifo)`},
		{CacheOptions{CacheCapacity: -1}, nil, "--cache-capacity must not be negative"},
		{CacheOptions{DiskReadRate: -1}, nil, "--disk-read-rate must not be negative"},
		{CacheOptions{}, map[string]any{"cache_policy": "x"}, "unknown cache policy"},
	} {
		o := Options{Home: t.TempDir(), Binary: "/bin/true", DataNodes: 1, Cache: c.cache, NameNode: c.extra}
		err := o.setDefaults()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v %v: setDefaults = %v, want an error containing %q", c.cache, c.extra, err, c.want)
		}
	}
}

// must is a config's keys, or a panic: a config the test's options make
// is refused only if the code under test is wrong.
func must(keys map[string]any, err error) map[string]any {
	if err != nil {
		panic(err)
	}
	return keys
}
