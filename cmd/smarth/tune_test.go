package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"smarth/internal/tune"
)

// Bad tune arguments are usage errors (exit 2) that say what was wrong,
// before any cluster starts or any sysctl changes.
func TestTuneUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"tune", "ga", "--profile", "64MiB"}, "want SIZE,PACKET"},
		{[]string{"tune", "ga", "--profile", "64MiB,1000"}, "not a multiple of 512"},
		{[]string{"tune", "ga", "--profile", "64MiB,64KiB", "--space", "nic"}, `unknown search space "nic"`},
		{[]string{"tune", "ga", "--profile", "64MiB,64KiB", "--space", "sysctl"}, "add --sysctl"},
		{[]string{"tune", "ga", "--profile", "64MiB,64KiB", "--ab-runs", "3"}, "--ab-runs 3: want at least 6 rounds"},
		{[]string{"tune", "check", "x:so_rcvbuff=1"}, `unknown setting "so_rcvbuff"`},
		{[]string{"tune", "check", "x:so_busy_poll=-5"}, "out of range"},
		{[]string{"tune", "report"}, "--log FILE or --cluster"},
		{[]string{"tune", "sysctl"}, "--set NAME=VALUE or --restore"},
		{[]string{"tune", "ab", "--profile", "64MiB,64KiB", "--b", "x:window=0.5"}, "window"},
		{[]string{"tune", "ab", "--profile", "64MiB,64KiB", "--b", "default"}, "both named"},
		{[]string{"tune", "ab", "--profile", "64MiB,64KiB", "--b", "w:window=160", "--ab-runs", "3"}, "at least 6"},
		{[]string{"tune", "ab", "--profile", "64MiB,64KiB", "--b", "s:net.core.busy_read=50"}, "sysctl"},
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

func TestTuneReportFromLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "transfer.jsonl")
	w, err := tune.OpenLog(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(0, 0)
	for _, p := range []string{"default", "default", "fast"} {
		if err := w.Write(tune.Record{Block: "blk_1_1", Bytes: 1 << 20, PacketSize: 64 << 10, Start: t0, End: t0.Add(time.Second), Profile: p, Xceivers: 1}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetArgs([]string{"tune", "report", "--log", path})
	root.SetOut(&out)
	root.SetErr(&bytes.Buffer{})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	// 1 MiB in 1 s = 8.388608 Mbit/s.
	if s := out.String(); !strings.Contains(s, "3 transfers") || !strings.Contains(s, "fast") || !strings.Contains(s, "8.4") {
		t.Fatalf("report:\n%s", s)
	}
	_ = os.Remove(path)
}
