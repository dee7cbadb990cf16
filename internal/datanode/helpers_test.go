package datanode

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"smarth/internal/auth"
	"smarth/internal/blocktoken"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/syncbuf"
)

// startDataNode starts a datanode on loopback with fast heartbeats.
func startDataNode(t *testing.T, nn *fakeNameNode, dir string, mutate func(*Config)) (*DataNode, *syncbuf.Buffer) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Auth = auth.Simple // the fake namenode checks no datanode key
	cfg.NameNode = nn.addr
	cfg.Hostname = "localhost"
	cfg.DataAddr, cfg.IPCAddr, cfg.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	if dir == "" {
		dir = t.TempDir()
	}
	cfg.DataDir = dir
	cfg.HeartbeatInterval = 50 * time.Millisecond
	cfg.IOTimeout = 20 * time.Second
	if mutate != nil {
		mutate(&cfg)
	}
	logs := &syncbuf.Buffer{}
	d, err := New(cfg, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	// A heartbeat follows the handling of the registration reply, so the
	// block keys it carries are installed by then (registered alone
	// races: the fake counts the call before the datanode reads the reply).
	waitFor(t, "datanode registered with the fake namenode and heartbeating", func() bool {
		_, beats := nn.lastHeartbeat(d.ID())
		return nn.registered(d.ID()) > 0 && beats > 0
	})
	return d, logs
}

// startDataNodeTB starts a quiet datanode for benchmarks.
func startDataNodeTB(t testing.TB, nn *fakeNameNode) *DataNode {
	return startDataNodeTBWith(t, nn, nil)
}

// startDataNodeTBWith is startDataNodeTB with a config change.
func startDataNodeTBWith(t testing.TB, nn *fakeNameNode, mutate func(*Config)) *DataNode {
	cfg := DefaultConfig()
	cfg.Auth = auth.Simple // the fake namenode checks no datanode key
	cfg.NameNode = nn.addr
	cfg.DataAddr, cfg.IPCAddr, cfg.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	if dir := os.Getenv("SMARTH_BENCH_DIR"); dir != "" {
		cfg.DataDir, _ = os.MkdirTemp(dir, "dn")
		t.Cleanup(func() { os.RemoveAll(cfg.DataDir) })
	}
	if mutate != nil {
		mutate(&cfg)
	}
	d, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// waitFor polls cond until it holds, failing the test after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func randomData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed+1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// pipeline is a minimal write client: it opens a write, sends packets and
// collects acks in a goroutine.
type pipeline struct {
	t     *testing.T
	conn  net.Conn
	br    *bufio.Reader
	seq   int64
	off   int64
	mu    sync.Mutex
	acks  []datatransfer.Ack // guarded by mu
	fnfa  int                // guarded by mu: index in acks at which the FNFA arrived, -1 if none
	err   error              // guarded by mu: ack reading ended with this
	done  chan struct{}
	first string
}

// openPipeline sends a WRITE_BLOCK to dns[0] with dns[1:] as targets.
func openPipeline(t *testing.T, op *dfspb.WriteBlockOp, dns ...*DataNode) (*pipeline, *dfspb.OpResponse) {
	t.Helper()
	c, err := net.Dial("tcp", dns[0].DataAddr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for _, dn := range dns[1:] {
		op.Targets = append(op.Targets, dn.Info())
	}
	if op.BytesPerChecksum == 0 {
		op.BytesPerChecksum = 512
	}
	if op.Token == nil {
		op.Token = writeToken(op)
	}
	if err := datatransfer.WriteOp(c, op); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := datatransfer.ReadResponse(br)
	if err != nil {
		t.Fatalf("reading write response: %v", err)
	}
	p := &pipeline{t: t, conn: c, br: br, fnfa: -1, done: make(chan struct{}), off: op.GetBlock().GetNumBytes()}
	if resp.GetStatus() == dfspb.OpStatus_OP_STATUS_SUCCESS {
		go p.readAcks()
	} else {
		close(p.done)
	}
	return p, resp
}

func (p *pipeline) readAcks() {
	defer close(p.done)
	for {
		a, err := datatransfer.ReadAck(p.br)
		p.mu.Lock()
		if err != nil {
			p.err = err
			p.mu.Unlock()
			return
		}
		if a.Kind == datatransfer.AckFirstNodeFinish {
			p.fnfa = len(p.acks)
		} else {
			p.acks = append(p.acks, a)
		}
		failed := a.FirstFailed() >= 0
		p.mu.Unlock()
		if failed {
			return
		}
	}
}

// send writes data as 64 KiB packets (the last may be shorter).
func (p *pipeline) send(data []byte) error {
	for len(data) > 0 {
		pkt := datatransfer.NewPacket(datatransfer.DefaultPacketDataLen, 512)
		n := pkt.Append(data)
		data = data[n:]
		pkt.Seal(p.off, p.seq, 0)
		p.off += int64(n)
		p.seq++
		_, err := p.conn.Write(pkt.Wire())
		pkt.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// finish sends the empty last packet and waits for the acks to end.
func (p *pipeline) finish() error {
	pkt := datatransfer.NewPacket(0, 512)
	pkt.Seal(p.off, p.seq, datatransfer.FlagLast)
	p.seq++
	_, err := p.conn.Write(pkt.Wire())
	pkt.Release()
	if err != nil {
		return err
	}
	<-p.done
	return nil
}

// result waits for the ack reader to end and returns the acks, the FNFA
// position and the final ack error (nil when the last packet was acked by
// everyone... or io.EOF after it).
func (p *pipeline) result() ([]datatransfer.Ack, int) {
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acks, p.fnfa
}

// ackedThrough is the highest seqno acked with all successes so far.
func (p *pipeline) ackedThrough() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	last := int64(-1)
	for _, a := range p.acks {
		if a.FirstFailed() < 0 && a.Seqno > last {
			last = a.Seqno
		}
	}
	return last
}

func (p *pipeline) ackCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acks)
}

func (p *pipeline) gotFNFA() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fnfa >= 0
}

// lastAckOK checks that the final packet (seqno p.seq-1) was acked by n nodes.
func (p *pipeline) lastAckOK(t *testing.T, n int) {
	t.Helper()
	acks, _ := p.result()
	if len(acks) == 0 {
		t.Fatalf("no acks (ack reader: %v)", p.err)
	}
	last := acks[len(acks)-1]
	if last.Seqno != p.seq-1 || len(last.Statuses) != n || last.FirstFailed() >= 0 {
		t.Fatalf("last ack %+v, want seqno %d with %d successes (reader: %v)", last, p.seq-1, n, p.err)
	}
}

// writeBlock writes a whole block through dns and checks the final ack.
func writeBlock(t *testing.T, id, gs uint64, data []byte, dns ...*DataNode) {
	t.Helper()
	op := &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: gs},
		ClientName: "test-client", Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE, Mode: dfspb.WriteMode_CLASSIC}
	p, resp := openPipeline(t, op, dns...)
	if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_SUCCESS {
		t.Fatalf("write refused: %v", datatransfer.ResponseError(resp))
	}
	if err := p.send(data); err != nil {
		t.Fatal(err)
	}
	if err := p.finish(); err != nil {
		t.Fatal(err)
	}
	p.lastAckOK(t, len(dns))
}

// readBlock reads [off, off+n) of a block from dn, verifying checksums like
// a client does. A datanode refusal comes back as *datatransfer.StatusError,
// a checksum mismatch as *datatransfer.ChecksumError.
func readBlock(addr string, id, gs uint64, off, n int64) ([]byte, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	op := &dfspb.ReadBlockOp{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: gs}, Offset: off, Length: n, ClientName: "test-client",
		Token: testToken(id, gs, blocktoken.Read)}
	if err := datatransfer.WriteOp(c, op); err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(c, 128<<10)
	resp, err := datatransfer.ReadResponse(br)
	if err != nil {
		return nil, err
	}
	if err := datatransfer.ResponseError(resp); err != nil {
		return nil, err
	}
	pr := datatransfer.NewPacketReader(br)
	var out []byte
	pos := resp.GetChunkOffset()
	for {
		p, err := pr.Next()
		if err != nil {
			return nil, fmt.Errorf("after %d bytes: %w", len(out), err)
		}
		if p.Header.Offset != pos {
			return nil, fmt.Errorf("packet at %d, expected %d", p.Header.Offset, pos)
		}
		if err := p.Verify(); err != nil {
			p.Release()
			return nil, err
		}
		out = append(out, p.Data()...)
		pos += int64(p.Header.DataLen)
		last := p.Header.Last()
		p.Release()
		if last {
			break
		}
	}
	skip := off - resp.GetChunkOffset()
	if int64(len(out)) < skip+n {
		return nil, fmt.Errorf("read %d bytes from %d, want [%d, %d)", len(out), resp.GetChunkOffset(), off, off+n)
	}
	return out[skip : skip+n], nil
}

func mustRead(t *testing.T, dn *DataNode, id, gs uint64, want []byte) {
	t.Helper()
	got, err := readBlock(dn.DataAddr(), id, gs, 0, int64(len(want)))
	if err != nil {
		t.Fatalf("read blk_%d_%d from %s: %v", id, gs, dn.DataAddr(), err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("blk_%d_%d from %s: data differs", id, gs, dn.DataAddr())
	}
}

// gate holds writes on connections dialed through it until opened; the
// first write of each connection (the op request) passes.
type gate struct {
	open chan struct{}
	once sync.Once
}

func newGate() *gate { return &gate{open: make(chan struct{})} }

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

func (g *gate) dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &gatedConn{Conn: c, g: g}, nil
}

type gatedConn struct {
	net.Conn
	g      *gate
	passed bool
}

func (c *gatedConn) Write(b []byte) (int, error) {
	if c.passed {
		<-c.g.open
	}
	c.passed = true
	return c.Conn.Write(b)
}

var _ = errors.Is
var _ = io.EOF

func dialRaw(dn *DataNode) (net.Conn, error) { return net.Dial("tcp", dn.DataAddr()) }

func itoa(n uint64) string { return fmt.Sprint(n) }

// finish2 sends the last packet without waiting for the acks.
func (p *pipeline) finish2() {
	pkt := datatransfer.NewPacket(0, 512)
	pkt.Seal(p.off, p.seq, datatransfer.FlagLast)
	p.seq++
	p.conn.Write(pkt.Wire())
	pkt.Release()
}
