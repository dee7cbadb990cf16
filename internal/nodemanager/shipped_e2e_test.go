package nodemanager_test

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"smarth/internal/container"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/mapreduce/jobclient"
	"smarth/internal/nodemanager"
	"smarth/internal/resourcemanager"
	"smarth/internal/testcluster/mrtest"
)

// TestStreamingShipsFilesAndArchives is issue 26's shipped-files case: a
// streaming job whose Python mapper (-files) imports a helper module from
// a zip (-archives #libs) runs on two node managers, each task in its
// own container as an unprivileged user, from a local directory that no
// node has. The control runs the same mapper without shipping it and
// must fail: the files reach the tasks only by being shipped.
func TestStreamingShipsFilesAndArchives(t *testing.T) {
	needContainers(t)
	if testing.Short() {
		t.Skip("a multi-node MapReduce run; skipped with -short")
	}
	python := "/usr/bin/python3" // not a per-user shim: the task runs as another user
	if _, err := os.Stat(python); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no %s: %v", python, err)
		}
		t.Skipf("no %s", python)
	}
	// On a path open to all (0711), as a node's local dirs are: Python
	// opens its script by the absolute path of its work directory.
	root := t.TempDir()
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	lfs, err := mapreduce.NewLocalFS(filepath.Join(root, "fs"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(lfs.Root, "in"), 0o755)
	var want []string
	for i := range 4 {
		var b strings.Builder
		for j := range 50 {
			w := fmt.Sprintf("w%d_%d", i, j)
			fmt.Fprintln(&b, w)
			want = append(want, "TAGGED:"+strings.ToUpper(w))
		}
		os.WriteFile(filepath.Join(lfs.Root, "in", fmt.Sprintf("part%d", i)), []byte(b.String()), 0o644)
	}

	// The user's local directory: a mapper script and a zip of helpers.
	local := filepath.Join(root, "local")
	os.Mkdir(local, 0o700)
	os.WriteFile(filepath.Join(local, "mapper.py"), []byte(
		"import sys\nsys.path.insert(0, 'libs')\nfrom tagger import tag\nfor line in sys.stdin:\n    print(tag(line.strip()))\n"), 0o644)
	zf, err := os.Create(filepath.Join(local, "helpers.zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(zf)
	f, _ := zw.Create("tagger/__init__.py")
	f.Write([]byte("def tag(w):\n    return 'TAGGED:' + w.upper()\n"))
	zw.Close()
	zf.Close()

	reg := mapreduce.NewRegistry(apps.AllWith(apps.Options{Out: io.Discard})...)
	mr := mrtest.Start(t, mrtest.Options{FS: lfs, Registry: reg, Hosts: []string{"n1", "n2"},
		RM: func(c *resourcemanager.Config) { c.AllowStreaming = true; c.MaxAttempts = 1 },
		NM: func(_ int, c *nodemanager.Config) { c.ContainerExecutor = container.ExecutorLinux }})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	jc := mr.Client()
	mapper := python + " mapper.py"

	params, staging, err := jobclient.Ship(ctx, lfs, "/user/alice", []string{filepath.Join(local, "mapper.py")}, []string{filepath.Join(local, "helpers.zip") + "#libs"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(staging, "/user/alice/.staging/") {
		t.Errorf("staging directory %q is not under the user's home", staging)
	}
	params["input"], params["output"], params["reducer"], params["mapper"] = "/in", "/out", "NONE", mapper
	id, err := jc.Submit(ctx, "streaming", params)
	if err != nil {
		t.Fatal(err)
	}
	res, err := jc.Wait(ctx, id)
	if res == nil || res.State != mapreduce.StateSucceeded {
		t.Fatalf("job with shipped files: %+v %v", res, err)
	}
	var got []string
	parts, _ := filepath.Glob(filepath.Join(lfs.Root, "out", "part-m-*"))
	for _, p := range parts {
		b, _ := os.ReadFile(p)
		got = append(got, strings.Fields(string(b))...)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("output: %d lines, want %d (first: %v)", len(got), len(want), got[:min(3, len(got))])
	}

	// Control: the same mapper, nothing shipped.
	id, err = jc.Submit(ctx, "streaming", map[string]string{"input": "/in", "output": "/out2", "reducer": "NONE", "mapper": mapper})
	if err != nil {
		t.Fatal(err)
	}
	res, _ = jc.Wait(ctx, id)
	if res == nil || res.State != mapreduce.StateFailed {
		t.Fatalf("the control job without shipped files did not fail: %+v", res)
	}
	t.Logf("control: %s", res.Error)
}
