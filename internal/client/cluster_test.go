package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/syncbuf"
	"smarth/internal/testcluster"
)

func data(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

func mustPut(t *testing.T, f *client.FileSystem, path string, b []byte, opts client.CreateOptions) {
	t.Helper()
	w, err := f.Create(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, f *client.FileSystem, path string) []byte {
	t.Helper()
	r, err := f.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hostIndex turns "dn3" into 2.
func hostIndex(t *testing.T, host string) int {
	t.Helper()
	if !strings.HasPrefix(host, "dn") || len(host) < 3 {
		t.Fatalf("unexpected datanode hostname %q", host)
	}
	return int(host[2]-'1') + 10*(len(host)-3)
}

func TestClusterPutGetBothModes(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20})
	for _, tc := range []struct {
		mode string
		repl int
	}{{"classic", 3}, {"multipipeline", 3}, {"multipipeline", 1}} {
		mode := tc.mode
		t.Run(fmt.Sprintf("%s-r%d", mode, tc.repl), func(t *testing.T) {
			f := c.Client(t, testcluster.WithWriteMode(mode))
			want := data(3<<20+4321, 1)
			mode = fmt.Sprintf("%s-r%d", mode, tc.repl)
			// Replication 1 on 3 datanodes lets multi-pipeline mode open 3
			// pipelines at once (FNFA on the real datanode).
			mustPut(t, f, "/"+mode+"/f", want, client.CreateOptions{Replication: tc.repl})
			st, err := f.Stat(context.Background(), "/"+mode+"/f")
			if err != nil || st.Size != int64(len(want)) || st.UnderConstruction {
				t.Fatalf("stat: %+v %v", st, err)
			}
			if got := mustRead(t, f, "/"+mode+"/f"); !bytes.Equal(got, want) {
				t.Fatal("read back differs")
			}
			// Positional reads from several goroutines.
			r, err := f.Open(context.Background(), "/"+mode+"/f")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					off := int64(i) * 400_001
					buf := make([]byte, 300_000)
					n, err := r.ReadAt(buf, off)
					if err != nil && !(err == io.EOF && off+int64(n) == int64(len(want))) {
						t.Errorf("ReadAt(%d): %v", off, err)
						return
					}
					if !bytes.Equal(buf[:n], want[off:off+int64(n)]) {
						t.Errorf("ReadAt(%d) differs", off)
					}
				}()
			}
			wg.Wait()
			if _, err := r.Seek(-10, io.SeekEnd); err != nil {
				t.Fatal(err)
			}
			tail, _ := io.ReadAll(r)
			if !bytes.Equal(tail, want[len(want)-10:]) {
				t.Fatalf("tail after Seek = %x", tail)
			}
			c.WaitReplication(t, "/"+mode+"/f", tc.repl)
		})
	}
}

func TestClusterNamespaceErrors(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 1})
	f := c.Client(t)
	ctx := context.Background()
	mustPut(t, f, "/d/file", []byte("hello"), client.CreateOptions{})
	cases := []struct {
		name string
		err  error
		kind error
		msg  string
	}{
		{"create existing", func() error { _, err := f.Create(ctx, "/d/file", client.CreateOptions{}); return err }(), fs.ErrExist, "create /d/file: file exists"},
		{"open missing", func() error { _, err := f.Open(ctx, "/nope"); return err }(), fs.ErrNotExist, "open /nope: no such file or directory"},
		{"rm non-empty", f.Delete(ctx, "/d", false), client.ErrNotEmpty, "rm /d: "},
		{"path through a file", f.Mkdir(ctx, "/d/file/x", 0, true), client.ErrNotDir, "mkdir /d/file/x: "},
		{"open a directory", func() error { _, err := f.Open(ctx, "/d"); return err }(), client.ErrIsDir, "open /d: is a directory"},
		{"rm missing", f.Delete(ctx, "/nope", true), fs.ErrNotExist, "rm /nope: no such file or directory"},
	}
	for _, tc := range cases {
		if !errors.Is(tc.err, tc.kind) || !strings.HasPrefix(tc.err.Error(), tc.msg) {
			t.Errorf("%s: err = %v, want %v starting %q", tc.name, tc.err, tc.kind, tc.msg)
		}
	}
	if _, err := f.Create(ctx, "/bad/a:b", client.CreateOptions{}); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("invalid name: %v", err)
	}
	ls, err := f.List(ctx, "/d")
	if err != nil || len(ls) != 1 || ls[0].Path != "/d/file" || ls[0].Size != 5 {
		t.Fatalf("list /d = %+v, %v", ls, err)
	}
	if ls, err := f.List(ctx, "/d/file"); err != nil || len(ls) != 1 || ls[0].Name != "file" {
		t.Fatalf("a file lists itself: %+v %v", ls, err)
	}
	// Listing pages through more entries than one GetListing returns.
	for i := range 1100 {
		if err := f.Mkdir(ctx, fmt.Sprintf("/many/d%04d", i), 0, true); err != nil {
			t.Fatal(err)
		}
	}
	if ls, err := f.List(ctx, "/many"); err != nil || len(ls) != 1100 || ls[1099].Name != "d1099" {
		t.Fatalf("list of 1100 entries: %d entries, %v", len(ls), err)
	}
	// Abort deletes the file being written.
	w, err := f.Create(ctx, "/d/aborted", client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data(100_000, 9)); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat(ctx, "/d/aborted"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat after abort: %v", err)
	}
	if err := f.Rename(ctx, "/d/file", "/d/g"); err != nil {
		t.Fatal(err)
	}
	if err := f.Delete(ctx, "/d", true); err != nil {
		t.Fatal(err)
	}
}

// A datanode killed in the middle of a write: the write completes on the
// survivors, byte-identical, and the namenode restores the replication.
func TestClusterDatanodeKilledMidWrite(t *testing.T) {
	for _, tc := range []struct {
		mode string
		pos  int // which pipeline node to kill: 0 first, 1 middle
	}{{"classic", 0}, {"classic", 1}, {"multipipeline", 0}, {"multipipeline", 1}} {
		t.Run(tc.mode+"/"+[]string{"first", "middle"}[tc.pos], func(t *testing.T) {
			// Multi-pipeline mode needs live >= 2 x replication to keep two
			// pipelines open; with fewer it writes like classic.
			n := map[string]int{"classic": 4, "multipipeline": 6}[tc.mode]
			c := testcluster.Start(t, testcluster.Options{DataNodes: n, BlockSize: 1 << 20})
			f := c.Client(t, testcluster.WithWriteMode(tc.mode), testcluster.WithClientHost("dn2"))
			ctx := context.Background()
			want := data(4<<20+999, 2)
			w, err := f.Create(ctx, "/f", client.CreateOptions{Replication: 3})
			if err != nil {
				t.Fatal(err)
			}
			half := 3<<19 + 100
			if _, err := w.Write(want[:half]); err != nil {
				t.Fatal(err)
			}
			// The block being written is listed for an open file.
			locs, err := f.BlockLocations(ctx, "/f", 0, 1<<40)
			if err != nil || len(locs) == 0 {
				t.Fatalf("locations of the open file: %v %v", locs, err)
			}
			last := locs[len(locs)-1]
			if len(last.Hosts) < 2 {
				t.Fatalf("pipeline of the open block: %v", last.Hosts)
			}
			victim := "dn2"
			if tc.pos == 1 {
				for _, h := range last.Hosts {
					if h != "dn2" {
						victim = h
						break
					}
				}
			}
			c.KillDataNode(hostIndex(t, victim))
			finishSurvivingWrite(t, c, f, w, want, half)
		})
	}
}

// finishSurvivingWrite writes want[from:] after a datanode was killed
// mid-write, closes, and checks that /f reads back byte-identical and that
// the namenode restores three replicas on live nodes.
func finishSurvivingWrite(t *testing.T, c testcluster.DFS, f *client.FileSystem, w io.WriteCloser, want []byte, from int) {
	t.Helper()
	if _, err := w.Write(want[from:]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, f, "/f"); !bytes.Equal(got, want) {
		t.Fatal("read back differs")
	}
	c.WaitReplication(t, "/f", 3)
}

// A corrupted replica is detected by the checksums, never served, and
// reported.
func TestClusterCorruptReplicaNotServed(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20})
	f := c.Client(t, testcluster.WithClientHost("dn1"))
	want := data(1<<20, 3)
	mustPut(t, f, "/f", want, client.CreateOptions{})
	c.WaitReplication(t, "/f", 3)
	// Flip a byte in every block file on dn1, the closest replica.
	n := 0
	_ = filepath.WalkDir(c.DataDir(0), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "blk_") || strings.HasSuffix(d.Name(), ".meta") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			return err
		}
		b[len(b)/2] ^= 0x5a
		n++
		return os.WriteFile(p, b, 0o644)
	})
	if n == 0 {
		t.Fatal("found no block file to corrupt on dn1")
	}
	for range 2 {
		if got := mustRead(t, f, "/f"); !bytes.Equal(got, want) {
			t.Fatal("read returned corrupt data")
		}
	}
}

// A client that dies while writing: its half-written file never looks
// complete, and once the lease expires the namenode closes it at the
// length the datanodes hold.
func TestClusterClientDiesWhileWriting(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20,
		LeaseSoftLimit: 500 * time.Millisecond, LeaseHardLimit: time.Second})
	var mu sync.Mutex
	var conns []net.Conn
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		cn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			mu.Lock()
			conns = append(conns, cn)
			mu.Unlock()
		}
		return cn, err
	}
	dying := c.Client(t, testcluster.WithDial(dial))
	w, err := dying.Create(context.Background(), "/half", client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := data(2<<20+512, 4) // two full blocks and a bit
	if _, err := w.Write(want); err != nil {
		t.Fatal(err)
	}
	// Die: no Close, no more lease renewals, every socket cut.
	dying.Close()
	mu.Lock()
	for _, cn := range conns {
		cn.Close()
	}
	mu.Unlock()

	f := c.Client(t)
	st, err := f.Stat(context.Background(), "/half")
	if err != nil {
		t.Fatal(err)
	}
	if !st.UnderConstruction {
		t.Fatalf("a half-written file looks complete: %+v", st)
	}
	c.WaitFor(t, "lease recovery to close /half", func() bool {
		st, err := f.Stat(context.Background(), "/half")
		return err == nil && !st.UnderConstruction
	})
	got := mustRead(t, f, "/half")
	if len(got) > len(want) || !bytes.Equal(got, want[:len(got)]) {
		t.Fatalf("recovered file of %d bytes is not a prefix of what was written", len(got))
	}
}

// A writer that pauses longer than the socket timeout keeps its pipeline
// alive with heartbeat packets (acked with seqno -1).
func TestClusterSlowWriterHeartbeats(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20})
	var logBuf syncbuf.Buffer
	f := c.Client(t, testcluster.WithConfig(func(cfg *client.Config) {
		// A heartbeat goes out every IOTimeout/2 and its ack must be back
		// before IOTimeout: 1 s leaves room for a loaded machine or -race
		// (at 300 ms the race run saw a heartbeat's ack arrive late).
		cfg.IOTimeout = time.Second
		cfg.Logger = slog.New(slog.NewTextHandler(&logBuf, nil))
	}))
	w, err := f.Create(context.Background(), "/slow", client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := data(300_000, 5)
	if _, err := w.Write(want[:200_000]); err != nil {
		t.Fatal(err)
	}
	// Idle for several timeouts: without heartbeats the client's ack read
	// deadline would expire and the pipeline would be "recovered".
	time.Sleep(3500 * time.Millisecond) // the pause under test, not a wait for a condition
	if _, err := w.Write(want[200_000:]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, f, "/slow"); !bytes.Equal(got, want) {
		t.Fatal("read back differs")
	}
	if l := logBuf.String(); strings.Contains(l, "recover") {
		t.Fatalf("the idle pipeline was recovered instead of kept alive:\n%s", l)
	}
	locs, err := f.BlockLocations(context.Background(), "/slow", 0, 1<<20)
	if err != nil || len(locs) != 1 || len(locs[0].Hosts) != 3 {
		t.Fatalf("the pipeline lost nodes while idle: %+v %v", locs, err)
	}
}
