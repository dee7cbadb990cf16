package mapreduce

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// homedFS is a LocalFS with a home directory, as the DFS has /user/USER.
type homedFS struct{ *LocalFS }

func (homedFS) Home() string { return "/user/alice" }

// Job inputs take globs and comma lists, and relative paths resolve
// against the file system's home, as Hadoop's FileInputFormat and working
// directory do; a pattern matching nothing says so in Hadoop's words.
func TestPlanJobGlobsAndRelativePaths(t *testing.T) {
	lfs, _ := NewLocalFS(t.TempDir())
	for _, f := range []string{"/in/part-0", "/in/part-1", "/other/x", "/user/alice/rel/a"} {
		genText(t, lfs, f, 10, 1)
	}
	genText(t, lfs, "/in/_SUCCESS", 1, 1)
	fsys := homedFS{lfs}
	reg := NewRegistry(wordCount{})
	ctx := context.Background()
	for _, c := range []struct {
		input, output string
		wantIn        []string
		wantOut       string
		wantErr       string
	}{
		{input: "/in/part-*", output: "/o", wantIn: []string{"/in/part-0", "/in/part-1"}, wantOut: "/o"},
		{input: "/in/part-0,/other/*", output: "o", wantIn: []string{"/in/part-0", "/other/x"}, wantOut: "/user/alice/o"},
		{input: "rel", output: "out/wc", wantIn: []string{"/user/alice/rel"}, wantOut: "/user/alice/out/wc"},
		{input: "/{in,other}/x", output: "/o", wantIn: []string{"/other/x"}, wantOut: "/o"},
		{input: "/in/nomatch*", output: "/o", wantErr: "Input Pattern /in/nomatch* matches 0 files"},
		{input: "missing", output: "/o", wantErr: "Input path does not exist: /user/alice/missing"},
	} {
		plan, err := PlanJob(ctx, fsys, reg, "wc", map[string]string{"input": c.input, "output": c.output, "reduces": "1"})
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("input %q: %v, want an error containing %q", c.input, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("input %q: %v", c.input, err)
			continue
		}
		if !slices.Equal(plan.Job.Input, c.wantIn) || plan.Job.Output != c.wantOut {
			t.Errorf("input %q output %q: planned %q -> %q, want %q -> %q", c.input, c.output, plan.Job.Input, plan.Job.Output, c.wantIn, c.wantOut)
		}
		var files []string
		for _, s := range plan.Splits {
			if !slices.Contains(files, s.Path) {
				files = append(files, s.Path)
			}
		}
		if want := c.wantIn; !slices.Equal(files, want) && !(len(want) == 1 && strings.HasSuffix(want[0], "/rel")) {
			t.Errorf("input %q: splits over %q, want %q", c.input, files, want)
		}
	}
}

func TestSplitPathsKeepsBraces(t *testing.T) {
	for in, want := range map[string][]string{
		"/a,/b":          {"/a", "/b"},
		" /a , ,/b ":     {"/a", "/b"},
		"/logs/{x,y},/c": {"/logs/{x,y}", "/c"},
		"/{a,{b,c}}/d,e": {"/{a,{b,c}}/d", "e"},
		`/esc\,aped,/b`:  {`/esc\,aped`, "/b"},
		"":               nil,
	} {
		if got := SplitPaths(in); !slices.Equal(got, want) {
			t.Errorf("SplitPaths(%q) = %q, want %q", in, got, want)
		}
	}
}
