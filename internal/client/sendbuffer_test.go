package client

import (
	"context"
	"fmt"
	"hash/crc32"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"smarth/internal/client/fakedfs"
)

// lingeringConn is a data-transfer connection whose Write reads its buffer
// once more after the peer has had the bytes and answered: a legal
// io.Writer (Write may use p until it returns), and what the race
// detector sees of every socket write, whose read of the buffer is marked
// after the write(2) call. The pipeline must not reuse a packet's buffer
// before the Write of it returns, even when the packet's ack was read
// first; if it does, the buffer changes under the Write, which this conn
// counts (and the race detector reports).
type lingeringConn struct {
	net.Conn
	reads   chan struct{} // a Read returned data
	changed *atomic.Int64
	writes  *atomic.Int64
}

func (c *lingeringConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		select {
		case c.reads <- struct{}{}:
		default:
		}
	}
	return n, err
}

func (c *lingeringConn) Write(p []byte) (int, error) {
	if len(p) < 4096 { // op headers, heartbeats, empty last packets
		return c.Conn.Write(p)
	}
	before := crc32.ChecksumIEEE(p)
	select { // forget an ack read before these bytes went out
	case <-c.reads:
	default:
	}
	n, err := c.Conn.Write(p)
	if err == nil {
		// Linger until an ack came back (most likely for these very bytes,
		// the window is small here), then long enough for a paced writer
		// (pacedPut) to start its next packet.
		select {
		case <-c.reads:
		case <-time.After(20 * time.Millisecond):
		}
		time.Sleep(3 * time.Millisecond)
	}
	c.writes.Add(1)
	if crc32.ChecksumIEEE(p) != before {
		c.changed.Add(1)
	}
	return n, err
}

// newLingeringFake is a fake cluster whose client writes through
// lingeringConns with an in-flight window of win packets.
func newLingeringFake(t *testing.T, n int, mode string, win int) (*fakeCluster, *atomic.Int64, *atomic.Int64) {
	t.Helper()
	c := &fakeCluster{}
	for i := range n {
		c.dns = append(c.dns, fakedfs.StartDatanode(t, "dn"+string(rune('1'+i))))
	}
	c.nn = fakedfs.NewNamenode(c.dns...)
	c.nn.BlockSize = testBlock
	changed, writes := new(atomic.Int64), new(atomic.Int64)
	d := &net.Dialer{}
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return &lingeringConn{Conn: conn, reads: make(chan struct{}, 1), changed: changed, writes: writes}, nil
	}
	f, err := NewWithClient(Config{WriteMode: mode, IOTimeout: 10 * time.Second, Seed: 1, Logger: testLogger(t), Dial: dial, Window: win}, c.nn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	c.fs = f
	return c, changed, writes
}

// pacedPut writes data a packet at a time with a pause in between, slower
// than the pipeline: the stream's queue stays empty, so the writer takes a
// buffer from the pool while the streamer's Write of the previous packet
// still lingers, and gets the previous packet's buffer if it was released
// on its ack.
func pacedPut(t *testing.T, f *FileSystem, path string, data []byte, opts CreateOptions) error {
	t.Helper()
	w, err := f.Create(context.Background(), path, opts)
	if err != nil {
		return err
	}
	for off := 0; off < len(data); {
		n := min(len(data)-off, 64<<10)
		if _, err := w.Write(data[off : off+n]); err != nil {
			w.Abort()
			return err
		}
		off += n
		time.Sleep(time.Millisecond)
	}
	return w.Close()
}

// TestPacketBufferNotReusedWhileItsWriteRuns is the regression test of the
// race the race detector saw in TestPutRunsOnACluster: an acknowledged
// packet went back to the pool while the Write that sent it had not
// returned, and the writer sealed the next packet into it.
func TestPacketBufferNotReusedWhileItsWriteRuns(t *testing.T) {
	for _, mode := range []string{"classic", "multipipeline"} {
		t.Run(mode, func(t *testing.T) {
			c, changed, writes := newLingeringFake(t, 3, mode, 2)
			data := testData(4*testBlock+5000, 7)
			if err := pacedPut(t, c.fs, "/f", data, CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			c.checkReplicas(t, "/f", data)
			if n := changed.Load(); n > 0 {
				t.Fatalf("%d of %d packet buffers changed while their Write ran", n, writes.Load())
			}
			if writes.Load() < 8 {
				t.Fatalf("only %d packet writes seen: the test did not exercise the pipeline", writes.Load())
			}
		})
	}
}

// TestPacketBuffersAcrossRecoveryAndAbort runs many uploads through
// lingering connections with a datanode dying in the middle of some (the
// unacknowledged packets are resent on the rebuilt pipeline, and acks of
// resent packets race their Writes as well) and others aborted half way
// (every queued and unacknowledged packet released once). A double
// release panics in datatransfer; a reused buffer shows up as changed
// bytes or, under -race, as a race.
func TestPacketBuffersAcrossRecoveryAndAbort(t *testing.T) {
	rounds := 6
	if testing.Short() {
		rounds = 3
	}
	for _, mode := range []string{"classic", "multipipeline"} {
		t.Run(mode, func(t *testing.T) {
			c, changed, writes := newLingeringFake(t, 5, mode, 4)
			for i := range rounds {
				data := testData(testBlock+int(i)*40000+333, uint64(i))
				p := fmt.Sprintf("/r%d", i)
				switch i % 3 {
				case 0: // a datanode dies mid-block: recovery resends
					c.dns[i%len(c.dns)].KillAfter(int64(60<<10 + i*10000))
					if err := pacedPut(t, c.fs, p, data, CreateOptions{Replication: 3}); err != nil {
						t.Fatalf("round %d: %v", i, err)
					}
					c.checkReplicas(t, p, data)
				case 1: // aborted with packets queued and in flight
					w, err := c.fs.Create(context.Background(), p, CreateOptions{Replication: 3})
					if err != nil {
						t.Fatal(err)
					}
					if _, err := w.Write(data[:len(data)/2]); err != nil {
						t.Fatalf("round %d: %v", i, err)
					}
					if err := w.Abort(); err != nil {
						t.Fatalf("round %d: abort: %v", i, err)
					}
				default:
					if err := put(t, c.fs, p, data, CreateOptions{Replication: 3}); err != nil {
						t.Fatalf("round %d: %v", i, err)
					}
					c.checkReplicas(t, p, data)
				}
			}
			if n := changed.Load(); n > 0 {
				t.Fatalf("%d of %d packet buffers changed while their Write ran", n, writes.Load())
			}
		})
	}
}
