package ipc

// Regression tests for the review of the transport (session 7): limits
// on what one peer can make the server hold, accept errors, metadata
// parity with gRPC, handler contexts, idle and half-sent frames.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"smarth/internal/rpc/dfspb"
)

const getFileInfo = "/smarth.dfs.ClientProtocol/GetFileInfo"

// rawCall encodes one GetFileInfo call frame.
func rawCall(t testing.TB, id uint64, path string, h Header) []byte {
	b := appendCallHeader(nil, id, 0, getFileInfo, h)
	b, err := proto.MarshalOptions{}.MarshalAppend(b, &dfspb.GetFileInfoRequest{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	finishFrame(b)
	return b
}

// rawMDCall is rawCall with metadata encoded as given, unchecked.
func rawMDCall(t testing.TB, id uint64, path, key, val string) []byte {
	md := binary1(nil, 1)
	md = appendString(md, key)
	md = appendString(md, val)
	return rawCall(t, id, path, Header{raw: md})
}

func binary1(b []byte, n uint64) []byte { return append(b, byte(n)) }

// queued sums the replies the server holds in its connections' write
// queues (not yet written to the socket).
func queued(s *Server) (frames, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.w.mu.Lock()
		for _, f := range c.w.queue {
			frames++
			bytes += len(*f)
		}
		c.w.mu.Unlock()
	}
	return
}

// waitQueued waits until the server holds replies it cannot write.
func waitQueued(t *testing.T, s *Server) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if frames, _ := queued(s); frames > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no reply queued after 10 s")
		}
	}
}

// readReply reads one reply frame from a raw connection.
func readReply(t *testing.T, br *bufio.Reader) replyHeader {
	t.Helper()
	b, err := readFrame(br, DefaultMaxMessage)
	if err != nil {
		t.Fatal(err)
	}
	h, err := decodeReply(*b)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// nonReader connects to addr as a client that never reads its replies
// (a 4 KiB receive buffer) and, in the background, sends n calls each
// asking for a 128 KiB reply, until the server stops reading them or the
// connection closes. The connection closes when the test ends.
func nonReader(t *testing.T, addr string, n int) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.(*net.TCPConn).SetReadBuffer(4 << 10)
	frames := make([][]byte, n)
	for i := range frames {
		frames[i] = rawCall(t, uint64(i+1), "/big/131072", Header{})
	}
	go func() {
		nc.Write([]byte(Preface))
		for _, f := range frames {
			if _, err := nc.Write(f); err != nil {
				return
			}
		}
	}()
}

// A client that sends calls and never reads its replies gets
// backpressure: the server holds at most MaxInFlight unwritten replies
// for it and stops reading its calls (it queued 300 x 128 KiB before).
func TestRepliesBoundedForClientThatDoesNotRead(t *testing.T) {
	const maxInFlight = 8
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{MaxInFlight: maxInFlight})
	nonReader(t, ts.addr, 300)
	maxFrames := 0
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		frames, _ := queued(ts.ipc)
		maxFrames = max(maxFrames, frames)
	}
	if maxFrames > maxInFlight {
		t.Errorf("%d replies queued for a client that does not read, more than MaxInFlight=%d", maxFrames, maxInFlight)
	}
}

// A peer that stops reading for the write timeout loses the connection;
// the server's reader, waiting for a slot, gives up too.
func TestWriteTimeoutClosesConnectionOfClientThatDoesNotRead(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{MaxInFlight: 4, writeTimeout: 500 * time.Millisecond})
	nonReader(t, ts.addr, 100)
	// The connection is registered at once and can go only after the
	// write timeout: wait to see it, then for it to go.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		ts.ipc.mu.Lock()
		n := len(ts.ipc.conns)
		ts.ipc.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the connection was not served within 10 s")
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ts.ipc.mu.Lock()
		n := len(ts.ipc.conns)
		ts.ipc.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server still holds the connection of a client that has read nothing for 20 s (write timeout 0.5 s)")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// GracefulStop ends even when a client stops reading: a handler stuck
// writing to that client's full socket does not hold the stop.
func TestGracefulStopEndsWhenClientDoesNotRead(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{goAwayWait: 300 * time.Millisecond, stopGrace: 300 * time.Millisecond})
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.(*net.TCPConn).SetReadBuffer(4 << 10)
	nc.Write([]byte(Preface))
	for i := range 100 {
		nc.SetWriteDeadline(time.Now().Add(time.Second))
		if _, err := nc.Write(rawCall(t, uint64(i+1), "/big/131072", Header{})); err != nil {
			break // backpressure: the server stopped reading
		}
	}
	waitQueued(t, ts.ipc)
	done := make(chan struct{})
	go func() { ts.ipc.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		ts.ipc.Stop()
		<-done
		t.Fatal("GracefulStop still waiting 15 s after it began (go-away wait and grace 0.3 s each): a client that does not read holds it")
	}
}

// Connections that connect and say nothing, or stop after the first
// bytes, do not keep others from being accepted and served.
func TestSilentConnectionsDoNotBlockAccept(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{})
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := range 30 {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 1:
			c.Write([]byte("SMIP")) // routed to IPC, preface never completed
		case 2:
			c.Write([]byte(Preface + "\x00\x00\x10")) // half a frame length
		}
		held = append(held, c)
	}
	c := NewConn(ts.addr, ClientOptions{})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := stat(ctx, c, "/alive"); err != nil {
		t.Fatalf("a call behind 30 silent connections: %v", err)
	}
}

// A frame whose length arrived but whose body does not come within the
// timeout ends the connection.
func TestHalfSentFrameTimesOut(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{writeTimeout: 300 * time.Millisecond})
	for _, partial := range []string{"\x00\x00", "\x00\x00\x00\x40\x01"} {
		nc, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.Write([]byte(Preface + partial))
		nc.SetReadDeadline(time.Now().Add(15 * time.Second))
		_, err = nc.Read(make([]byte, 1))
		nc.Close()
		if !errors.Is(err, io.EOF) && !strings.Contains(fmt.Sprint(err), "reset") {
			t.Errorf("after the partial frame %q: read = %v, want the server to close the connection", partial, err)
		}
	}
}

// An idle connection is told to go away and closed; the client dials
// again on its next call.
func TestIdleConnectionGoesAwayAndClientRedials(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{IdleTimeout: 200 * time.Millisecond, goAwayWait: 300 * time.Millisecond})
	c := NewConn(ts.addr, ClientOptions{})
	defer c.Close()
	if _, err := stat(context.Background(), c, "/a"); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	first := c.cur
	c.mu.Unlock()
	deadline := time.Now().Add(15 * time.Second)
	for !first.broken.Load() {
		if time.Now().After(deadline) {
			t.Fatal("an idle connection still open 15 s after its idle timeout of 0.2 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := stat(context.Background(), c, "/b"); err != nil {
		t.Fatalf("the call after the idle connection went away: %v", err)
	}
	c.mu.Lock()
	second := c.cur
	c.mu.Unlock()
	if second == first {
		t.Error("the call after the go-away used the old connection")
	}
	// A raw connection that says nothing after the preface is closed.
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write([]byte(Preface))
	nc.SetReadDeadline(time.Now().Add(15 * time.Second))
	b, err := io.ReadAll(nc)
	if err != nil || string(b) != "\x00\x00\x00\x01\x03" {
		t.Errorf("an idle raw connection read %q, %v; want a go-away frame then the end", b, err)
	}
}

// Metadata the server delivers is what gRPC would deliver: keys in
// [0-9a-z-_.], values printable ASCII unless the key ends in -bin. A key
// with a non-ASCII letter that Unicode-folds to "smarth-user" was found
// by metadata.ValueFromIncomingContext (strings.EqualFold).
func TestMetadataRefusedAsGRPCRefusesIt(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{})
	gc, err := grpc.NewClient(ts.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	c := NewConn(ts.addr, ClientOptions{})
	defer c.Close()
	for _, md := range []metadata.MD{
		{"\u017fmarth-user": {"root"}},
		{"smarth-user": {"root\nforged=1"}},
		{"smarth user": {"root"}},
	} {
		ctx := metadata.NewOutgoingContext(context.Background(), md)
		_, gerr := stat(ctx, gc, "/x")
		st, ierr := stat(ctx, c, "/x")
		if status.Code(gerr) != codes.Internal || status.Code(ierr) != codes.Internal || status.Convert(ierr).Message() != status.Convert(gerr).Message() {
			t.Errorf("metadata %q: gRPC %v; IPC %v (owner %q)", md, gerr, ierr, st.GetOwner())
		}
	}
	// Binary values pass, as over gRPC.
	ctx := metadata.NewOutgoingContext(context.Background(), metadata.Pairs("x-bin", "\x00\xff", "smarth-user", "alice"))
	if st, err := stat(ctx, c, "/x"); err != nil || st.GetOwner() != "alice" {
		t.Errorf("binary metadata: %v %v", st, err)
	}

	// The server checks too, whatever a client sends, and keeps serving.
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.Write([]byte(Preface))
	nc.Write(rawMDCall(t, 1, "/x", "\u017fmarth-user", "root"))
	nc.Write(rawMDCall(t, 2, "/x", "Smarth-user", "root"))
	nc.Write(rawMDCall(t, 3, "/x", "smarth-user", "ro\x7fot"))
	nc.Write(rawMDCall(t, 4, "/x", "smarth-user", "bob"))
	br := bufio.NewReader(nc)
	for range 4 {
		h := readReply(t, br) // in any order
		if h.id < 4 && (h.code != codes.Internal || !strings.Contains(string(h.msg), "header key")) {
			t.Errorf("call %d with illegal metadata: %v %q", h.id, h.code, h.msg)
		}
		if h.id == 4 && h.code != codes.OK {
			t.Errorf("call %d after the refusals: %v %q", h.id, h.code, h.msg)
		}
	}
}

// The metadata cache of a connection stays small whatever the client
// sends: a few entries of bounded size, only ones that decoded.
func TestMetadataCacheBounded(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{})
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var b []byte
	b = append(b, Preface...)
	for i := range 256 {
		val := strings.Repeat("v", 100+i*15) // 100 B to 3.9 KB
		b = append(b, rawCall(t, uint64(i+1), "/x", NewHeader(metadata.Pairs("k", fmt.Sprint(i, val))))...)
	}
	b = append(b, rawMDCall(t, 999, "/x", "BAD", "v")...)
	nc.Write(b)
	br := bufio.NewReader(nc)
	for range 257 {
		readReply(t, br)
	}
	ts.ipc.mu.Lock()
	defer ts.ipc.mu.Unlock()
	for c := range ts.ipc.conns {
		n, bytes := 0, 0
		for _, e := range c.mdCache {
			if e.md != nil {
				n++
				bytes += len(e.raw)
				if _, ok := e.md["bad"]; ok || e.md["BAD"] != nil {
					t.Error("refused metadata was cached")
				}
			}
		}
		if n > mdCacheEntries || bytes > mdCacheEntries*mdCacheMax {
			t.Errorf("metadata cache holds %d entries, %d bytes", n, bytes)
		}
	}
}

// The port survives a transient accept failure, as grpc.Server.Serve and
// http.Server.Serve do: running out of file descriptors because many
// clients connected does not close it for good. The fault is real: a
// child process serving the mux (and, as the control, a plain gRPC server
// on a port of its own) lowers its RLIMIT_NOFILE; this process connects
// until the child's accept fails with EMFILE, disconnects, lets the child
// restore its limit, then calls both ports.
func TestMuxSurvivesEMFILE(t *testing.T) {
	if os.Getenv("IPC_EMFILE_CHILD") != "" {
		emfileChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMuxSurvivesEMFILE$")
	cmd.Env = append(os.Environ(), "IPC_EMFILE_CHILD=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	sc := bufio.NewScanner(stdout)
	var muxAddr, grpcAddr string
	if !sc.Scan() {
		t.Fatal("child said nothing")
	}
	fmt.Sscan(sc.Text(), &muxAddr, &grpcAddr)
	var held []net.Conn
	for i := range 60 {
		if c, err := net.DialTimeout("tcp", []string{muxAddr, grpcAddr}[i%2], time.Second); err == nil {
			held = append(held, c)
		}
	}
	time.Sleep(500 * time.Millisecond) // the child's accepts fail with EMFILE meanwhile
	for _, c := range held {
		c.Close()
	}
	time.Sleep(300 * time.Millisecond)
	fmt.Fprintln(stdin, "restore")
	sc.Scan()
	if !strings.Contains(sc.Text(), "mux still open") {
		t.Errorf("child: %s", sc.Text())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	gc, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	if _, err := stat(ctx, gc, "/alive"); err != nil {
		t.Errorf("control: the plain gRPC server after the descriptors were freed: %v", err)
	}
	c := NewConn(muxAddr, ClientOptions{})
	defer c.Close()
	if _, err := stat(ctx, c, "/alive"); err != nil {
		t.Errorf("the mux's port after the descriptors were freed: %v", err)
	}
}

func emfileChild(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{})
	glis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	dfspb.RegisterClientProtocolServer(gs, ts.nn)
	go gs.Serve(glis)
	defer gs.Stop()
	muxErr := make(chan error, 1)
	// Watch the mux's own accept loop: the mux closing is the port closing.
	go func() { <-ts.mux.closed; muxErr <- errors.New("mux closed its port") }()
	fds, _ := os.ReadDir("/proc/self/fd")
	var old syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old)
	low := old
	low.Cur = uint64(len(fds) + 8)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	fmt.Println(ts.addr, glis.Addr().String())
	r := bufio.NewReader(os.Stdin)
	r.ReadString('\n')
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	select {
	case err := <-muxErr:
		fmt.Println("limit restored;", err)
	default:
		fmt.Println("limit restored; mux still open")
	}
	io.Copy(io.Discard, os.Stdin)
}

// A caller's deadline holds even when its frame is stuck behind a server
// that has stopped reading (a stalled namenode whose socket buffers are
// full): gRPC's flow-control wait ends with the call's context.
func TestCallerDeadlineHoldsWhenServerDoesNotRead(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := lis.Accept()
		if err == nil {
			c.(*net.TCPConn).SetReadBuffer(4 << 10)
			accepted <- c // never read
		}
	}()
	defer func() {
		select {
		case c := <-accepted:
			c.Close()
		default:
		}
	}()
	c := NewConn(lis.Addr().String(), ClientOptions{})
	defer c.Close()
	for _, withCtx := range []bool{true, false} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		var timeout time.Duration
		if !withCtx {
			ctx, timeout = context.Background(), time.Second
		}
		done := make(chan error, 1)
		go func() {
			r := &dfspb.GetFileInfoResponse{}
			done <- c.InvokeHeader(ctx, Header{}, timeout, getFileInfo, &dfspb.GetFileInfoRequest{Path: strings.Repeat("x", 32<<20)}, r)
		}()
		select {
		case err := <-done:
			if status.Code(err) != codes.DeadlineExceeded {
				t.Errorf("context deadline %v: %v, want DeadlineExceeded", withCtx, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("context deadline %v: a call with a 1 s deadline still running after 10 s: its goroutine is blocked writing to a server that does not read", withCtx)
		}
		cancel()
	}
}

// When the caller's connection ends, the handler's context ends, as
// gRPC's does (a closed transport cancels every stream). A caller that
// only gives up does not cancel the server's work (doc.go says why).
func TestHandlerContextEndsWithConnection(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{})
	defer close(ts.nn.release)
	gc, err := grpc.NewClient(ts.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	ic := NewConn(ts.addr, ClientOptions{})
	defer ic.Close()
	for _, tc := range []struct {
		name string
		cc   grpc.ClientConnInterface
		end  func(cancel context.CancelFunc)
	}{
		{"grpc cancel (control)", gc, func(cancel context.CancelFunc) { cancel() }},
		{"ipc connection closed", ic, func(context.CancelFunc) { ic.Close() }},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		go stat(ctx, tc.cc, "/block")
		<-ts.nn.started
		tc.end(cancel)
		select {
		case <-ts.nn.ctxEnded:
		case <-time.After(10 * time.Second):
			t.Errorf("%s: the handler's context did not end within 10 s", tc.name)
		}
		cancel()
	}
}

// An IPC client against a gRPC-only server (a namenode from before the
// transport) is told which setting picks gRPC.
func TestIPCClientAgainstGRPCOnlyServerNamesTheSetting(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	dfspb.RegisterClientProtocolServer(gs, newFakeNN())
	go gs.Serve(lis)
	defer gs.Stop()
	c := NewConn(lis.Addr().String(), ClientOptions{})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = stat(ctx, c, "/x")
	if status.Code(err) != codes.Unavailable || !strings.Contains(fmt.Sprint(err), "SMARTH_RPC_TRANSPORT=grpc") {
		t.Errorf("IPC call to a gRPC-only server: %v; want Unavailable naming SMARTH_RPC_TRANSPORT=grpc", err)
	}
}

// A timeout under a microsecond is still a deadline, not "none".
func TestSubMicrosecondTimeoutIsADeadline(t *testing.T) {
	b := appendCallHeader(nil, 1, 300*time.Nanosecond, "/m", Header{})
	finishFrame(b)
	h, err := decodeCall(b[4:])
	if err != nil {
		t.Fatal(err)
	}
	if h.timeout != time.Microsecond {
		t.Errorf("a 300 ns timeout decodes as %v, want 1µs", h.timeout)
	}
}
