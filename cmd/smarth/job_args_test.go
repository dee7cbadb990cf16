package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"smarth/internal/mapreduce"
	"smarth/internal/rpc/mrpb"
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

// A job parameter's mistake is a usage error (exit 2) like any other;
// other failures stay 1.
func TestParamErrorsAreUsageErrors(t *testing.T) {
	var ee *exitError
	if err := paramUsage(fmt.Errorf("wordcount: %w", &mapreduce.ParamError{Msg: "missing required parameter --input"})); !errors.As(err, &ee) || ee.code != 2 {
		t.Errorf("a missing parameter: %v, want exit 2", err)
	}
	if err := paramUsage(errors.New("job failed")); errors.As(err, &ee) {
		t.Errorf("a job failure became a usage error: %v", err)
	}
	if paramUsage(nil) != nil {
		t.Error("nil changed")
	}
}

// Unknown commands and flags exit 2 at every level.
func TestUnknownCommandsAndFlagsExit2(t *testing.T) {
	for _, args := range [][]string{{"nosuch"}, {"job", "nosuch"}, {"admin", "nosuch"}, {"cluster", "nosuch"}, {"job", "list", "--nosuch"}, {"fs", "ls", "--nosuch"}} {
		if rc, _, msg := runSmarth(args...); rc != 2 || !strings.Contains(msg, "unknown") {
			t.Errorf("%q: rc %d %q, want 2 and an unknown command or flag", args, rc, msg)
		}
	}
	for _, args := range [][]string{{}, {"job"}, {"--help"}} {
		if rc, _, msg := runSmarth(args...); rc != 0 {
			t.Errorf("%q: rc %d %q, want its help and 0", args, rc, msg)
		}
	}
}

// Off a terminal, job run writes Hadoop's plain progress lines, each
// change once, and the outcome once; no carriage returns.
func TestJobProgressOffATerminal(t *testing.T) {
	var b strings.Builder
	bar := newJobBar(&b, false)
	bar.plain = true
	for _, st := range []*mrpb.JobStatus{
		{JobId: "job_1", State: "RUNNING", MapsTotal: 4, ReducesTotal: 1},
		{JobId: "job_1", State: "RUNNING", MapsTotal: 4, ReducesTotal: 1},
		{JobId: "job_1", State: "SUCCEEDED", MapsTotal: 4, MapsDone: 4, ReducesTotal: 1, ReducesDone: 1},
		{JobId: "job_1", State: "SUCCEEDED", MapsTotal: 4, MapsDone: 4, ReducesTotal: 1, ReducesDone: 1},
	} {
		bar.update(st)
	}
	bar.finish()
	want := "Running job: job_1\n map 0% reduce 0%\n map 100% reduce 100%\nJob job_1 completed successfully\n"
	if b.String() != want {
		t.Errorf("printed %q, want %q", b.String(), want)
	}
}

// Hadoop's streaming spelling (-files, -archives) is the double-dash
// flag, before the app's name or after it.
func TestJobRunTakesHadoopFilesOptions(t *testing.T) {
	app, rest, err := splitJobArgs(hadoopJobArgs([]string{"-files", "m.py,r.py", "-archives=libs.zip#libs", "streaming", "--mapper", "python3 m.py", "-files", "x.txt"}))
	if err != nil {
		t.Fatal(err)
	}
	if app != "streaming" {
		t.Fatalf("app %q", app)
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var rf runFlags
	rf.add(fs)
	mapper := fs.String("mapper", "", "")
	if err := fs.Parse(rest); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rf.files, "|"); got != "m.py,r.py|x.txt" {
		t.Errorf("files %q", got)
	}
	if got := strings.Join(rf.archives, "|"); got != "libs.zip#libs" {
		t.Errorf("archives %q", got)
	}
	if *mapper != "python3 m.py" {
		t.Errorf("mapper %q", *mapper)
	}
}
