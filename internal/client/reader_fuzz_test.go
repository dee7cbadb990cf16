package client

import (
	"bufio"
	"bytes"
	"net"
	"testing"
	"time"

	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// byteConn is a net.Conn that reads from fixed bytes.
type byteConn struct {
	net.Conn
	r *bytes.Reader
}

func (c byteConn) Read(p []byte) (int, error)         { return c.r.Read(p) }
func (c byteConn) Close() error                       { return nil }
func (c byteConn) SetReadDeadline(time.Time) error    { return nil }
func (c byteConn) SetDeadline(time.Time) error        { return nil }
func (c byteConn) SetWriteDeadline(t time.Time) error { return nil }

// readStream runs a block reader for [off, off+n) over the bytes a
// datanode sent after its OpResponse (chunk offset co).
func readStream(stream []byte, off, n, co int64) ([]byte, error) {
	conn := byteConn{r: bytes.NewReader(stream)}
	pr := datatransfer.NewPacketReader(bufio.NewReaderSize(conn, readBufSize))
	pr.MaxDataLen = 4 << 20
	br := &blockReader{conn: conn, pr: pr, lb: &dfspb.LocatedBlock{Block: &dfspb.ExtendedBlock{NumBytes: off + n}},
		node: &dfspb.DatanodeInfo{}, io: time.Second, next: off, end: off + n, want: co}
	defer br.close()
	var out []byte
	for {
		b, err := br.take(1 << 20)
		out = append(out, b...)
		if err != nil {
			return out, err
		}
	}
}

func packets(data []byte, off int64, bpc int, sizes ...int) []byte {
	var buf bytes.Buffer
	seq := int64(0)
	for _, n := range sizes {
		n = min(n, len(data))
		p := datatransfer.NewPacket(n, bpc)
		p.Append(data[:n])
		p.Seal(off, seq, 0)
		buf.Write(p.Wire())
		p.Release()
		data, off, seq = data[n:], off+int64(n), seq+1
	}
	p := datatransfer.NewPacket(0, bpc)
	p.Seal(off, seq, datatransfer.FlagLast)
	buf.Write(p.Wire())
	p.Release()
	return buf.Bytes()
}

// FuzzBlockReader: whatever a datanode sends, the reader never panics,
// never returns more than asked, and what it returns before an error is
// the data the checksums vouch for.
func FuzzBlockReader(f *testing.F) {
	data := testData(3000, 30)
	f.Add(packets(data, 0, 512, 1024, 1024, 952), int64(100), int64(2000), int64(0))
	f.Add(packets(data, 512, 512, 2488), int64(700), int64(1000), int64(512))
	f.Add([]byte{0, 0, 0, 1}, int64(0), int64(10), int64(0))
	f.Fuzz(func(t *testing.T, stream []byte, off, n, co int64) {
		if off < 0 || n < 0 || n > 1<<20 || co < 0 || co > off || off > 1<<30 {
			return
		}
		out, err := readStream(stream, off, n, co)
		if int64(len(out)) > n {
			t.Fatalf("returned %d bytes for a %d-byte range", len(out), n)
		}
		if err == nil {
			t.Fatal("take ended without an error or io.EOF")
		}
	})
}

func TestBlockReaderRejectsBadStreams(t *testing.T) {
	data := testData(3000, 31)
	good := packets(data, 0, 512, 1024, 1024, 952)
	if out, err := readStream(good, 100, 2000, 0); err.Error() != "EOF" || !bytes.Equal(out, data[100:2100]) {
		t.Fatalf("good stream: %v, equal %v", err, bytes.Equal(out, data[100:2100]))
	}
	bad := append([]byte(nil), good...)
	bad[len(bad)-100] ^= 1 // a data byte of the last data packet
	out, err := readStream(bad, 0, 3000, 0)
	if _, ok := err.(*datatransfer.ChecksumError); !ok || len(out) != 2048 {
		t.Fatalf("corrupt stream: %d bytes, err %v; want the first two packets then a checksum error", len(out), err)
	}
	short := packets(data[:1000], 0, 512, 1000)
	if _, err := readStream(short, 0, 3000, 0); err == nil || !bytes.Contains([]byte(err.Error()), []byte("replica ended")) {
		t.Fatalf("short replica: %v", err)
	}
	if _, err := readStream(packets(data, 512, 512, 1000), 0, 100, 0); err == nil {
		t.Fatal("a packet at the wrong offset was accepted")
	}
}
