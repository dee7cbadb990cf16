package resourcemanager_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"smarth/internal/container"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/nodemanager"
	"smarth/internal/resourcemanager"
	"smarth/internal/testcluster/mrtest"
	"smarth/internal/testenv"
)

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// "pid (comm) S ...": the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// readPIDs reads the pids the streaming mappers wrote, one a line.
func readPIDs(dir string) []int {
	var out []int
	files, _ := filepath.Glob(filepath.Join(dir, "*.pids"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, l := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(l); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// TestKillStopsStreamingProcessTrees kills a streaming job whose mappers
// each start two `sleep 600` children and wait for them. The job must
// end KILLED (its attempts report killed once their process groups are
// gone) and no child may survive. The control is a child that leaves the
// task's process group on purpose (setsid): it survives the kill, so the
// check does see survivors (it is then killed here).
func TestKillStopsStreamingProcessTrees(t *testing.T) {
	root := t.TempDir()
	lfs, err := mapreduce.NewLocalFS(filepath.Join(root, "fs"))
	if err != nil {
		t.Fatal(err)
	}
	pids := filepath.Join(root, "pids")
	os.MkdirAll(pids, 0o755)
	os.MkdirAll(filepath.Join(lfs.Root, "in"), 0o755)
	for i := range 2 {
		os.WriteFile(filepath.Join(lfs.Root, "in", fmt.Sprintf("f%d", i)), []byte("a\nb\n"), 0o644)
	}
	testenv.NeedTools(t, "setsid") // for the control
	reg := mapreduce.NewRegistry(apps.AllWith(apps.Options{Out: io.Discard})...)
	mr := mrtest.Start(t, mrtest.Options{FS: lfs, Registry: reg, Hosts: []string{"n1", "n2"},
		RM: func(c *resourcemanager.Config) { c.AllowStreaming = true },
		// Process groups are what this test is about (and its mappers
		// write pids into the test's directory): the default executor,
		// without a container's cgroup, which would take the setsid
		// control too (internal/container tests that).
		NM: func(_ int, c *nodemanager.Config) { c.ContainerExecutor = container.ExecutorDefault }})

	f := filepath.Join(pids, "m$SMARTH_TASK_INDEX.pids")
	mapper := fmt.Sprintf(`sleep 600 & echo $! >> %[1]s; sleep 600 & echo $! >> %[1]s; setsid sleep 600 & echo $! > %[1]s.escaped; cat >/dev/null; wait`, f)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	jc := mr.Client()
	id, err := jc.Submit(ctx, "streaming", map[string]string{"input": "/in", "output": "/out", "mapper": mapper, "reducer": "NONE"})
	if err != nil {
		t.Fatal(err)
	}
	mr.WaitFor(t, "both mappers to start their children", func() bool { return len(readPIDs(pids)) == 4 })
	children := readPIDs(pids)
	if err := jc.Kill(ctx, id); err != nil {
		t.Fatal(err)
	}
	res, err := jc.Wait(ctx, id)
	if res == nil || res.State != mapreduce.StateKilled {
		t.Fatalf("after kill: %+v, %v; want KILLED", res, err)
	}
	// SIGKILL to a group is delivered at once but each process dies when
	// next scheduled; on a loaded machine that can lag the job's KILLED
	// state by a moment. The issue asks for "within seconds".
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range children {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("child %d of a killed task is still running", pid)
		}
	}
	// Control: the setsid child left the group and so survived.
	escaped, _ := filepath.Glob(filepath.Join(pids, "*.escaped"))
	survivors := 0
	for _, e := range escaped {
		b, _ := os.ReadFile(e)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && alive(pid) {
			survivors++
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if survivors == 0 {
		t.Errorf("control: no process that left the task's group survived (%d escaped), so the check cannot see survivors", len(escaped))
	}
	if _, err := os.Stat(filepath.Join(lfs.Root, "out")); err == nil {
		t.Error("killed job has an output directory")
	}
}
