package cluster_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/testcluster"
)

// Up, Status and Down with the real smarth binary: the daemons start from
// the configs the launcher writes, the datanodes register, a client can
// write and read, and Down stops every process by pid.
func TestUpRealBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("real-binary cluster skipped in -short mode")
	}
	home := t.TempDir()
	t.Cleanup(func() { _, _ = cluster.Down(home, 5*time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := cluster.Up(ctx, cluster.Options{
		Home: home, Binary: testcluster.Binary(t), DataNodes: 2,
		NameNodeRPC: "127.0.0.1:0", NameNodeHTTP: "127.0.0.1:0", BlockSize: 1 << 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := client.New(ownerConfig(t, st.Home, st.NameNode))
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	data := bytes.Repeat([]byte("smarth "), 500_000)
	w, err := fs.Create(ctx, "/e2e/a", client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := fs.Open(ctx, "/e2e/a")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes (%v), wrote %d", len(got), err, len(data))
	}
	// Short-circuit reads: up gave each datanode a socket under the home
	// and recorded the path for clients; a client with it copies every
	// block from the replicas' files (its count says so).
	if want := filepath.Join(home, "sockets", "dn__PORT.sock"); st.DomainSocketPath != want {
		t.Errorf("cluster.json's domain_socket_path %q, want %q", st.DomainSocketPath, want)
	}
	scCfg := ownerConfig(t, st.Home, st.NameNode)
	scCfg.DomainSocketPath = st.DomainSocketPath
	scfs, err := client.New(scCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer scfs.Close()
	r, err = scfs.Open(ctx, "/e2e/a")
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.Create(filepath.Join(t.TempDir(), "a"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.CopyToFile(dst, nil)
	r.Close()
	dst.Close()
	if got, rerr := os.ReadFile(dst.Name()); err != nil || rerr != nil || !bytes.Equal(got, data) {
		t.Errorf("copied %d bytes through short-circuit (%v, %v), wrote %d", len(got), err, rerr, len(data))
	}
	if blocks, fallbacks := scfs.ShortCircuitStats(); blocks != 4 || fallbacks != 0 {
		t.Errorf("short-circuit blocks %d, fallbacks %d; want all 4 blocks and none", blocks, fallbacks)
	}

	fi, err := fs.Stat(ctx, "/e2e/a")
	if err != nil || fi.Replication != 2 {
		t.Errorf("replication %d (%v): the launcher should default it to min(3, datanodes)", fi.Replication, err)
	}

	s, err := cluster.GetStatus(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	s.Print(&buf)
	if len(s.Datanodes) != 2 || !strings.Contains(buf.String(), "dn2") || s.ReportErr != nil {
		t.Errorf("status:\n%s", buf.String())
	}
	lines, err := cluster.Down(home, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if !strings.HasSuffix(l, "stopped") {
			t.Errorf("down: %s", l)
		}
	}
	for _, d := range st.Daemons {
		if d.Running() {
			t.Errorf("%s pid %d still runs", d.Name, d.PID)
		}
	}
}

// ownerConfig is a client config of the cluster's owner for the cluster
// in home: its token file there and its CA (secure by default).
func ownerConfig(t *testing.T, home, nn string) client.Config {
	t.Helper()
	st, err := cluster.LoadState(home)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := st.Security()
	if err != nil {
		t.Fatal(err)
	}
	return client.Config{NameNode: nn, TokenFile: sec.TokenFile, TLS: sec.TLS}
}
