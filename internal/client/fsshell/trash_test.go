package fsshell_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/client/fsshell"
	"smarth/internal/testcluster"
)

// trashEnv is newEnv with the namenode's trash interval set, acting as
// alice with a home directory.
func trashEnv(t *testing.T, interval time.Duration) *env {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 1, BlockSize: 1 << 20,
		NameNode: map[string]any{"trash_interval": interval.String()}})
	e := &env{out: &bytes.Buffer{}, err: &bytes.Buffer{}, c: c}
	e.sh = &fsshell.Shell{FS: c.Client(t), Out: e.out, Err: e.err, Progress: fsshell.ProgressNever}
	return e
}

func exists(t *testing.T, e *env, p string) bool {
	t.Helper()
	_, err := e.sh.FS.Stat(context.Background(), p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// TestRmMovesToTrash: rm moves to .Trash/Current/<path> (collisions as
// HDFS: a taken name and a file where a directory should be get the time
// appended), -skipTrash and rm inside the trash delete; expunge
// checkpoints Current and deletes checkpoints older than the interval;
// the trash is in the namespace, so it survives a namenode restart.
func TestRmMovesToTrash(t *testing.T) {
	e := trashEnv(t, time.Hour)
	ctx := context.Background()
	home := "/user/" + e.sh.FS.User()
	trash := home + "/.Trash"
	now := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC).Local()
	e.sh.Now = func() time.Time { return now }
	put := func(p string) {
		t.Helper()
		e.sh.Stdin = strings.NewReader(p)
		must(t, e.sh.Put(ctx, []string{"-"}, p, fsshell.PutOptions{Overwrite: true}))
	}
	must(t, e.sh.FS.Mkdir(ctx, "/data/d", 0o755, true))
	put("/data/a")
	put("/data/d/b")

	must(t, e.sh.Rm(ctx, []string{"/data/a"}, fsshell.RmOptions{}))
	if got, want := e.err.String(), "Moved: '/data/a' to trash at: "+trash+"/Current/data/a\n"; got != want {
		t.Fatalf("rm printed %q; want %q", got, want)
	}
	if exists(t, e, "/data/a") || !exists(t, e, trash+"/Current/data/a") {
		t.Fatal("rm did not move /data/a into the trash")
	}
	if st, _ := e.sh.FS.Stat(ctx, trash); st.Mode.Perm() != 0o700 {
		t.Fatalf("trash mode %v; want 0700", st.Mode)
	}
	// The same name again: the time in ms is appended.
	put("/data/a")
	e.reset()
	must(t, e.sh.Rm(ctx, []string{"/data/a"}, fsshell.RmOptions{}))
	again := trash + "/Current/data/a" + "1709287200000"
	if !exists(t, e, again) {
		t.Fatalf("second rm of /data/a: %s; want it at %s", e.out, again)
	}
	// A file in the trash where a directory is needed: the directory is
	// made beside it with the time appended.
	must(t, e.sh.FS.Mkdir(ctx, "/data/a", 0o755, false))
	put("/data/a/c")
	now = now.Add(time.Second)
	must(t, e.sh.Rm(ctx, []string{"/data/a/c"}, fsshell.RmOptions{}))
	if !exists(t, e, trash+"/Current/data/a1709287201000/c") {
		t.Fatalf("rm of /data/a/c with a file at Current/data/a: %s", e.out)
	}
	// A directory without -r is still refused; with -r it moves whole.
	if err := e.sh.Rm(ctx, []string{"/data/d"}, fsshell.RmOptions{}); err == nil {
		t.Fatal("rm of a directory without -r succeeded")
	}
	must(t, e.sh.Rm(ctx, []string{"/data/d"}, fsshell.RmOptions{Recursive: true}))
	if !exists(t, e, trash+"/Current/data/d/b") {
		t.Fatal("rm -r did not move the directory into the trash")
	}
	// -skipTrash, and rm inside the trash, delete at once.
	put("/data/x")
	e.reset()
	must(t, e.sh.Rm(ctx, []string{"/data/x"}, fsshell.RmOptions{SkipTrash: true}))
	if e.out.String() != "Deleted /data/x\n" || exists(t, e, trash+"/Current/data/x") {
		t.Fatalf("rm -skipTrash: %q", e.out)
	}
	e.reset()
	must(t, e.sh.Rm(ctx, []string{again}, fsshell.RmOptions{}))
	if e.out.String() != "Deleted "+again+"\n" {
		t.Fatalf("rm in the trash: %q", e.out)
	}
	// The home directory holds the trash: it cannot go there.
	if err := e.sh.Rm(ctx, []string{home}, fsshell.RmOptions{Recursive: true}); err == nil || !strings.Contains(err.Error(), "Consider using -skipTrash") {
		t.Fatalf("rm -r of the home directory: %v", err)
	}

	e.c.RestartNameNode()
	if !exists(t, e, trash+"/Current/data/d/b") {
		t.Fatal("the trash did not survive a namenode restart")
	}

	// expunge: Current becomes a checkpoint named after the time; a
	// checkpoint older than the interval goes, a newer one and a stray
	// entry stay.
	now = time.Date(2024, 3, 1, 10, 0, 0, 0, time.Local)
	must(t, e.sh.FS.Mkdir(ctx, trash+"/240301083000", 0o700, false)) // 1.5 h old
	must(t, e.sh.FS.Mkdir(ctx, trash+"/240301093000", 0o700, false)) // 0.5 h old
	must(t, e.sh.FS.Mkdir(ctx, trash+"/junk", 0o700, false))
	e.reset()
	must(t, e.sh.Expunge(ctx, false))
	want := "Deleted trash checkpoint: " + trash + "/240301083000\nCreated trash checkpoint: " + trash + "/240301100000\n"
	if e.out.String() != want {
		t.Fatalf("expunge printed\n%s\nwant\n%s", e.out, want)
	}
	if exists(t, e, trash+"/Current") || !exists(t, e, trash+"/240301100000/data/d/b") || !exists(t, e, trash+"/240301093000") || !exists(t, e, trash+"/junk") {
		t.Fatal("expunge left the wrong entries")
	}
	// A second checkpoint in the same second gets a -1 suffix.
	put("/data/y")
	must(t, e.sh.Rm(ctx, []string{"/data/y"}, fsshell.RmOptions{}))
	e.reset()
	must(t, e.sh.Expunge(ctx, false))
	if !exists(t, e, trash+"/240301100000-1/data/y") {
		t.Fatalf("second expunge: %s", e.out)
	}
	// -immediate deletes every checkpoint.
	e.reset()
	must(t, e.sh.Expunge(ctx, true))
	if exists(t, e, trash+"/240301100000") || exists(t, e, trash+"/240301100000-1") || exists(t, e, trash+"/240301093000") {
		t.Fatalf("expunge -immediate left checkpoints: %s", e.out)
	}
}

// TestRmToTrashNeedsDelete: rm's move to the trash asks what a delete
// would (Rename.TO_TRASH): bob may not trash his directory while it holds
// root's non-empty directory, which he could not delete either; the tree
// stays where it was. A plain rename let the move through, and the trash
// emptier, a superuser, deleted root's files later.
func TestRmToTrashNeedsDelete(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 1, Simple: true,
		NameNode: map[string]any{"trash_interval": time.Hour.String()}})
	ctx := context.Background()
	admin := c.Client(t)
	must(t, admin.Mkdir(ctx, "/shared/d/locked", 0o755, true))
	must(t, admin.SetPermission(ctx, "/shared", 0o777))
	must(t, admin.Mkdir(ctx, "/user/bob", 0o755, true))
	for _, p := range []string{"/shared/d", "/user/bob"} {
		must(t, admin.SetOwner(ctx, p, "bob", ""))
	}
	fw, err := admin.Create(ctx, "/shared/d/locked/f", client.CreateOptions{})
	must(t, err)
	must(t, fw.Close())
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	bob := &fsshell.Shell{FS: c.Client(t, testcluster.WithUser("bob")), Out: out, Err: errOut, Progress: fsshell.ProgressNever}

	err = bob.Rm(ctx, []string{"/shared/d"}, fsshell.RmOptions{Recursive: true})
	if err == nil || !strings.HasPrefix(err.Error(), "rm: Failed to move to trash: `/shared/d': Permission denied") {
		t.Fatalf("bob's rm -r of a tree holding root's directory: %v (out %q)", err, out)
	}
	if _, err := admin.Stat(ctx, "/shared/d/locked/f"); err != nil {
		t.Fatalf("the refused trash move moved root's file: %v", err)
	}
	// bob's own file still goes to his trash.
	fw, err = bob.FS.Create(ctx, "/shared/d/mine", client.CreateOptions{})
	must(t, err)
	must(t, fw.Close())
	must(t, bob.Rm(ctx, []string{"/shared/d/mine"}, fsshell.RmOptions{}))
	if _, err := admin.Stat(ctx, "/user/bob/.Trash/Current/shared/d/mine"); err != nil {
		t.Fatalf("bob's file is not in his trash (%q): %v", out, err)
	}
}
