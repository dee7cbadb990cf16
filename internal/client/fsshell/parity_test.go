package fsshell_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"smarth/internal/client"
	"smarth/internal/client/fsshell"
	"smarth/internal/testcluster"
)

// as is a shell on e's cluster acting as user, with its own output.
func (e *env) as(t *testing.T, user string) (*fsshell.Shell, *bytes.Buffer) {
	out := &bytes.Buffer{}
	return &fsshell.Shell{FS: e.c.Client(t, testcluster.WithUser(user)), Out: out, Err: out, Progress: fsshell.ProgressNever}, out
}

// wantErr checks err's text and kind.
func wantErr(t *testing.T, what string, err error, kind error, text string) {
	t.Helper()
	if err == nil || (kind != nil && !errors.Is(err, kind)) || err.Error() != text {
		t.Fatalf("%s: got %v, want %q", what, err, text)
	}
}

func TestParityMessagesPathsGlobs(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	sh, out := e.as(t, "alice")
	must(t, e.sh.Mkdir(ctx, []string{"/user/alice"}, true))
	must(t, e.sh.Chown(ctx, "chown", "alice", "", []string{"/user/alice"}, false))

	// Relative paths start at /user/alice; errors name the path as typed.
	must(t, sh.Mkdir(ctx, []string{"logs/2024", "logs/2025", "data"}, true))
	must(t, sh.Touchz(ctx, []string{"logs/2024/a.log", "logs/2024/b.log", "logs/2025/c.log", "data/x.csv"}))
	wantErr(t, "ls missing", sh.Ls(ctx, []string{"nope"}, fsshell.LsOptions{}), fs.ErrNotExist, "ls: `nope': No such file or directory")
	wantErr(t, "mkdir existing", sh.Mkdir(ctx, []string{"data"}, false), fs.ErrExist, "mkdir: `data': File exists")
	wantErr(t, "cat dir", sh.Cat(ctx, []string{"data"}), client.ErrIsDir, "cat: `data': Is a directory")
	wantErr(t, "rm dir", sh.Rm(ctx, []string{"data"}, fsshell.RmOptions{}), client.ErrIsDir, "rm: `data': Is a directory")
	wantErr(t, "rmdir file", sh.Rmdir(ctx, []string{"data/x.csv"}, false), client.ErrNotDir, "rmdir: `data/x.csv': Is not a directory")
	wantErr(t, "rmdir non-empty", sh.Rmdir(ctx, []string{"data"}, false), client.ErrNotEmpty, "rmdir: `data': Directory is not empty")
	must(t, sh.Rmdir(ctx, []string{"data"}, true))
	wantErr(t, "mv into a missing dir", sh.Mv(ctx, []string{"data/x.csv"}, "/user/alice/missing/x.csv"), fs.ErrNotExist,
		"mv: `/user/alice/missing/x.csv': No such file or directory: `/user/alice/missing/x.csv'")
	wantErr(t, "mv missing source", sh.Mv(ctx, []string{"gone"}, "data/y"), fs.ErrNotExist, "mv: `gone': No such file or directory")
	wantErr(t, "touchz non-empty", func() error {
		sh.Stdin = strings.NewReader("x")
		must(t, sh.Put(ctx, []string{"-"}, "/user/alice/full", fsshell.PutOptions{}))
		return sh.Touchz(ctx, []string{"full"})
	}(), nil, "touchz: `full': Not a zero-length file")

	// Globs against the namespace, in every command that takes paths.
	out.Reset()
	must(t, sh.Ls(ctx, []string{"logs/*/*.log"}, fsshell.LsOptions{PathOnly: true}))
	if got := out.String(); got != "logs/2024/a.log\nlogs/2024/b.log\nlogs/2025/c.log\n" { // relative as given, as hdfs dfs
		t.Fatalf("ls glob:\n%s", got)
	}
	out.Reset()
	must(t, sh.Ls(ctx, []string{"/user/alice/logs/{2024/[!a]*,2025/?.log}"}, fsshell.LsOptions{PathOnly: true}))
	if got := out.String(); got != "/user/alice/logs/2024/b.log\n/user/alice/logs/2025/c.log\n" {
		t.Fatalf("ls braces and [!...]:\n%s", got)
	}
	wantErr(t, "glob without a match", sh.Ls(ctx, []string{"logs/*.txt"}, fsshell.LsOptions{}), fs.ErrNotExist,
		"ls: `logs/*.txt': No such file or directory")
	must(t, sh.Rm(ctx, []string{"nothing*"}, fsshell.RmOptions{Force: true}))
	out.Reset()
	must(t, sh.Rm(ctx, []string{"logs/2024/*.log"}, fsshell.RmOptions{}))
	if got := out.String(); got != "Deleted logs/2024/a.log\nDeleted logs/2024/b.log\n" {
		t.Fatalf("rm glob:\n%s", got)
	}

	// Several paths: each failure is reported, the rest still run.
	out.Reset()
	err := sh.Ls(ctx, []string{"nope", "logs"}, fsshell.LsOptions{})
	if !errors.Is(err, fsshell.ErrSome) || !strings.Contains(out.String(), "ls: `nope': No such file or directory") ||
		!strings.Contains(out.String(), " logs/2025\n") {
		t.Fatalf("ls of a missing and a present path: %v\n%s", err, out)
	}

	// test answers without messages.
	for _, c := range []struct {
		flag, path string
		want       bool
	}{{"e", "logs", true}, {"d", "logs", true}, {"f", "logs", false}, {"e", "nope", false}, {"f", "full", true},
		{"s", "full", true}, {"z", "full", false}, {"z", "logs/2025/c.log", true}, {"e", "logs/*/c.log", true}, {"e", "nope/*", false}} {
		got, err := sh.Test(ctx, c.flag, c.path)
		if err != nil || got != c.want {
			t.Errorf("test -%s %s = %v %v, want %v", c.flag, c.path, got, err, c.want)
		}
	}
}

func TestParityPermissionsSecondUser(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, _ := e.as(t, "alice")
	bob, bobOut := e.as(t, "bob")
	must(t, e.sh.Mkdir(ctx, []string{"/user/alice", "/shared"}, true))
	must(t, e.sh.Chown(ctx, "chown", "alice", "", []string{"/user/alice"}, false))
	alice.Stdin = strings.NewReader("secret")
	must(t, alice.Put(ctx, []string{"-"}, "/user/alice/notes", fsshell.PutOptions{}))

	must(t, bob.Cat(ctx, []string{"/user/alice/notes"})) // 644 under 755: readable
	must(t, alice.Chmod(ctx, "700", []string{"."}, false))
	err := bob.Cat(ctx, []string{"/user/alice/notes"})
	if !errors.Is(err, fs.ErrPermission) || !strings.HasPrefix(err.Error(), "cat: `/user/alice/notes': Permission denied") {
		t.Fatalf("bob reads alice's file after chmod 700: %v", err)
	}
	wantErr(t, "bob chmods alice's home", bob.Chmod(ctx, "777", []string{"/user/alice"}, false), fs.ErrPermission,
		"chmod: `/user/alice': Permission denied: only the owner (alice) or a superuser may change the mode")
	err = alice.Chown(ctx, "chown", "bob", "", []string{"notes"}, false)
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "only a superuser may change the owner") {
		t.Fatalf("alice gives a file away: %v", err)
	}

	// Symbolic and recursive chmod, checked through stat.
	must(t, alice.Chmod(ctx, "go+rX", []string{"/user/alice"}, true))
	e.reset()
	must(t, e.sh.Stat(ctx, "%a %A %u", []string{"/user/alice", "/user/alice/notes"}))
	if got := e.out.String(); got != "755 rwxr-xr-x alice\n644 rw-r--r-- alice\n" {
		t.Fatalf("after chmod -R go+rX:\n%s", got)
	}
	bobOut.Reset()
	must(t, bob.Cat(ctx, []string{"/user/alice/notes"}))

	// The superuser gives /shared to bob; then only bob may write there.
	must(t, e.sh.Chown(ctx, "chown", "bob", "bob", []string{"/shared"}, true))
	must(t, bob.Chmod(ctx, "1777", []string{"/shared"}, false))
	must(t, alice.Touchz(ctx, []string{"/shared/a"}))
	must(t, bob.Chmod(ctx, "755", []string{"/shared"}, false))
	err = alice.Touchz(ctx, []string{"/shared/b"})
	if !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("alice writes in bob's 755 directory: %v", err)
	}
	e.reset()
	must(t, e.sh.Ls(ctx, []string{"/shared"}, fsshell.LsOptions{Dirs: true}))
	if !strings.HasPrefix(e.out.String(), "drwxr-xr-x   - bob") {
		t.Fatalf("ls -d after chown bob:bob:\n%s", e.out)
	}
	wantErr(t, "chgrp to a group bob is not in", bob.Chown(ctx, "chgrp", "", "wheel", []string{"/shared"}, false), fs.ErrPermission,
		"chgrp: `/shared': Permission denied: bob is not a member of group wheel")
}

func TestParityNewCommands(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	dir := t.TempDir()
	body := strings.Repeat("0123456789", 300) // 3000 bytes: head and tail differ
	must(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte(body), 0o640))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("unzipped\n"))
	must(t, zw.Close())
	must(t, os.WriteFile(filepath.Join(dir, "f.gz"), gz.Bytes(), 0o644))
	must(t, e.sh.Mkdir(ctx, []string{"/d/sub"}, true))
	must(t, e.sh.Put(ctx, []string{filepath.Join(dir, "f.txt"), filepath.Join(dir, "f.gz")}, "/d", fsshell.PutOptions{}))

	e.reset()
	must(t, e.sh.Head(ctx, []string{"/d/f.txt"}))
	if e.out.String() != body[:1024] {
		t.Fatalf("head printed %d bytes", e.out.Len())
	}
	e.reset()
	must(t, e.sh.Tail(ctx, "/d/f.txt", false, 0))
	if e.out.String() != body[len(body)-1024:] {
		t.Fatalf("tail printed %d bytes", e.out.Len())
	}
	e.reset()
	must(t, e.sh.Text(ctx, []string{"/d/f.gz"}))
	if e.out.String() != "unzipped\n" {
		t.Fatalf("text of gzip = %q", e.out)
	}

	// cp with -p, then over an existing file with and without -f.
	must(t, e.sh.Chmod(ctx, "600", []string{"/d/f.txt"}, false))
	must(t, e.sh.Cp(ctx, []string{"/d/f.txt"}, "/d/sub", fsshell.CpOptions{Preserve: true}))
	wantErr(t, "cp onto a file", e.sh.Cp(ctx, []string{"/d/f.gz"}, "/d/sub/f.txt", fsshell.CpOptions{}), fs.ErrExist,
		"cp: `/d/sub/f.txt': File exists")
	must(t, e.sh.Cp(ctx, []string{"/d"}, "/copy", fsshell.CpOptions{}))
	must(t, e.sh.Cp(ctx, []string{"/d/f.gz"}, "/copy/sub/f.txt", fsshell.CpOptions{Overwrite: true}))
	e.reset()
	must(t, e.sh.Stat(ctx, "%n %b %a", []string{"/d/sub/f.txt", "/copy/sub/f.txt", "/copy/f.txt"}))
	if got := e.out.String(); got != "f.txt 3000 600\nf.txt "+itoa(gz.Len())+" 644\nf.txt 3000 644\n" {
		t.Fatalf("after cp:\n%s", got)
	}
	wantErr(t, "cp into itself", e.sh.Cp(ctx, []string{"/d"}, "/d/sub", fsshell.CpOptions{}), fs.ErrInvalid,
		"cp: `/d/sub/d': invalid argument: cannot copy /d into itself")

	// find, count, df, du -s -h, ls -S -r.
	e.reset()
	must(t, e.sh.Find(ctx, []string{"/"}, fsshell.FindOptions{Name: "f.*", Type: 'f'}))
	if got := e.out.String(); got != "/copy/f.gz\n/copy/f.txt\n/copy/sub/f.txt\n/d/f.gz\n/d/f.txt\n/d/sub/f.txt\n" {
		t.Fatalf("find -name f.* -type f:\n%s", got)
	}
	e.reset()
	must(t, e.sh.Count(ctx, []string{"/d"}, fsshell.CountOptions{Quotas: true, Header: true}))
	lines := strings.Split(strings.TrimRight(e.out.String(), "\n"), "\n")
	if f := strings.Fields(lines[1]); len(lines) != 2 || !strings.HasPrefix(lines[0], "       QUOTA       REM_QUOTA") ||
		strings.Join(f, " ") != "none inf none inf 2 3 "+itoa(6000+gz.Len())+" /d" {
		t.Fatalf("count -q -v:\n%s", e.out)
	}
	e.reset()
	must(t, e.sh.Df(ctx, true))
	if lines := strings.Split(e.out.String(), "\n"); !strings.HasPrefix(lines[0], "Filesystem") || !strings.HasPrefix(lines[1], "hdfs://127.0.0.1:") {
		t.Fatalf("df -h:\n%s", e.out)
	}
	e.reset()
	must(t, e.sh.Ls(ctx, []string{"/d"}, fsshell.LsOptions{BySize: true, Reverse: true, PathOnly: true}))
	if got := e.out.String(); got != "/d/sub\n/d/f.gz\n/d/f.txt\n" {
		t.Fatalf("ls -S -r -C:\n%s", got)
	}

	// get -f -p: over an existing file, with the remote mode and times.
	local := filepath.Join(dir, "back.txt")
	must(t, os.WriteFile(local, []byte("old"), 0o644))
	wantErr(t, "get onto a local file", e.sh.Get(ctx, []string{"/d/f.txt"}, local, fsshell.GetOptions{}), fs.ErrExist,
		"get: `"+local+"': File exists")
	must(t, e.sh.Get(ctx, []string{"/d/f.txt"}, local, fsshell.GetOptions{Overwrite: true, Preserve: true}))
	st, err := os.Stat(local)
	remote, _ := e.c.Client(t).Stat(ctx, "/d/f.txt")
	if err != nil || st.Size() != 3000 || st.Mode().Perm() != 0o600 || !st.ModTime().Equal(remote.ModTime) {
		t.Fatalf("get -f -p: %v %v", st, err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
