package tput

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Wire format. Header, sender to receiver:
//
//	magic "SBTP" | version u8 | 3 reserved bytes | duration ms u32 | warm-up ms u32
//
// then payload until the sender closes its write side. Report, receiver to
// sender:
//
//	magic "SBTR" | version u8 | 3 reserved bytes | bytes u64 | window ns u64
const (
	headerLen  = 16
	reportLen  = 24
	version    = 1
	maxMillis  = 10 * 60 * 1000 // ten minutes is longer than any sane test
	bufferSize = 256 << 10
)

var (
	headerMagic = [4]byte{'S', 'B', 'T', 'P'}
	reportMagic = [4]byte{'S', 'B', 'T', 'R'}
)

// Header opens a test.
type Header struct {
	Duration, Warmup time.Duration
}

// MarshalBinary encodes the header.
func (h Header) MarshalBinary() []byte {
	b := make([]byte, headerLen)
	copy(b, headerMagic[:])
	b[4] = version
	binary.BigEndian.PutUint32(b[8:], uint32(h.Duration.Milliseconds()))
	binary.BigEndian.PutUint32(b[12:], uint32(h.Warmup.Milliseconds()))
	return b
}

// ParseHeader decodes a header, refusing anything that is not one.
func ParseHeader(b []byte) (Header, error) {
	if len(b) != headerLen {
		return Header{}, fmt.Errorf("throughput test header: %d bytes, want %d", len(b), headerLen)
	}
	if [4]byte(b[:4]) != headerMagic {
		return Header{}, errors.New("not a throughput test (bad magic)")
	}
	if b[4] != version {
		return Header{}, fmt.Errorf("throughput test version %d, want %d", b[4], version)
	}
	d, w := binary.BigEndian.Uint32(b[8:]), binary.BigEndian.Uint32(b[12:])
	if d == 0 || d > maxMillis || w >= d {
		return Header{}, fmt.Errorf("throughput test: duration %dms with warm-up %dms makes no window", d, w)
	}
	return Header{Duration: time.Duration(d) * time.Millisecond, Warmup: time.Duration(w) * time.Millisecond}, nil
}

// Result is what arrived after the warm-up, and over how long.
type Result struct {
	Bytes  int64         `json:"bytes"`
	Window time.Duration `json:"window_ns"`
	// MSS is the sender's TCP segment payload size (0 if unknown), from
	// which WireRate recovers the bytes the link carried.
	MSS int `json:"mss,omitempty"`
}

// linkFrame is the size of a full-size frame on an Ethernet link with a
// 1500-byte MTU as a tc shaper counts it: the IP packet plus the 14-byte
// Ethernet header (no preamble, gap or checksum on a veth). Its payload is
// the MSS; the rest is IP and TCP headers and options.
const linkFrame = 1500 + 14

// WireRate is the rate in bits per second on the link, headers included:
// the goodput scaled by frame size over payload size. It is what a tc
// shaper limits, and so what compares with a configured link rate. Without
// an MSS it is the goodput.
func (r Result) WireRate() float64 {
	if r.MSS <= 0 || r.MSS >= linkFrame {
		return r.Rate()
	}
	return r.Rate() * linkFrame / float64(r.MSS)
}

// Rate is the goodput in bits per second.
func (r Result) Rate() float64 {
	if r.Window <= 0 {
		return 0
	}
	return float64(r.Bytes) * 8 / r.Window.Seconds()
}

func (r Result) marshal() []byte {
	b := make([]byte, reportLen)
	copy(b, reportMagic[:])
	b[4] = version
	binary.BigEndian.PutUint64(b[8:], uint64(r.Bytes))
	binary.BigEndian.PutUint64(b[16:], uint64(r.Window))
	return b
}

// ParseReport decodes the receiver's report.
func ParseReport(b []byte) (Result, error) {
	if len(b) != reportLen {
		return Result{}, fmt.Errorf("throughput report: %d bytes, want %d", len(b), reportLen)
	}
	if [4]byte(b[:4]) != reportMagic || b[4] != version {
		return Result{}, errors.New("not a throughput report (bad magic or version)")
	}
	n, w := binary.BigEndian.Uint64(b[8:]), binary.BigEndian.Uint64(b[16:])
	if n > 1<<62 || w > uint64(maxMillis)*uint64(time.Millisecond) {
		return Result{}, fmt.Errorf("throughput report out of range (%d bytes in %dns)", n, w)
	}
	return Result{Bytes: int64(n), Window: time.Duration(w)}, nil
}

// Serve answers tests on ln until it is closed, or until count tests (if
// count > 0) have finished. Each connection is one test.
func Serve(ln net.Listener, count int) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	for served := 0; count <= 0 || served < count; served++ {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			receive(c)
		}()
	}
	return nil
}

// receive runs one test on the receiving side. Errors end the test; the
// sender sees them as a missing report.
func receive(c net.Conn) {
	hb := make([]byte, headerLen)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, hb); err != nil {
		return
	}
	h, err := ParseHeader(hb)
	if err != nil {
		return
	}
	start := time.Now()
	c.SetReadDeadline(start.Add(h.Duration + 30*time.Second))
	from := start.Add(h.Warmup)
	var res Result
	var first, last time.Time
	buf := make([]byte, bufferSize)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			now := time.Now()
			if now.After(from) {
				// The window starts at the first read after the
				// warm-up; its bytes were in flight during the
				// warm-up, so they are not counted.
				if first.IsZero() {
					first = now
				} else {
					res.Bytes += int64(n)
				}
				last = now
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return
			}
			break
		}
	}
	if !first.IsZero() {
		res.Window = last.Sub(first)
	}
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	c.Write(res.marshal())
}

// Send runs one test against the receiver at addr: it streams for h.Duration
// and returns the receiver's report.
func Send(ctx context.Context, addr string, h Header) (Result, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return Result{}, err
	}
	return SendConn(ctx, c, h)
}

// SendConn runs one test over c, which it closes.
func SendConn(ctx context.Context, c net.Conn, h Header) (Result, error) {
	defer c.Close()
	addr := c.RemoteAddr().String()
	if deadline, ok := ctx.Deadline(); ok {
		c.SetDeadline(deadline)
	}
	if _, err := c.Write(h.MarshalBinary()); err != nil {
		return Result{}, fmt.Errorf("send to %s: %w", addr, err)
	}
	buf := make([]byte, bufferSize)
	for i := range buf {
		buf[i] = byte(i * 7) // not all zeros, in case anything compresses
	}
	end := time.Now().Add(h.Duration)
	for time.Now().Before(end) {
		if _, err := c.Write(buf); err != nil {
			return Result{}, fmt.Errorf("send to %s: %w", addr, err)
		}
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	rb := make([]byte, reportLen)
	if _, err := io.ReadFull(c, rb); err != nil {
		return Result{}, fmt.Errorf("read the report from %s: %w", addr, err)
	}
	r, err := ParseReport(rb)
	r.MSS = mss(c)
	return r, err
}

// mss is the connection's segment payload size, 0 if unknown.
func mss(c net.Conn) int {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return 0
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return 0
	}
	var v int
	raw.Control(func(fd uintptr) {
		v, err = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_MAXSEG)
	})
	if err != nil {
		return 0
	}
	return v
}
