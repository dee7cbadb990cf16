package container

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// BenchmarkContainerLaunch measures what a container adds to a task's
// launch: the same trivial streaming command (/bin/sh -c true) started
// and waited for the old way (a process group, the daemon's user and
// environment) and in a container (user switch, allow-listed
// environment, work directory made and removed, cgroup made with its
// limits, killed and removed), interleaved so both see the same machine.
// It reports each path's median and their ratio:
//
//	go test -run '^$' -bench ContainerLaunch -benchtime 200x ./internal/container
func BenchmarkContainerLaunch(b *testing.B) {
	if err := HostSupport(); err != nil {
		b.Skipf("skipped: %v", err)
	}
	root := b.TempDir()
	l, err := NewLauncher(Config{Executor: ExecutorLinux, Policy: localPolicy("nobody"), Dir: root + "/containers",
		Name: fmt.Sprintf("smarth-bench-%d", os.Getpid()), Secure: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	start := func(c *Container) error {
		cmd := exec.Command("/bin/sh", "-c", "true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var err error
		if c == nil {
			cmd.Env = append(os.Environ(), "SMARTH_TASK_INDEX=0")
			err = cmd.Start()
		} else if err = c.Ready(); err == nil {
			err = c.Start(cmd, []string{"SMARTH_TASK_INDEX=0"})
		}
		if err != nil {
			return err
		}
		return cmd.Wait()
	}
	var pg, ctr []time.Duration
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		if err := start(nil); err != nil {
			b.Fatal(err)
		}
		pg = append(pg, time.Since(t0))
		t0 = time.Now()
		c := l.New(Spec{ID: fmt.Sprintf("attempt_bench_m_%06d_0", i), User: "alice", MemoryBytes: 256 << 20, VCores: 1})
		if err := start(c); err != nil {
			b.Fatal(err)
		}
		if err := c.Destroy(); err != nil {
			b.Fatal(err)
		}
		ctr = append(ctr, time.Since(t0))
	}
	med := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	mp, mc := med(pg), med(ctr)
	b.ReportMetric(float64(mp.Microseconds()), "pgroup-median-µs")
	b.ReportMetric(float64(mc.Microseconds()), "container-median-µs")
	b.ReportMetric(float64(mc)/float64(mp), "ratio")
	b.ReportMetric(0, "ns/op")
}
