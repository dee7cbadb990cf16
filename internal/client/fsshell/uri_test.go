package fsshell_test

import (
	"context"
	"strings"
	"testing"

	"smarth/internal/client/fsshell"
)

// TestURIPathsShownAsGiven: a path given as a URI is printed as one, as
// hdfs dfs prints paths in the form they were given ("hdfs://nn:8020/p/x";
// ls, find, du, count, checksum, rm printed "/p/x"); a plain path in the
// same command stays plain, and the next command is not affected.
func TestURIPathsShownAsGiven(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.sh.Stdin = strings.NewReader("x")
	must(t, e.sh.Mkdir(ctx, []string{"/p"}, false))
	must(t, e.sh.Put(ctx, []string{"-"}, "/p/x", fsshell.PutOptions{}))
	const u = "hdfs://nn.example:8020"
	for _, tc := range []struct {
		name string
		run  func() error
		want []string // each a line's ending, in order
	}{
		{"ls", func() error { return e.sh.Ls(ctx, []string{u + "/p", "/p"}, fsshell.LsOptions{}) }, []string{"Found 1 items", " " + u + "/p/x", "Found 1 items", " /p/x"}},
		{"ls -C glob", func() error { return e.sh.Ls(ctx, []string{u + "/p/*"}, fsshell.LsOptions{PathOnly: true}) }, []string{u + "/p/x"}},
		{"ls -R", func() error { return e.sh.Ls(ctx, []string{"hdfs:///"}, fsshell.LsOptions{Recursive: true}) }, []string{" hdfs:///p", " hdfs:///p/x"}},
		{"find", func() error { return e.sh.Find(ctx, []string{u + "/p"}, fsshell.FindOptions{}) }, []string{u + "/p", u + "/p/x"}},
		{"du", func() error { return e.sh.Du(ctx, []string{u + "/p"}, false, false, false) }, []string{" " + u + "/p/x"}},
		{"count", func() error { return e.sh.Count(ctx, []string{u + "/p"}, fsshell.CountOptions{}) }, []string{" " + u + "/p"}},
		{"checksum", func() error { return e.sh.Checksum(ctx, []string{"smarth://nn.example/p/x"}) }, []string{"smarth://nn.example/p/x\tMD5-of-"}},
		{"ls after", func() error { return e.sh.Ls(ctx, []string{"/p"}, fsshell.LsOptions{}) }, []string{"Found 1 items", " /p/x"}},
		{"rm", func() error { return e.sh.Rm(ctx, []string{u + "/p/x"}, fsshell.RmOptions{SkipTrash: true}) }, []string{"Deleted " + u + "/p/x"}},
	} {
		e.reset()
		must(t, tc.run())
		lines := strings.Split(strings.TrimSuffix(e.out.String(), "\n"), "\n")
		if len(lines) != len(tc.want) {
			t.Fatalf("%s printed %q, want lines ending %q", tc.name, lines, tc.want)
		}
		for i, w := range tc.want {
			if !strings.HasSuffix(lines[i], w) && !strings.HasPrefix(lines[i], w) {
				t.Fatalf("%s line %d: %q, want it to end (or start) with %q", tc.name, i, lines[i], w)
			}
		}
	}
}
