package cluster_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/testcluster"
)

// An operator's crash and recovery with the real binary: a datanode that
// holds replicas is killed with SIGKILL, `smarth cluster up` starts just
// it again, and every file reads back byte for byte. Replication is 1, so
// the files whose blocks were on the killed datanode exist nowhere else:
// they read back only if the restarted datanode serves its old data. Then
// `smarth cluster restart` of a datanode and of the namenode.
func TestRestartOneDaemonKeepsData(t *testing.T) {
	if testing.Short() {
		t.Skip("real-binary cluster skipped in -short mode")
	}
	bin := testcluster.Binary(t)
	home := t.TempDir()
	t.Cleanup(func() { _, _ = cluster.Down(home, 5*time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	st, err := cluster.Up(ctx, cluster.Options{
		Home: home, Binary: bin, DataNodes: 3, Replication: 1, BlockSize: 256 << 10,
		NameNodeRPC: "127.0.0.1:0", NameNodeHTTP: "127.0.0.1:0", Detach: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	files := writeFiles(ctx, t, home, st.NameNode, 12)
	blocks := blocksByHost(ctx, t, home)
	// The victim is the datanode holding most replicas (with replication 1
	// its blocks exist nowhere else). Writers on this host are in the first
	// rack, so rack-aware placement keeps their replicas there.
	victim := "dn1"
	for h, n := range blocks {
		if n > blocks[victim] {
			victim = h
		}
	}
	if blocks[victim] == 0 {
		t.Fatalf("no datanode holds a replica (%v): killing one would prove nothing", blocks)
	}

	dead, _ := st.Daemon(victim)
	if !dead.Running() {
		t.Fatal(victim + " not running before the kill")
	}
	if err := syscall.Kill(dead.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, victim+" to be gone after SIGKILL", func() bool { return !dead.Running() })
	before := pidsOf(st)

	smarth(t, bin, "cluster", "up", "--home", home)
	st, err = cluster.LoadState(home)
	if err != nil {
		t.Fatal(err)
	}
	for name, pid := range pidsOf(st) {
		if name != victim && pid != before[name] {
			t.Errorf("cluster up restarted %s (pid %d -> %d), which was running", name, before[name], pid)
		}
	}
	if d, _ := st.Daemon(victim); d.PID == dead.PID || !d.Running() {
		t.Fatalf(victim+" after cluster up: pid %d, running %v", d.PID, d.Running())
	}
	waitBlocks(ctx, t, home, blocks)
	readAll(ctx, t, home, st.NameNode, files)

	for _, name := range []string{victim, "namenode"} {
		smarth(t, bin, "cluster", "restart", name, "--home", home)
		waitBlocks(ctx, t, home, blocks)
		readAll(ctx, t, home, st.NameNode, files)
	}
}

// smarth runs the binary and fails the test with its output on error.
func smarth(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("smarth %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func pidsOf(st *cluster.State) map[string]int {
	m := map[string]int{}
	for _, d := range st.Daemons {
		m[d.Name] = d.PID
	}
	return m
}

// writeFiles writes n files of 1 to 4 blocks and some bytes (random
// content, so a replica mixed up with another's reads back wrong).
func writeFiles(ctx context.Context, t *testing.T, home, nn string, n int) map[string][]byte {
	t.Helper()
	fs, err := client.New(ownerConfig(t, home, nn))
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	return writeWith(ctx, t, fs, "/restart", n)
}

// writeWith writes n such files under dir with the client fs.
func writeWith(ctx context.Context, t *testing.T, fs *client.FileSystem, dir string, n int) map[string][]byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, uint64(len(dir))))
	files := map[string][]byte{}
	for i := range n {
		data := make([]byte, (1+i%4)*(256<<10)+rng.IntN(100<<10))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		p := fmt.Sprintf("%s/f%02d", dir, i)
		w, err := fs.Create(ctx, p, client.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		files[p] = data
	}
	return files
}

func readAll(ctx context.Context, t *testing.T, home, nn string, files map[string][]byte) {
	t.Helper()
	fs, err := client.New(ownerConfig(t, home, nn))
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	readWith(ctx, t, fs, files)
}

// readWith reads every file back with fs and compares it byte for byte.
func readWith(ctx context.Context, t *testing.T, fs *client.FileSystem, files map[string][]byte) {
	t.Helper()
	for p, want := range files {
		r, err := fs.Open(ctx, p)
		if err != nil {
			t.Fatalf("open %s: %v", p, err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: read %d bytes (%v), wrote %d; not the same bytes", p, len(got), err, len(want))
		}
	}
}

// blocksByHost is the namenode's count of replicas per live datanode.
func blocksByHost(ctx context.Context, t *testing.T, home string) map[string]int64 {
	t.Helper()
	s, err := cluster.GetStatus(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	if s.ReportErr != nil {
		return nil
	}
	m := map[string]int64{}
	for _, d := range s.Datanodes {
		if d.GetState().String() == "LIVE" {
			m[d.GetHostname()] = d.GetNumBlocks()
		}
	}
	return m
}

// waitBlocks waits until the namenode again counts the replicas it
// counted before the restart on every datanode: the restarted datanode
// has registered and sent its block report.
func waitBlocks(ctx context.Context, t *testing.T, home string, want map[string]int64) {
	t.Helper()
	var got map[string]int64
	waitFor(t, fmt.Sprintf("the namenode to count replicas %v again", want), func() bool {
		got = blocksByHost(ctx, t, home)
		return fmt.Sprint(got) == fmt.Sprint(want)
	})
}

// waitFor polls cond for up to a minute and names what it waited for.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
