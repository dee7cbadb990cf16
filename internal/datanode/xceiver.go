package datanode

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"smarth/internal/connlimit"
	"smarth/internal/datatransfer"
	"smarth/internal/pki"
	"smarth/internal/rpc/dfspb"
)

// Buffer sizes on data connections: small, so that a 64 KiB packet body is
// read straight into its pooled buffer (bufio skips its own buffer for reads
// larger than it once it is drained) instead of being copied through it.
const (
	readBufSize = 8 << 10
	ackBufSize  = 4 << 10
)

// accept takes the next connection of ln (the data port or the domain
// socket, named by what); ok false when the listener is closed for good
// or the datanode stops.
func (d *DataNode) accept(ln net.Listener, what string) (net.Conn, bool) {
	var pause time.Duration
	for {
		c, err := ln.Accept()
		if err == nil {
			return c, true
		}
		// Out of descriptors (a flood): pause and go on, rather than
		// close the port for good.
		if d.ctx.Err() == nil && connlimit.Temporary(err) {
			pause = connlimit.AcceptBackoff(pause)
			d.log.Warn(what+": accept failed; retrying", "err", err, "retry_in", pause)
			select {
			case <-time.After(pause):
			case <-d.ctx.Done():
				return nil, false
			}
			continue
		}
		if d.ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
			d.log.Error(what+" listener failed", "err", err)
		}
		return nil, false
	}
}

// serveData accepts data-transfer connections; each runs one op.
func (d *DataNode) serveData() {
	for {
		c, ok := d.accept(d.dataLn, "data port")
		if !ok {
			return
		}
		// A peer at its share of the port, or a port at its bound, is
		// reset here, before a goroutine, a handshake or a buffer.
		release, ok := d.dataGate.Take(c)
		if !ok {
			continue
		}
		if !d.track(c) {
			release()
			continue
		}
		d.goRun(func() { defer release(); d.serveConn(c) })
	}
}

// serveConn reads one op request and runs it.
func (d *DataNode) serveConn(raw net.Conn) {
	defer d.untrack(raw)
	defer raw.Close()
	d.tuneConn(raw) // the TCP socket, before TLS hides it
	c, err := d.serverHandshake(raw)
	if err != nil {
		d.log.Warn("refused a data connection", "remote", raw.RemoteAddr().String(), "err", err)
		return
	}
	d.metrics.xceivers.Inc()
	defer d.metrics.xceivers.Dec()
	if n := d.xceivers(); n > d.cfg.MaxXceivers {
		_ = datatransfer.WriteResponse(c, &dfspb.OpResponse{Status: dfspb.OpStatus_OP_STATUS_ERROR_BUSY,
			Message: "datanode has " + strconv.Itoa(n) + " data connections, limit " + strconv.Itoa(d.cfg.MaxXceivers)})
		return
	}
	// The op is read straight from the connection (ReadOp reads exactly
	// its bytes, and grows its buffer only as they arrive); the read
	// buffer exists only once an op has come, so an idle or trickling
	// connection holds no more than its socket.
	_ = c.SetReadDeadline(time.Now().Add(d.cfg.IOTimeout))
	op, msg, err := datatransfer.ReadOp(c)
	if err != nil {
		if errors.Is(err, datatransfer.ErrProtocol) {
			d.log.Warn("bad op request", "remote", c.RemoteAddr().String(), "err", err)
			_ = datatransfer.WriteResponse(c, &dfspb.OpResponse{Status: dfspb.OpStatus_OP_STATUS_ERROR_INVALID, Message: err.Error()})
		}
		return
	}
	br := bufio.NewReaderSize(c, readBufSize)
	remote := c.RemoteAddr().String()
	switch m := msg.(type) {
	case *dfspb.WriteBlockOp:
		if resp := d.checkAccess(op.String(), m.GetToken(), writeWant(m), remote); resp != nil {
			_ = d.writeResponse(c, resp)
			return
		}
		d.receiveBlock(c, br, m)
	case *dfspb.ReadBlockOp:
		if resp := d.checkAccess(op.String(), m.GetToken(), readWant(m), remote); resp != nil {
			_ = d.writeResponse(c, resp)
			return
		}
		d.sendBlock(c, m)
	case *dfspb.TransferBlockOp:
		if resp := d.checkAccess(op.String(), m.GetToken(), transferWant(m), remote); resp != nil {
			_ = d.writeResponse(c, resp)
			return
		}
		d.transferBlockOp(c, m)
	case *dfspb.BlockChecksumOp:
		if resp := d.checkAccess(op.String(), m.GetToken(), checksumWant(m), remote); resp != nil {
			_ = d.writeResponse(c, resp)
			return
		}
		d.blockChecksumOp(c, m)
	}
}

// tuneConn applies the configured socket buffer sizes. TCP_NODELAY stays
// on (Go's default): every write here is either a whole packet or an ack
// that someone is waiting for, so Nagle would only delay acks and the last
// packet of a block (up to a delayed-ACK timeout each) and save nothing.
func (d *DataNode) tuneConn(c net.Conn) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	if d.cfg.SocketRecvBuffer > 0 {
		_ = tc.SetReadBuffer(d.cfg.SocketRecvBuffer)
	}
	if d.cfg.SocketSendBuffer > 0 {
		_ = tc.SetWriteBuffer(d.cfg.SocketSendBuffer)
	}
	d.applyProfile(c) // after the fixed sizes: a profile's buffers win
}

// dial connects to another datanode's data port.
func (d *DataNode) dial(ctx context.Context, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.IOTimeout)
	defer cancel()
	var c net.Conn
	var err error
	if d.cfg.Dial != nil {
		c, err = d.cfg.Dial(ctx, addr)
	} else {
		var nd net.Dialer
		c, err = nd.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return nil, err
	}
	if !d.track(c) {
		return nil, errors.New("datanode is shutting down")
	}
	d.tuneConn(c)
	if d.cliTLS == nil {
		return c, nil
	}
	tc, err := pki.Dialer(d.cliTLS, func(context.Context, string) (net.Conn, error) { return c, nil })(ctx, addr)
	if err != nil {
		d.closeTracked(c)
		return nil, err
	}
	return &trackedTLS{Conn: tc, raw: c}, nil
}

// trackedTLS is a TLS connection made by dial; closeTracked forgets its
// raw socket, the one track recorded.
type trackedTLS struct {
	net.Conn
	raw net.Conn
}

// serverHandshake does the TLS handshake of an accepted data connection
// (with TLS on) within io_timeout; a plaintext or untrusting peer fails
// here, before any op is read.
func (d *DataNode) serverHandshake(raw net.Conn) (net.Conn, error) {
	if d.srvTLS == nil {
		return raw, nil
	}
	c := tls.Server(raw, d.srvTLS)
	ctx, cancel := context.WithTimeout(d.ctx, d.cfg.IOTimeout)
	defer cancel()
	if err := c.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("tls handshake: %w", err)
	}
	return c, nil
}

// closeTracked closes and forgets a connection made by dial.
func (d *DataNode) closeTracked(c net.Conn) {
	if c != nil {
		c.Close()
		if t, ok := c.(*trackedTLS); ok {
			c = t.raw
		}
		d.untrack(c)
	}
}

func dataAddr(dn *dfspb.DatanodeInfo) string {
	return net.JoinHostPort(dn.GetIpAddr(), strconv.Itoa(int(dn.GetDataPort())))
}

// writeResponse sends an OpResponse with a deadline.
func (d *DataNode) writeResponse(c net.Conn, resp *dfspb.OpResponse) error {
	_ = c.SetWriteDeadline(time.Now().Add(d.cfg.IOTimeout))
	err := datatransfer.WriteResponse(c, resp)
	_ = c.SetWriteDeadline(time.Time{})
	return err
}

func errResponse(st dfspb.OpStatus, msg string) *dfspb.OpResponse {
	return &dfspb.OpResponse{Status: st, Message: msg}
}

// isClosed tells a connection we closed ourselves from a real failure.
func isClosed(err error) bool {
	return errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF)
}

// lazyDeadline keeps a connection deadline at least timeout/2 ahead without
// moving it on every packet: each move is a timer update, and a packet
// takes microseconds.
type lazyDeadline struct {
	set     func(time.Time) error
	timeout time.Duration
	last    time.Time // when the deadline was last moved
}

func newLazyDeadline(set func(time.Time) error, timeout time.Duration) *lazyDeadline {
	return &lazyDeadline{set: set, timeout: timeout}
}

func (l *lazyDeadline) refresh() {
	if now := time.Now(); now.Sub(l.last) > l.timeout/2 {
		_ = l.set(now.Add(l.timeout))
		l.last = now
	}
}
