package namenode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"smarth/internal/rpc/dfspb"
)

// buildSmarth compiles the smarth binary into a temporary directory.
func buildSmarth(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "smarth")
	out, err := exec.Command("go", "build", "-o", bin, "smarth/cmd/smarth").CombinedOutput()
	if err == nil {
		return bin
	}
	// A binary that does not build is a failure, whoever's package breaks
	// it: skipping would report the kill -9 durability check as passed
	// when it never ran.
	t.Fatalf("go build smarth (needed for the kill -9 test): %v\n%s", err, out)
	return ""
}

// nnProcess is a namenode child process.
type nnProcess struct {
	cmd                *exec.Cmd
	readyFile, logFile string
	ready              struct {
		PID  int    `json:"pid"`
		RPC  string `json:"rpc"`
		HTTP string `json:"http"`
	}
	exited chan struct{}
}

func startNNProcess(t *testing.T, bin, config, dir string, n int, flags ...string) *nnProcess {
	t.Helper()
	readyFile := filepath.Join(dir, fmt.Sprintf("ready-%d.json", n))
	p := &nnProcess{exited: make(chan struct{}), readyFile: readyFile, logFile: filepath.Join(dir, fmt.Sprintf("nn-%d.log", n))}
	p.cmd = exec.Command(bin, append([]string{"namenode", "--config", config, "--ready-file", readyFile, "--log-file", p.logFile}, flags...)...)
	p.cmd.Stderr = os.Stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	waitFor(t, "the namenode's ready file "+readyFile, func() bool {
		b, err := os.ReadFile(readyFile)
		return err == nil && json.Unmarshal(b, &p.ready) == nil && p.ready.RPC != ""
	})
	if p.ready.PID != p.cmd.Process.Pid {
		t.Fatalf("ready file pid %d, child pid %d", p.ready.PID, p.cmd.Process.Pid)
	}
	return p
}

// TestKill9DuringCreates starts the real binary, bursts creates from eight
// goroutines, kills the namenode with SIGKILL in the middle, restarts it
// and checks that every acknowledged create (and complete) is there.
// It runs once per way of writing the edit log (edit_log_io).
func TestKill9DuringCreates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the smarth binary")
	}
	bin := buildSmarth(t)
	for _, mode := range []string{"direct", "buffered"} {
		t.Run(mode, func(t *testing.T) { kill9DuringCreates(t, bin, mode) })
	}
}

func kill9DuringCreates(t *testing.T, bin, editLogIO string) {
	dir := t.TempDir()
	config := filepath.Join(dir, "nn.yaml")
	// auth: simple, said explicitly (the default is secure): the writers
	// assert their user.
	yaml := fmt.Sprintf("rpc_addr: 127.0.0.1:0\nhttp_addr: 127.0.0.1:0\nmeta_dir: %s\nsuperuser: hdfs\ncheckpoint_txns: 500\nauth: simple\nedit_log_io: %s\n", filepath.Join(dir, "meta"), editLogIO)
	if err := os.WriteFile(config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startNNProcess(t, bin, config, dir, 1)
	// The direct run must really write directly: a silent fallback to
	// buffered writes would leave the direct path untested here. The
	// journal is loaded, and its mode logged, before the ready file.
	logged, _ := os.ReadFile(filepath.Join(dir, "nn-1.log"))
	if direct := bytes.Contains(logged, []byte("edit log segments are written with direct synchronous I/O")); direct != (editLogIO == "direct") {
		t.Fatalf("edit_log_io: %s, but the namenode's log says direct writes: %v", editLogIO, direct)
	}
	checkSegmentFlags(t, p.ready.PID, editLogIO)
	c := dial(t, p.ready.RPC, "hdfs")

	var mu sync.Mutex
	created, completed := map[string]bool{}, map[string]bool{}
	var acked atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := fmt.Sprint("burst-", w)
			for i := 0; ; i++ {
				path := fmt.Sprintf("/burst/w%d/f%d", w, i)
				cr, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: path, ClientName: client, CreateParent: true})
				if err != nil {
					return
				}
				mu.Lock()
				created[path] = true
				mu.Unlock()
				r, err := c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: path, ClientName: client, FileId: cr.GetStatus().GetFileId()})
				if err != nil || !r.GetCompleted() {
					return
				}
				mu.Lock()
				completed[path] = true
				mu.Unlock()
				acked.Add(1)
			}
		}()
	}
	waitFor(t, "1500 acknowledged creates", func() bool { return acked.Load() >= 1500 })
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	wg.Wait()

	p2 := startNNProcess(t, bin, config, dir, 2)
	c2 := dial(t, p2.ready.RPC, "hdfs")
	mu.Lock()
	defer mu.Unlock()
	lost := 0
	for path := range created {
		fi, err := c2.cp.GetFileInfo(c2.ctx(), &dfspb.GetFileInfoRequest{Path: path})
		switch {
		case err != nil:
			lost++
			if lost < 10 {
				t.Errorf("%s: create acknowledged before kill -9, missing after restart: %v", path, err)
			}
		case completed[path] && fi.GetStatus().GetUnderConstruction():
			t.Errorf("%s: complete acknowledged, open after restart", path)
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged creates lost", lost, len(created))
	}
	t.Logf("killed after %d acknowledged create+complete pairs; all %d acknowledged creates survived", acked.Load(), len(created))
	p2.cmd.Process.Signal(syscall.SIGTERM)
	<-p2.exited
}
