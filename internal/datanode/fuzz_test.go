package datanode

import (
	"bytes"
	"context"
	"errors"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"smarth/internal/auth"
	"smarth/internal/blocktoken"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// FuzzDataConn feeds arbitrary bytes to the datanode's data-transfer
// server as one connection: whatever arrives, it must answer or hang up
// without panicking or hanging, and it never dials out (targets in a fuzzed
// request are refused by the dialer). Seeds: testdata/fuzz/FuzzDataConn.
func FuzzDataConn(f *testing.F) {
	cfg := DefaultConfig()
	cfg.Auth = auth.Simple // no namenode to prove a key to
	cfg.NameNode = "127.0.0.1:1"
	cfg.DataDir = f.TempDir()
	cfg.PerClientBuffer = 1 << 20
	cfg.Dial = func(context.Context, string) (net.Conn, error) { return nil, errors.New("fuzzing: no dialing") }
	d, err := New(cfg, nil)
	if err != nil {
		f.Fatal(err)
	}
	// The namenode's keys, so that seeds with tokens reach the receiver
	// and sender instead of stopping at the access check.
	d.tokens.Update(testKeys().Export())
	f.Add(fuzzWriteSeed(1, dfspb.WriteStage_PIPELINE_SETUP_CREATE, dfspb.WriteMode_MULTI_PIPELINE))
	f.Add(fuzzWriteSeed(2, dfspb.WriteStage_TRANSFER_RBW, dfspb.WriteMode_CLASSIC))
	var rd bytes.Buffer
	datatransfer.WriteOp(&rd, &dfspb.ReadBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 1, GenerationStamp: 1}, Length: 100, Token: testToken(1, 1, blocktoken.Read)})
	f.Add(rd.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &fuzzConn{r: bytes.NewReader(b)}
		done := make(chan struct{})
		go func() { d.serveConn(c); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("datanode did not finish with a connection whose input ended; goroutines:\n%s", buf[:n])
		}
	})
}

func fuzzWriteSeed(id uint64, stage dfspb.WriteStage, mode dfspb.WriteMode) []byte {
	var b bytes.Buffer
	op := &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: 1},
		ClientName: "fuzz", Stage: stage, Mode: mode, BytesPerChecksum: 512}
	op.Token = writeToken(op)
	datatransfer.WriteOp(&b, op)
	for i, n := range []int{600, 0} {
		p := datatransfer.NewPacket(1024, 512)
		p.Append(bytes.Repeat([]byte{byte(i)}, n))
		fl := datatransfer.Flags(0)
		if n == 0 {
			fl = datatransfer.FlagLast
		}
		p.Seal(int64(i*600), int64(i), fl)
		b.Write(p.Wire())
		p.Release()
	}
	return b.Bytes()
}

// fuzzConn is a connection whose input is fixed bytes and whose output is
// discarded.
type fuzzConn struct {
	mu     sync.Mutex
	r      *bytes.Reader
	closed bool
}

func (c *fuzzConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	return c.r.Read(p)
}

func (c *fuzzConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	return len(p), nil
}

func (c *fuzzConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return nil
}

func (c *fuzzConn) LocalAddr() net.Addr              { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }
func (c *fuzzConn) RemoteAddr() net.Addr             { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2} }
func (c *fuzzConn) SetDeadline(time.Time) error      { return nil }
func (c *fuzzConn) SetReadDeadline(time.Time) error  { return nil }
func (c *fuzzConn) SetWriteDeadline(time.Time) error { return nil }
