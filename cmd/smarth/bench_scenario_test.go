package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func benchRun(t *testing.T, args ...string) (int, string) {
	t.Helper()
	root := newRootCmd()
	root.SetArgs(append([]string{"bench"}, args...))
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	err := root.Execute()
	if err == nil {
		return 0, ""
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code, err.Error()
	}
	return 1, err.Error()
}

func TestBenchScenarioUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"scenario"}, 2, "want one topology file"},
		{[]string{"scenario", "a.yaml", "b.yaml"}, 2, "got 2 arguments"},
		{[]string{"scenario", "local", "--modes", "classic,fast"}, 2, `--modes: unknown value "fast"`},
		{[]string{"scenario", "local", "--placements", ","}, 2, "--placements: give at least one"},
		{[]string{"scenario", "local", "--runs", "3", "--phase-runs", "2"}, 2, "multiple of --phase-runs"},
		{[]string{"scenario", "local", "--size", "lots"}, 2, "--size"},
		{[]string{"scenario", "local", "--plot", "x.pdf"}, 2, ".svg or .png"},
		// One placement: a list (or a padded name) would reach the
		// namenode's configuration as a placement name.
		{[]string{"scenario", "random", "--dry-run", "--concurrent-placement", "mincut,rackaware"}, 2, "--concurrent-placement: give one of"},
		{[]string{"scenario", "no-such-topology.yaml"}, 1, "no-such-topology.yaml"},
		{[]string{"scenario-put", "--size", "1MiB"}, 2, "--json is required"},
		{[]string{"scenario-put", "--json", "x", "--runs", "0"}, 2, "--runs must be at least 1"},
	}
	for _, c := range cases {
		code, msg := benchRun(t, c.args...)
		if code != c.code || !strings.Contains(msg, c.msg) {
			t.Errorf("bench %v: exit %d %q, want exit %d and %q", c.args, code, msg, c.code, c.msg)
		}
	}
}
