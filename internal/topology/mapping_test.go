package topology

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, name, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTableFile(t *testing.T) {
	p := writeFile(t, "topology.table", "# HDFS table mapping\n10.0.0.1 /rack-a\nclient1\t/rack-b  # an off-cluster client\n\n", 0o644)
	r, err := NewMapping(MappingConfig{TableFile: p, Table: map[string]string{"client1": "/rack-c"}})
	if err != nil {
		t.Fatal(err)
	}
	if rack, ok := r.Lookup("nobody", "10.0.0.1"); !ok || rack != "/rack-a" {
		t.Errorf("Lookup by IP = %q %v", rack, ok)
	}
	if rack, _ := r.Lookup("client1"); rack != "/rack-c" {
		t.Errorf("inline table must win over the file: %q", rack)
	}
	if _, ok := r.Lookup("10.9.9.9"); ok {
		t.Error("an unknown address resolved")
	}
	for body, want := range map[string]string{
		"h1 /a extra\n": ":1: want \"address rack\"",
		"h1\n":          ":1: want \"address rack\"",
		"\nh1 rack-a\n": ":2: invalid rack \"rack-a\"",
	} {
		_, err := NewMapping(MappingConfig{TableFile: writeFile(t, "bad", body, 0o644)})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("table %q: error %v, want %q", body, err, want)
		}
	}
	if _, err := NewMapping(MappingConfig{TableFile: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("a missing table file was accepted")
	}
}

// script writes a topology script that logs each run's arguments to a file
// next to it, so a test can count the runs.
func script(t *testing.T, body string) (path, runs string) {
	t.Helper()
	dir := t.TempDir()
	runs = filepath.Join(dir, "runs")
	path = filepath.Join(dir, "topology.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho \"$@\" >> "+runs+"\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, runs
}

func countRuns(t *testing.T, runs string) int {
	b, err := os.ReadFile(runs)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func TestScriptMapping(t *testing.T) {
	// As HDFS's sample script: 10.1.* in rack-1, everything else unknown.
	p, runs := script(t, `for a in "$@"; do case $a in 10.1.*) echo /rack-1;; *) echo /default-rack;; esac; done`+"\n")
	r, err := NewMapping(MappingConfig{Script: p, Table: map[string]string{"dn9": "/rack-9"}})
	if err != nil {
		t.Fatal(err)
	}
	if rack, ok := r.Lookup("10.1.0.5"); !ok || rack != "/rack-1" {
		t.Fatalf("Lookup = %q %v", rack, ok)
	}
	if rack, ok := r.Lookup("10.1.0.5"); !ok || rack != "/rack-1" || countRuns(t, runs) != 1 {
		t.Errorf("second Lookup = %q %v after %d runs; want the cached answer", rack, ok, countRuns(t, runs))
	}
	if rack, _ := r.Lookup("dn9"); rack != "/rack-9" || countRuns(t, runs) != 1 {
		t.Errorf("the table must answer before the script: %q", rack)
	}
	// The default rack means "unknown": not placed, asked again only after
	// negativeTTL.
	if _, ok := r.Lookup("laptop"); ok {
		t.Error("an address the script puts in the default rack counts as placed")
	}
	r.Lookup("laptop")
	if n := countRuns(t, runs); n != 2 {
		t.Errorf("%d runs; an unplaced address must be cached too", n)
	}
	base := time.Now()
	r.now = func() time.Time { return base.Add(2 * negativeTTL) }
	r.Lookup("laptop")
	if n := countRuns(t, runs); n != 3 {
		t.Errorf("%d runs; an unplaced address is asked again after %v", n, negativeTTL)
	}
	// Several addresses of one client go in one run; the first placed wins.
	if rack, ok := r.Lookup("name-x", "10.1.7.7"); !ok || rack != "/rack-1" || countRuns(t, runs) != 4 {
		t.Errorf("Lookup(name, ip) = %q %v after %d runs", rack, ok, countRuns(t, runs))
	}
	if got := r.Rack("name-x", "10.2.0.1", "/reported"); got != "/reported" {
		t.Errorf("Rack falls back to the reported rack, got %q", got)
	}
}

func TestScriptFailures(t *testing.T) {
	cases := map[string]string{
		"exit 3\n":                      "exit status 3",
		"echo /a /b\n":                  "2 racks for 1 addresses",
		"echo rack-a\n":                 "invalid rack",
		"sleep 5; echo /a\n":            "no answer within",
		"echo oops >&2; exit 1\n":       "oops",
		"for a in \"$@\"; do :; done\n": "0 racks for 1 addresses",
	}
	for body, want := range cases {
		p, _ := script(t, body)
		r, err := NewMapping(MappingConfig{Script: p, ScriptTimeout: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if rack, ok := r.Lookup("h1"); ok {
			t.Errorf("script %q placed h1 in %q", body, rack)
		}
		if err := r.ScriptError(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("script %q: error %v, want %q", body, err, want)
		}
		if err := r.ScriptError(); err != nil {
			t.Errorf("ScriptError reports a failure twice: %v", err)
		}
		if got := r.Rack("h1", "", ""); got != DefaultRack {
			t.Errorf("script %q: datanode rack %q, want the default", body, got)
		}
	}
	if _, err := NewMapping(MappingConfig{Script: writeFile(t, "noexec", "echo /a", 0o644)}); err == nil {
		t.Error("a script that is not executable was accepted")
	}
}
