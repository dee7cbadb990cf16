package main

import (
	"strings"
	"testing"

	"smarth/internal/auth"
	"smarth/internal/namenode"
	"smarth/internal/rpc/dfspb"
)

// cacheRun runs `smarth cache args...` (see runSmarth).
func cacheRun(args ...string) (int, string, string) {
	return runSmarth(append([]string{"cache"}, args...)...)
}

func TestCacheAgainstANamenode(t *testing.T) {
	cfg := namenode.DefaultConfig()
	cfg.RPCAddr, cfg.HTTPAddr, cfg.MetaDir, cfg.Superuser = "127.0.0.1:0", "127.0.0.1:0", t.TempDir(), "root-of-test"
	cfg.Auth = auth.Simple // the commands run with --user (the default is secure)
	cfg.CachePolicy = "pinned"
	nn, err := namenode.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := nn.Start(); err != nil {
		t.Fatal(err)
	}
	defer nn.Close()
	nnFlags := []string{"--namenode", nn.Addr(), "--user", "root-of-test"}
	cases := []struct {
		args []string
		code int
		out  string // in the output, or in the error when code != 0
	}{
		{[]string{"addPool", "hot", "--limit", "1G", "--mode", "0775"}, 0, "Successfully added cache pool hot."},
		{[]string{"addPool", "hot"}, 1, "addPool hot: cache pool hot already exists"},
		{[]string{"addPool", "x", "--mode", "999"}, 2, `--mode "999" is not an octal permission`},
		{[]string{"listPools", "--stats"}, 0, "hot   root-of-test"},
		{[]string{"addDirective", "--path", "/missing", "--pool", "hot"}, 1, "addDirective /missing: no such file or directory"},
		{[]string{"addDirective", "--path", "/", "--pool", "cold"}, 1, "cache pool cold does not exist"},
		{[]string{"addDirective", "--path", "/"}, 2, "--path and --pool are required"},
		{[]string{"addDirective", "--path", "/", "--pool", "hot", "--replication", "2"}, 0, "Added cache directive 1"},
		{[]string{"listDirectives", "--stats"}, 0, "1   hot   2     /"},
		{[]string{"removeDirective", "one"}, 2, `"one" is not a directive id`},
		{[]string{"removeDirective", "7"}, 1, "cache directive 7 does not exist"},
		{[]string{"stats"}, 0, "Cache policy pinned: 0 hits, 0 misses"},
		{[]string{"removePool", "hot"}, 0, "Successfully removed cache pool hot."},
		{[]string{"listDirectives"}, 0, "Found 0 entries"},
		{[]string{"stats", "--bogus"}, 2, "unknown flag: --bogus"},
	}
	for _, c := range cases {
		code, out, msg := cacheRun(append(append([]string{}, nnFlags...), c.args...)...)
		text := out
		if c.code != 0 {
			text = msg
		}
		if code != c.code || !strings.Contains(text, c.out) {
			t.Errorf("smarth cache %s: exit %d, output %q, error %q; want exit %d with %q", strings.Join(c.args, " "), code, out, msg, c.code, c.out)
		}
	}
}

// cache stats shows each learned estimate with the reads behind it.
func TestPrintCacheStatsAffinityEstimates(t *testing.T) {
	var b strings.Builder
	printCacheStats(&b, &dfspb.GetCacheStatsResponse{Policy: "bg", AffinitySource: "learned",
		AffinityEstimates: []*dfspb.AffinityEstimate{{User: "alice", App: "grep", Affinity: 0.612, HotSamples: 12, ColdSamples: 9,
			HotMibPerSec: 812.5, ColdMibPerSec: 315.2, ColdTaskMibPerSec: 122.4, ColdTaskSamples: 9, Used: true}}})
	out := b.String()
	for _, want := range []string{"Learned cache affinity (source learned)", "N_HOT", "COLD_TASK_MiB/s", "alice", "grep", "0.612", "12", "9", "812.5", "315.2", "122.4", "true"} {
		if !strings.Contains(out, want) {
			t.Errorf("cache stats lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	printCacheStats(&b, &dfspb.GetCacheStatsResponse{Policy: "bg", AffinitySource: "table"})
	if !strings.Contains(b.String(), "source table") || !strings.Contains(b.String(), "no reads sampled yet") {
		t.Errorf("cache stats without estimates:\n%s", b.String())
	}
}
