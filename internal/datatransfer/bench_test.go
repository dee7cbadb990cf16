package datatransfer

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"testing"
)

// BenchmarkPacketSeal: building a default 64 KiB packet (copy + CRC32C).
func BenchmarkPacketSeal(b *testing.B) {
	data := bytes.Repeat([]byte{1, 2, 3, 4}, DefaultPacketDataLen/4)
	b.SetBytes(DefaultPacketDataLen)
	for i := 0; b.Loop(); i++ {
		p := NewPacket(DefaultPacketDataLen, DefaultBytesPerChecksum)
		p.Append(data)
		p.Seal(int64(i)*DefaultPacketDataLen, int64(i), 0)
		p.Release()
	}
}

// BenchmarkPacketReadVerify: decoding and verifying default packets from a
// buffered stream, with a small and a large bufio buffer.
func BenchmarkPacketReadVerify(b *testing.B) {
	for _, size := range []int{4 << 10, 128 << 10} {
		b.Run(fmt.Sprintf("bufio=%dKiB", size>>10), func(b *testing.B) { benchReadVerify(b, size) })
	}
}

func benchReadVerify(b *testing.B, bufSize int) {
	p := NewPacket(DefaultPacketDataLen, DefaultBytesPerChecksum)
	p.Append(bytes.Repeat([]byte{9}, DefaultPacketDataLen))
	p.Seal(0, 0, 0)
	wire := bytes.Clone(p.Wire())
	p.Release()
	src := &repeatReader{b: wire}
	pr := NewPacketReader(bufio.NewReaderSize(src, bufSize))
	b.SetBytes(DefaultPacketDataLen)
	for b.Loop() {
		q, err := pr.Next()
		if err != nil {
			b.Fatal(err)
		}
		if err := q.Verify(); err != nil {
			b.Fatal(err)
		}
		q.Release()
	}
}

// repeatReader yields b over and over.
type repeatReader struct {
	b   []byte
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.b[r.off:])
		n += c
		r.off = (r.off + c) % len(r.b)
	}
	return n, nil
}

var _ io.Reader = (*repeatReader)(nil)
