package main

import (
	"slices"
	"strings"
	"testing"
)

// `job run`'s common flags may precede the app's name, as job --help's own
// example writes them; the app's flags only follow it.
func TestJobRunFlagsBeforeTheApp(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		app      string
		rest     []string
		errorHas string
	}{
		{args: []string{"wordcount", "--input", "/a"}, app: "wordcount", rest: []string{"--input", "/a"}},
		{args: []string{"--detach", "wordcount", "--input", "/a", "--output", "/b"}, app: "wordcount", rest: []string{"--detach", "--input", "/a", "--output", "/b"}},
		{args: []string{"--param", "k=v", "--no-progress", "pi", "--maps", "2"}, app: "pi", rest: []string{"--param", "k=v", "--no-progress", "--maps", "2"}},
		{args: []string{"--namenode=127.0.0.1:1", "grep"}, app: "grep", rest: []string{"--namenode=127.0.0.1:1"}},
		{args: []string{"--input", "/a", "wordcount"}, errorHas: "unknown flag: --input"},
		{args: []string{"--detach"}, errorHas: "no app named"},
	} {
		app, rest, err := splitJobArgs(tc.args)
		if tc.errorHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errorHas) {
				t.Errorf("%q: error %v, want one saying %q", tc.args, err, tc.errorHas)
			}
			continue
		}
		if err != nil || app != tc.app || !slices.Equal(rest, tc.rest) {
			t.Errorf("%q: app %q, rest %q, err %v; want %q, %q", tc.args, app, rest, err, tc.app, tc.rest)
		}
	}
}

// The --detach help names the command to follow the job with; pflag takes a
// back-quoted word in a usage as the flag's value name, and printed
// "--detach smarth job status".
func TestJobRunHelpRendersDetach(t *testing.T) {
	rc, out, errText := runSmarth("job", "run", "wordcount", "--help")
	if rc != 0 {
		t.Fatalf("job run wordcount --help: rc %d: %s", rc, errText)
	}
	found := false
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "--detach" {
			found = true
			if f[1] != "submit," {
				t.Errorf("--detach's help line renders a value name: %q", line)
			}
		}
	}
	if !found {
		t.Errorf("no --detach line in:\n%s", out)
	}
}
