package nodemanager_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"smarth/internal/container"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/nodemanager"
	"smarth/internal/resourcemanager"
	"smarth/internal/testcluster/mrtest"
)

// needContainers skips (outside CI) or fails (CI=true) a test that needs
// root and cgroups.
func needContainers(t *testing.T) {
	t.Helper()
	if err := container.HostSupport(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skipf("skipped: %v", err)
	}
}

// TestStreamingTaskRunsInAContainer runs streaming jobs through a
// resource manager and node managers (the default linux executor, as
// root). A mapper that tries what the attacker did prints a
// uid that is not 0, cannot read a 0600 root file in a 0700 directory
// standing for the cluster's keys, and sees no SMARTH_ variable but the
// task index; a mapper that allocates 200 MB past --memory-mb 32 fails the job
// with YARN's over-the-limit message; a request above the node's
// max_memory_mb fails naming the limit.
func TestStreamingTaskRunsInAContainer(t *testing.T) {
	needContainers(t)
	if testing.Short() {
		t.Skip("a multi-process MapReduce run; skipped with -short")
	}
	t.Setenv("SMARTH_TOKEN_FILE", "/the/daemons/token")
	root := t.TempDir()
	lfs, err := mapreduce.NewLocalFS(filepath.Join(root, "fs"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(lfs.Root, "in"), 0o755)
	os.WriteFile(filepath.Join(lfs.Root, "in", "f"), []byte("a\nb\n"), 0o644)
	keys := filepath.Join(root, "keys")
	os.Mkdir(keys, 0o700)
	key := filepath.Join(keys, "auth.key")
	os.WriteFile(key, []byte("identity-secret\n"), 0o600)

	reg := mapreduce.NewRegistry(apps.AllWith(apps.Options{Out: io.Discard})...)
	mr := mrtest.Start(t, mrtest.Options{FS: lfs, Registry: reg, Hosts: []string{"n1"},
		RM: func(c *resourcemanager.Config) { c.AllowStreaming = true; c.MaxAttempts = 1 },
		NM: func(_ int, c *nodemanager.Config) { c.ContainerExecutor = container.ExecutorLinux }})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	jc := mr.Client()
	run := func(out string, params map[string]string) *mapreduce.Result {
		t.Helper()
		params["input"], params["output"], params["reducer"] = "/in", out, "NONE"
		id, err := jc.Submit(ctx, "streaming", params)
		if err != nil {
			t.Fatal(err)
		}
		res, err := jc.Wait(ctx, id)
		if res == nil {
			t.Fatalf("job %s: %v", id, err)
		}
		return res
	}

	mapper := fmt.Sprintf(`cat >/dev/null; echo "uid=$(id -u)"; cat %s 2>&1 | sed 's/^/key:/'; env | grep '^SMARTH_' | sed 's/^/env:/'; true`, key)
	res := run("/spy", map[string]string{"mapper": mapper})
	if res.State != mapreduce.StateSucceeded {
		t.Fatalf("spy job: %s %s", res.State, res.Error)
	}
	b, err := os.ReadFile(filepath.Join(lfs.Root, "spy", "part-m-00000"))
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	t.Logf("spy output:\n%s", out)
	if !strings.Contains(out, "uid=") || strings.Contains(out, "uid=0\n") {
		t.Errorf("the mapper ran as root, or printed no uid:\n%s", out)
	}
	if strings.Contains(out, "identity-secret") || !strings.Contains(out, "Permission denied") {
		t.Errorf("the mapper read the keys directory's file:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "env:"); ok && !strings.HasPrefix(v, "SMARTH_TASK_INDEX=") {
			t.Errorf("daemon variable reached the task: %s", v)
		}
	}

	res = run("/oom", map[string]string{"mapper": "cat >/dev/null; head -c 200M /dev/zero | tail >/dev/null", mapreduce.ParamMemoryMB: "32"})
	t.Logf("over the limit: %s", res.Error)
	if res.State != mapreduce.StateFailed || !strings.Contains(res.Error, "is running beyond physical memory limits") ||
		!strings.Contains(res.Error, "of 32 MB physical memory used") {
		t.Errorf("over its memory limit: %s %q, want FAILED with the memory limit named", res.State, res.Error)
	}

	res = run("/big", map[string]string{"mapper": "cat", mapreduce.ParamMemoryMB: "100000"})
	if res.State != mapreduce.StateFailed || !strings.Contains(res.Error, "memory-mb=100000 is above this node's maximum 8192 (max_memory_mb)") {
		t.Errorf("above max_memory_mb: %s %q", res.State, res.Error)
	}
}
