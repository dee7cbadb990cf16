package fsshell_test

import (
	"context"
	"io/fs"
	"testing"

	"smarth/internal/client"
	"smarth/internal/client/fsshell"
)

// A destination that does not exist follows hdfs dfs's rule: its parent
// must exist, and one written with a trailing "/" names a directory that
// must exist itself. put, cp and mv made a file /newdir of "/newdir/",
// and put made missing parents on the way. A missing one is named a
// second time fully qualified, as hdfs dfs names it.
func TestDestinationMustHaveItsParent(t *testing.T) {
	e := newEnv(t)
	e.sh.URI = "hdfs://nn:8020"
	ctx := context.Background()
	must(t, e.sh.Mkdir(ctx, []string{"/d"}, true))
	must(t, e.sh.Touchz(ctx, []string{"/d/f"}))
	for _, c := range []struct {
		arg, want string
		kind      error
	}{
		{"/newdir/", "put: `/newdir/': No such file or directory: `hdfs://nn:8020/newdir'", fs.ErrNotExist},
		{"/n2/sub/", "put: `/n2/sub/': No such file or directory: `hdfs://nn:8020/n2/sub'", fs.ErrNotExist},
		{"/n2/sub", "put: `/n2/sub': No such file or directory: `hdfs://nn:8020/n2/sub'", fs.ErrNotExist},
		{"/d/f/x", "put: `/d/f/x': Is not a directory", client.ErrNotDir},
		{"/d/new/.", "put: `/d/new/.': No such file or directory: `hdfs://nn:8020/d/new'", fs.ErrNotExist},
	} {
		_, err := e.sh.Target(ctx, "put", c.arg)
		wantErr(t, c.arg, err, c.kind, c.want)
	}
	for arg, want := range map[string]string{"/d/": "/d", "/d/g": "/d/g", "/d/f": "/d/f", "/d/.": "/d"} {
		if got, err := e.sh.Target(ctx, "put", arg); err != nil || got != want {
			t.Errorf("Target(%q) = %q, %v; want %q", arg, got, err, want)
		}
	}
	wantErr(t, "cp to a missing dir/", e.sh.Cp(ctx, []string{"/d/f"}, "/newdir/", fsshell.CpOptions{}), fs.ErrNotExist, "cp: `/newdir/': No such file or directory: `hdfs://nn:8020/newdir'")
	wantErr(t, "mv to a missing dir/", e.sh.Mv(ctx, []string{"/d/f"}, "/newdir/"), fs.ErrNotExist, "mv: `/newdir/': No such file or directory: `hdfs://nn:8020/newdir'")
	for _, p := range []string{"/newdir", "/n2"} {
		if _, err := e.c.Client(t).Stat(ctx, p); err == nil {
			t.Errorf("%s was made by a refused command", p)
		}
	}
}
