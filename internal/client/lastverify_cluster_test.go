package client_test

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"smarth/internal/client"
	"smarth/internal/datatransfer"
	"smarth/internal/testcluster"
)

// flipOnceConn flips one data byte of the nth full packet the client sends
// on any of its data connections (a copy: the client keeps its own buffer
// for resending), once per test: corruption between the client and the
// first datanode.
type flipOnceConn struct {
	net.Conn
	n       int64
	sent    *atomic.Int64
	flipped *atomic.Bool
	mu      *sync.Mutex
	at      *string // the datanode the corrupt packet went to
}

func (c *flipOnceConn) Write(b []byte) (int, error) {
	if len(b) < datatransfer.DefaultPacketDataLen || c.sent.Add(1) != c.n || !c.flipped.CompareAndSwap(false, true) {
		return c.Conn.Write(b)
	}
	bad := bytes.Clone(b)
	bad[len(bad)-1000] ^= 0x08 // in the data: the packet ends with 64 KiB of it
	c.mu.Lock()
	*c.at = c.RemoteAddr().String()
	c.mu.Unlock()
	return c.Conn.Write(bad)
}

// checksumFailures reads a datanode's smarth_datanode_checksum_failures_total.
func checksumFailures(t *testing.T, httpAddr string) int {
	t.Helper()
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "smarth_datanode_checksum_failures_total "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric line %q: %v", sc.Text(), err)
			}
			return int(n)
		}
	}
	t.Fatalf("no smarth_datanode_checksum_failures_total on %s", httpAddr)
	return 0
}

// A packet corrupted on its way from the client to the first datanode of a
// three-node pipeline is stored and forwarded unverified by the first two
// and refused by the last (HDFS's rule: only the last node verifies); the
// client drops that node, recovers the pipeline and resends, and the file
// reads back intact. The datanode that counted the checksum failure is not
// the one the corrupt bytes were sent to.
func TestCorruptPacketOnTheWireRefusedByLastNode(t *testing.T) {
	var (
		sent    atomic.Int64
		flipped atomic.Bool
		mu      sync.Mutex
		at      string
	)
	d := &net.Dialer{}
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return &flipOnceConn{Conn: conn, n: 5, sent: &sent, flipped: &flipped, mu: &mu, at: &at}, nil
	}
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: 4 << 20, Replication: 3})
	f := c.Client(t, testcluster.WithDial(dial))
	want := data(3<<20+123, 27)
	mustPut(t, f, "/flipped-on-the-wire", want, client.CreateOptions{Replication: 3})
	if !flipped.Load() {
		t.Fatal("no packet was corrupted: the test's injection did not run")
	}
	got, err := readAll(t, f, "/flipped-on-the-wire")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the file read back differs from what was written")
	}
	mu.Lock()
	first := at
	mu.Unlock()
	refusedBy := ""
	for i := range 3 {
		dn := c.DataNode(i)
		switch n := checksumFailures(t, dn.HTTPAddr()); {
		case n == 1 && refusedBy == "":
			refusedBy = dn.DataAddr()
		case n != 0:
			t.Fatalf("%s counted %d checksum failures; want exactly one datanode to count one", dn.DataAddr(), n)
		}
	}
	switch refusedBy {
	case "":
		t.Fatal("no datanode refused the corrupt packet")
	case first:
		t.Fatalf("the first datanode %s refused the corrupt packet; the last node of the pipeline should have", first)
	}
}
