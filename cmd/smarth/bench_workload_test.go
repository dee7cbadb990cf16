package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// Bad workload and affinity arguments are usage errors (exit 2) that say
// what was wrong, before any cluster is started.
func TestWorkloadAndAffinityUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"bench", "workload", "w9"}, `no workload "w9"`},
		{[]string{"bench", "workload", "w1", "--policies", "nocache,arc"}, `--policies: unknown policy combination "arc"`},
		{[]string{"bench", "workload", "w1", "--cache-capacity", "big"}, `--cache-capacity: invalid size "big"`},
		{[]string{"bench", "workload", "w1", "--affinity", "grep=2"}, `--affinity "grep=2"`},
		{[]string{"bench", "workload", "w1", "--disk-read-rate", "fast"}, `--disk-read-rate`},
		{[]string{"job", "affinity", "nosuchapp"}, `nosuchapp`},
		{[]string{"job", "affinity", "grep", "--regex", "a"}, `grep: --input is required`},
		{[]string{"job", "affinity", "grep", "--input", "/x", "--runs", "0"}, `--runs >= 1`},
	} {
		root := newRootCmd()
		root.SetArgs(c.args)
		root.SetOut(&bytes.Buffer{})
		root.SetErr(&bytes.Buffer{})
		err := root.Execute()
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: %v, want a usage error containing %q", c.args, err, c.msg)
		}
	}
}
