package mapreduce_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
)

// TestEngineThroughput times the task engine on the built-in apps with
// the local runner over a local directory (no DFS, no network): the
// engine's share of TeraSort and WordCount. Opt-in, it is a measurement:
//
//	SMARTH_ENGINE_BENCH=1 SMARTH_TERA_ROWS=10000000 SMARTH_TEXT_MB=200 \
//	  go test ./internal/mapreduce -run EngineThroughput -v -cpuprofile cpu.out
func TestEngineThroughput(t *testing.T) {
	if os.Getenv("SMARTH_ENGINE_BENCH") == "" {
		t.Skip("set SMARTH_ENGINE_BENCH=1 to measure")
	}
	rows := envInt("SMARTH_TERA_ROWS", 1_000_000)
	textMB := envInt("SMARTH_TEXT_MB", 50)
	dir := os.Getenv("SMARTH_BENCH_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	lfs, err := mapreduce.NewLocalFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	lfs.BlockSize = 64 << 20
	r := mapreduce.NewLocalRunner(lfs, mapreduce.LocalOptions{Registry: mapreduce.NewRegistry(apps.All()...), Parallelism: 2})
	ctx := context.Background()
	run := func(app string, p map[string]string) {
		start := time.Now()
		res, err := r.Run(ctx, app, p)
		if err != nil {
			t.Fatalf("%s: %v", app, err)
		}
		tc := res.Counters[mapreduce.GroupTask]
		t.Logf("%-16s %6.2fs  map out %d recs, spilled %d, shuffle %d MiB", app, time.Since(start).Seconds(),
			tc[mapreduce.MapOutputRecords], tc[mapreduce.SpilledRecords], tc[mapreduce.ReduceShuffleBytes]>>20)
	}
	maps := strconv.Itoa(max(2, rows/2_500_000))
	run("teragen", map[string]string{"rows": strconv.Itoa(rows), "maps": maps, "output": "/tera/in"})
	run("terasort", map[string]string{"input": "/tera/in", "output": "/tera/out", "reduces": "2"})
	run("teravalidate", map[string]string{"input": "/tera/out", "output": "/tera/val"})
	per := textMB / 4
	run("randomtextwriter", map[string]string{"bytes-per-map": strconv.Itoa(per) + "MiB", "maps": "4", "output": "/text"})
	run("wordcount", map[string]string{"input": "/text", "output": "/wc", "reduces": "2"})
}

func envInt(k string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v > 0 {
		return v
	}
	return def
}
