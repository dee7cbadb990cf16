package suite

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"smarth/internal/auth"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/mapreduce/jobclient"
	"smarth/internal/nodemanager"
	"smarth/internal/resourcemanager"
	"smarth/internal/testcluster/mrtest"
)

// These tests run the suite and the multi-job apps on the real runtime —
// resource manager, three node managers, HTTP shuffle, job client — in
// this process, over a local directory standing in for the DFS, so the
// apps' parameters, Prepare results and counters travel the cluster's
// paths. They need no namenode.

func startCluster(t *testing.T, out *bytes.Buffer) (*jobclient.Client, mrtest.HostFS) {
	t.Helper()
	lfs, err := mapreduce.NewLocalFS(filepath.Join(t.TempDir(), "dfs"))
	if err != nil {
		t.Fatal(err)
	}
	lfs.BlockSize = 256 << 10
	fs := mrtest.HostFS{LocalFS: lfs, Hosts: []string{"dn1", "dn2", "dn3"}}
	mr := mrtest.Start(t, mrtest.Options{FS: fs, Registry: mapreduce.NewRegistry(apps.AllWith(apps.Options{Out: out})...),
		Hosts: fs.Hosts, Racks: []string{"/r1", "/r1", "/r1"}, HeartbeatInterval: 20 * time.Millisecond,
		SortBufferBytes: 256 << 10, NodeTimeout: resourcemanager.DefaultConfig().NodeTimeout,
		// auth: simple (mrtest's default without a secret): an in-process
		// cluster on a local FS; callers assert their names.
		RM: func(cfg *resourcemanager.Config) {
			cfg.AllowStreaming = true // the suite runs a streaming job
			// The daemons' own delay-scheduling waits, as before mrtest.
			d := resourcemanager.DefaultConfig()
			cfg.NodeSkips, cfg.RackSkips = d.NodeSkips, d.RackSkips
		},
		NM: func(_ int, nc *nodemanager.Config) {
			// As the resource manager. Not root, the streaming job then
			// runs as this process (root: in a container as nobody).
			nc.Auth = auth.Simple
		},
	})
	return mr.Client(), fs
}

func TestSuiteOnInProcessCluster(t *testing.T) {
	jc, _ := startCluster(t, &bytes.Buffer{})
	sizes := tiny
	sizes.TeraRows, sizes.TeraMaps, sizes.TeraReduces = 20000, 3, 3
	res, err := Run(t.Context(), jc, Options{Sizes: sizes, Scale: "tiny"})
	if err != nil {
		t.Fatalf("suite on the cluster: %v", err)
	}
	if p, _ := res.Phase(TeraValidate); p.Metrics["rows"] != 20000 || p.Metrics["misordered"] != 0 {
		t.Fatalf("teravalidate %v", p.Metrics)
	}
	if p, _ := res.Phase(Pi); math.Abs(p.Metrics["estimate"]-math.Pi) > 0.01 {
		t.Fatalf("pi %v", p.Metrics)
	}
}

func TestDriversOnInProcessCluster(t *testing.T) {
	out := &bytes.Buffer{}
	jc, fs := startCluster(t, out)
	ctx := t.Context()
	run := func(app string, kv ...string) {
		t.Helper()
		p := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		if _, err := jc.Run(ctx, app, p); err != nil {
			t.Fatalf("%s: %v", app, err)
		}
	}
	run("randomtextwriter", "output", "/text", "maps", "3", "bytes-per-map", "200KiB")
	run("wordcount", "input", "/text", "output", "/wc", "reduces", "2")
	run("grep", "input", "/text", "output", "/grep", "regex", "[a-z]+ai[a-z]*")
	run("sort", "input", "/text", "output", "/sorted", "reduces", "3")
	run("streaming", "input", "/text", "output", "/st", "mapper", "wc -l", "reducer", "awk '{s += $1} END {print s}'")
	run("hivegen", "output", "/hive", "pages", "500", "visits", "5000")
	run("aggregation", "input", "/hive/uservisits", "output", "/agg")
	run("join", "input", "/hive", "output", "/join", "from", "1999-06-01", "to", "2000-06-01")
	run("kmeansgen", "output", "/pts", "points", "3000", "k", "3")
	run("kmeans", "input", "/pts", "output", "/km", "k", "3", "iterations", "3")
	run("pagerankgen", "output", "/g", "pages", "300")
	run("pagerank", "input", "/g", "output", "/pr", "iterations", "3")

	// Spot checks against the local runner's answers for the same input:
	// the cluster path must compute exactly the same.
	lr := mapreduce.NewLocalRunner(fs, mapreduce.LocalOptions{Registry: mapreduce.NewRegistry(apps.AllWith(apps.Options{Out: &bytes.Buffer{}})...)})
	for _, c := range []struct{ app, clusterOut, localOut string }{
		{"wordcount", "/wc", "/wc-local"}, {"grep", "/grep", "/grep-local"}, {"join", "/join", "/join-local"},
		{"pagerank", "/pr", "/pr-local"}, {"sort", "/sorted", "/sorted-local"},
	} {
		p := map[string]string{"input": "/text", "output": c.localOut, "reduces": "2", "regex": "[a-z]+ai[a-z]*"}
		switch c.app {
		case "join":
			p["input"], p["from"], p["to"] = "/hive", "1999-06-01", "2000-06-01"
		case "pagerank":
			p["input"], p["iterations"] = "/g", "3"
		case "sort":
			p["reduces"] = "3"
		}
		if _, err := lr.Run(ctx, c.app, p); err != nil {
			t.Fatalf("local %s: %v", c.app, err)
		}
		a, b := readDir(t, fs, c.clusterOut), readDir(t, fs, c.localOut)
		if c.app == "pagerank" {
			// Sums of floats in another order: equal up to rounding.
			sameRanks(t, a, b)
			continue
		}
		if c.app == "wordcount" { // reduce count differs: compare as sets of lines
			a, b = sortedLines(a), sortedLines(b)
		}
		if a != b || a == "" {
			t.Fatalf("%s: cluster output (%d bytes) differs from the local runner's (%d bytes)", c.app, len(a), len(b))
		}
	}
	if got := readDir(t, fs, "/st"); strings.TrimSpace(got) != fmt.Sprint(strings.Count(readDir(t, fs, "/text"), "\n")) {
		t.Fatalf("streaming line count %q", got)
	}
}

func readDir(t *testing.T, fs mapreduce.FS, dir string) string {
	t.Helper()
	files, err := mapreduce.InputFiles(t.Context(), fs, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range files {
		r, err := fs.Open(t.Context(), f.Path)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, f.Size)
		if _, err := r.ReadAt(buf, 0); err != nil && f.Size > 0 {
			t.Fatal(err)
		}
		r.Close()
		b.Write(buf)
	}
	return b.String()
}

func sortedLines(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	slices.Sort(l)
	return strings.Join(l, "\n")
}

// sameRanks compares "page\trank" outputs within 1e-12.
func sameRanks(t *testing.T, a, b string) {
	t.Helper()
	parse := func(s string) map[string]float64 {
		m := map[string]float64{}
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			page, rank, _ := strings.Cut(l, "\t")
			r, err := strconv.ParseFloat(rank, 64)
			if err != nil {
				t.Fatalf("bad rank line %q", l)
			}
			m[page] = r
		}
		return m
	}
	ma, mb := parse(a), parse(b)
	if len(ma) != len(mb) || len(ma) == 0 {
		t.Fatalf("pagerank: %d ranks on the cluster, %d locally", len(ma), len(mb))
	}
	for p, r := range ma {
		if math.Abs(r-mb[p]) > 1e-12 {
			t.Fatalf("pagerank: rank of %s is %v on the cluster, %v locally", p, r, mb[p])
		}
	}
}
