package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// Bad cache flags and a bad --resourcemanager-http are usage errors
// (exit 2) that name the flag, and nothing is started: the home stays
// empty.
func TestClusterUpCacheFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--cache-policy", "lfu"}, `--cache-policy: unknown cache policy "lfu" (known: bg, ca, lru, none, pinned)`},
		{[]string{"--scheduler", "fair"}, `--scheduler: unknown scheduler "fair" (known: cachelocal, delay, fifo)`},
		{[]string{"--cache-capacity", "lots"}, `--cache-capacity: invalid size "lots"`},
		{[]string{"--disk-read-rate", "40"}, `--disk-read-rate: disk rate "40" has no unit`},
		// Before, the namenode exited at start on the misspelt key.
		{[]string{"--namenode-conf", "replicaton=2"}, `--namenode-conf: namenode: unknown config key "replicaton" (did you mean replication?`},
		{[]string{"--namenode-conf", "replication=two"}, `--namenode-conf: namenode: replication: two does not fit`},
		{[]string{"--resourcemanager-http", "8088"}, `--resourcemanager-http "8088": want host:port`},
		{[]string{"--nodemanagers=false", "--resourcemanager-http", "127.0.0.1:8088"}, "--resourcemanager-http 127.0.0.1:8088: this cluster starts no resource manager"},
	} {
		root := newRootCmd()
		home := t.TempDir()
		// A binary that does not exist: were a check gone, the launch
		// would fail at once instead of starting daemons (this test's
		// own binary, which is no smarth).
		root.SetArgs(append([]string{"cluster", "up", "--home", home, "--binary", "/nonexistent/smarth"}, c.args...))
		root.SetOut(&bytes.Buffer{})
		root.SetErr(&bytes.Buffer{})
		err := root.Execute()
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("cluster up %v: %v, want a usage error containing %q", c.args, err, c.msg)
		}
	}
}
