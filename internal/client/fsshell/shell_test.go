package fsshell_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/client/fsshell"
	"smarth/internal/testcluster"
)

type env struct {
	sh       *fsshell.Shell
	out, err *bytes.Buffer
	c        *testcluster.Cluster
}

func newEnv(t *testing.T) *env {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20})
	e := &env{out: &bytes.Buffer{}, err: &bytes.Buffer{}, c: c}
	e.sh = &fsshell.Shell{FS: c.Client(t), Out: e.out, Err: e.err, Progress: fsshell.ProgressNever}
	return e
}

func (e *env) reset() { e.out.Reset(); e.err.Reset() }

func TestShellPutGetLsRmMv(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), 200_000) // 3.2 MB, 4 blocks
	must(t, os.WriteFile(filepath.Join(dir, "big"), big, 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, "tree", "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "tree", "a"), []byte("A"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "tree", "sub", "b"), []byte("BB"), 0o644))

	must(t, e.sh.Put(ctx, []string{filepath.Join(dir, "big")}, "/in/big", fsshell.PutOptions{}))
	must(t, e.sh.Put(ctx, []string{filepath.Join(dir, "tree")}, "/in/tree", fsshell.PutOptions{Replication: 2}))
	e.sh.Stdin = strings.NewReader("from stdin")
	must(t, e.sh.Put(ctx, []string{"-"}, "/in/stdin", fsshell.PutOptions{}))

	// put to an existing path
	err := e.sh.Put(ctx, []string{filepath.Join(dir, "big")}, "/in/big", fsshell.PutOptions{})
	if !errors.Is(err, fs.ErrExist) || err.Error() != "put: `/in/big': File exists" {
		t.Fatalf("put over an existing file: %v", err)
	}
	must(t, e.sh.Put(ctx, []string{filepath.Join(dir, "tree", "a")}, "/in/big", fsshell.PutOptions{Overwrite: true}))

	e.reset()
	must(t, e.sh.Ls(ctx, []string{"/in"}, fsshell.LsOptions{}))
	lines := strings.Split(strings.TrimSpace(e.out.String()), "\n")
	if lines[0] != "Found 3 items" || len(lines) != 4 {
		t.Fatalf("ls /in:\n%s", e.out)
	}
	row := regexp.MustCompile(`^-rw-r--r-- +3 \S+ +\S+ +1 \d{4}-\d\d-\d\d \d\d:\d\d /in/big$`)
	if !row.MatchString(lines[1]) {
		t.Fatalf("ls line %q does not look like HDFS's", lines[1])
	}
	if !regexp.MustCompile(`^drwxr-xr-x +- .* /in/tree$`).MatchString(lines[3]) {
		t.Fatalf("ls dir line %q", lines[3])
	}
	e.reset()
	must(t, e.sh.Ls(ctx, []string{"/in"}, fsshell.LsOptions{Recursive: true}))
	if !strings.Contains(e.out.String(), "/in/tree/sub/b") {
		t.Fatalf("ls -R misses nested files:\n%s", e.out)
	}

	// get: file, tree, missing, existing local file
	must(t, e.sh.Put(ctx, []string{filepath.Join(dir, "big")}, "/in/big2", fsshell.PutOptions{}))
	out := t.TempDir()
	must(t, e.sh.Get(ctx, []string{"/in/big2"}, filepath.Join(out, "big"), fsshell.GetOptions{}))
	if got, _ := os.ReadFile(filepath.Join(out, "big")); !bytes.Equal(got, big) {
		t.Fatal("get returned different bytes")
	}
	must(t, e.sh.Get(ctx, []string{"/in/tree"}, filepath.Join(out, "tree"), fsshell.GetOptions{}))
	if got, _ := os.ReadFile(filepath.Join(out, "tree", "sub", "b")); string(got) != "BB" {
		t.Fatalf("get of a tree: %q", got)
	}
	err = e.sh.Get(ctx, []string{"/nope"}, filepath.Join(out, "nope"), fsshell.GetOptions{})
	if !errors.Is(err, fs.ErrNotExist) || err.Error() != "get: `/nope': No such file or directory" {
		t.Fatalf("get missing: %v", err)
	}
	if _, serr := os.Stat(filepath.Join(out, "nope")); serr == nil {
		t.Fatal("failed get left a local file")
	}
	if err := e.sh.Get(ctx, []string{"/in/big2"}, filepath.Join(out, "big"), fsshell.GetOptions{}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("get onto an existing local file: %v", err)
	}

	e.reset()
	must(t, e.sh.Cat(ctx, []string{"/in/stdin"}))
	if e.out.String() != "from stdin" {
		t.Fatalf("cat = %q", e.out)
	}

	// rm without -r of a non-empty dir, then with
	err = e.sh.Rm(ctx, []string{"/in/tree"}, fsshell.RmOptions{})
	if !errors.Is(err, client.ErrIsDir) || err.Error() != "rm: `/in/tree': Is a directory" {
		t.Fatalf("rm non-empty: %v", err)
	}
	must(t, e.sh.Rm(ctx, []string{"/in/tree"}, fsshell.RmOptions{Recursive: true}))
	must(t, e.sh.Rm(ctx, []string{"/in/nothing"}, fsshell.RmOptions{Force: true}))
	if err := e.sh.Rm(ctx, []string{"/in/nothing"}, fsshell.RmOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("rm missing: %v", err)
	}

	// mkdir through a file, mv
	if err := e.sh.Mkdir(ctx, []string{"/in/big/x"}, true); !errors.Is(err, client.ErrNotDir) {
		t.Fatalf("mkdir through a file: %v", err)
	}
	must(t, e.sh.Mkdir(ctx, []string{"/out"}, false))
	must(t, e.sh.Mv(ctx, []string{"/in/big2"}, "/out"))
	e.reset()
	must(t, e.sh.Stat(ctx, "%n %b %r %F %o", []string{"/out/big2"}))
	if got := strings.TrimSpace(e.out.String()); got != "big2 3200000 3 regular file 1048576" {
		t.Fatalf("stat = %q", got)
	}

	e.reset()
	must(t, e.sh.Du(ctx, []string{"/out"}, true, false, false))
	if f := strings.Fields(e.out.String()); len(f) != 3 || f[0] != "3200000" || f[1] != "9600000" || f[2] != "/out" {
		t.Fatalf("du -s = %q", e.out)
	}

	e.reset()
	must(t, e.sh.Setrep(ctx, 2, []string{"/out/big2"}, true, 30*time.Second))
	e.reset()
	must(t, e.sh.Fsck(ctx, "/out", fsshell.FsckOptions{Files: true, Blocks: true, Locations: true}))
	if s := e.out.String(); !strings.Contains(s, "Status: HEALTHY") || !strings.Contains(s, "/out/big2 3200000 bytes, replicated: replication=2, 4 block(s):  OK") {
		t.Fatalf("fsck:\n%s", s)
	}
}

func TestHumanBytesAndStatFormat(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1023: "1023", 1024: "1 K", 1536: "1.5 K", 64 << 20: "64 M", 3 << 30: "3 G"} {
		if got := fsshell.HumanBytes(n); got != want {
			t.Errorf("HumanBytes(%d) = %q, want %q", n, got, want)
		}
	}
	fi := client.FileInfo{Name: "x", Size: 5, Mode: 0o640, Owner: "u", Group: "g", Replication: 2, BlockSize: 99,
		ModTime: time.Unix(0, 0)}
	if got := fsshell.FormatStat("%n|%b|%a|%A|%u:%g|%r|%o|%y|%Y|%%|%q", fi); got != "x|5|640|rw-r-----|u:g|2|99|1970-01-01 00:00:00|0|%|%q" {
		t.Fatalf("FormatStat = %q", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
