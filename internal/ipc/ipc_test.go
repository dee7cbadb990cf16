package ipc

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"smarth/internal/rpc/dfspb"
)

// fakeNN answers GetFileInfo according to the path asked for:
//
//	/sleep/MS    answers after MS milliseconds (or when the call's context ends)
//	/block       waits for release or the call's context
//	/code/N      fails with status code N
//	/plain       fails with an error that is not a status
//	/big/N       answers with an N-byte path
//	anything else: echoes the path, the caller's smarth-user metadata as
//	owner, the peer's host as group and the time left to the deadline (ms,
//	-1 without one) as length.
type fakeNN struct {
	dfspb.UnimplementedClientProtocolServer
	release  chan struct{}
	started  chan string
	ctxEnded chan error
}

func newFakeNN() *fakeNN {
	return &fakeNN{release: make(chan struct{}), started: make(chan string, 100), ctxEnded: make(chan error, 100)}
}

func (f *fakeNN) GetFileInfo(ctx context.Context, r *dfspb.GetFileInfoRequest) (*dfspb.GetFileInfoResponse, error) {
	p := r.GetPath()
	switch {
	case strings.HasPrefix(p, "/sleep/"):
		ms, _ := strconv.Atoi(strings.TrimPrefix(p, "/sleep/"))
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
			f.ctxEnded <- ctx.Err()
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	case p == "/block":
		f.started <- p
		select {
		case <-f.release:
		case <-ctx.Done():
			f.ctxEnded <- ctx.Err()
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	case strings.HasPrefix(p, "/code/"):
		n, _ := strconv.Atoi(strings.TrimPrefix(p, "/code/"))
		return nil, status.Errorf(codes.Code(n), "refused %s", p)
	case p == "/plain":
		return nil, errors.New("plain failure")
	case p == "/ctxerr":
		return nil, fmt.Errorf("gave up: %w", context.DeadlineExceeded)
	case strings.HasPrefix(p, "/big/"):
		n, _ := strconv.Atoi(strings.TrimPrefix(p, "/big/"))
		return &dfspb.GetFileInfoResponse{Status: &dfspb.FileStatus{Path: strings.Repeat("x", n)}}, nil
	}
	st := &dfspb.FileStatus{Path: p, Length: -1}
	if v := metadata.ValueFromIncomingContext(ctx, "smarth-user"); len(v) > 0 {
		st.Owner = v[0]
	}
	if pr, ok := peer.FromContext(ctx); ok {
		st.Group, _, _ = net.SplitHostPort(pr.Addr.String())
	}
	if dl, ok := ctx.Deadline(); ok {
		st.Length = time.Until(dl).Milliseconds()
	}
	return &dfspb.GetFileInfoResponse{Status: st}, nil
}

// testServer serves fakeNN over the mux: IPC and gRPC on one port.
type testServer struct {
	addr    string
	nn      *fakeNN
	ipc     *Server
	grpc    *grpc.Server
	mux     *Mux
	methods chan string               // FullMethod as the interceptor saw it
	auth    chan credentials.AuthInfo // the peer's auth info as the interceptor saw it
}

func startServer(t testing.TB, addr string, srvTLS *tls.Config, opts ServerOptions) *testServer {
	t.Helper()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{addr: lis.Addr().String(), nn: newFakeNN(), methods: make(chan string, 1000), auth: make(chan credentials.AuthInfo, 1000)}
	icpt := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		select {
		case ts.methods <- info.FullMethod:
		default:
		}
		if p, ok := peer.FromContext(ctx); ok {
			select {
			case ts.auth <- p.AuthInfo:
			default:
			}
		}
		return h(ctx, req)
	}
	opts.Interceptor = icpt
	ts.mux = NewMux(lis, srvTLS, nil)
	ts.ipc = NewServer(opts)
	ts.grpc = grpc.NewServer(append(ts.mux.GRPCServerOptions(), grpc.UnaryInterceptor(icpt))...)
	dfspb.RegisterClientProtocolServer(ts.ipc, ts.nn)
	dfspb.RegisterClientProtocolServer(ts.grpc, ts.nn)
	go ts.mux.Serve()
	go ts.ipc.Serve(ts.mux.IPC())
	go ts.grpc.Serve(ts.mux.GRPC())
	t.Cleanup(ts.stop)
	return ts
}

func (ts *testServer) stop() {
	ts.mux.Close()
	ts.ipc.Stop()
	ts.grpc.Stop()
}

func stat(ctx context.Context, cc grpc.ClientConnInterface, path string) (*dfspb.FileStatus, error) {
	r, err := dfspb.NewClientProtocolClient(cc).GetFileInfo(ctx, &dfspb.GetFileInfoRequest{Path: path})
	return r.GetStatus(), err
}

func userCtx(user string) context.Context {
	return metadata.NewOutgoingContext(context.Background(), metadata.Pairs("smarth-user", user))
}

func TestConcurrentCallsRepliesOutOfOrder(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{Workers: 4})
	c := NewConn(ts.addr, ClientOptions{})
	defer c.Close()

	// A slow call first, then quick ones: the quick ones are answered
	// while the slow one still runs, on the same connection.
	slow := make(chan error, 1)
	go func() { _, err := stat(context.Background(), c, "/sleep/300"); slow <- err }()
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 { // more than the workers: some get goroutines of their own
		wg.Add(1)
		go func() {
			defer wg.Done()
			user := fmt.Sprintf("u%d", i)
			p := fmt.Sprintf("/f%d", i)
			st, err := stat(userCtx(user), c, p)
			if err != nil {
				errs <- err
			} else if st.GetPath() != p || st.GetOwner() != user {
				errs <- fmt.Errorf("call %s as %s got the answer for %s as %s", p, user, st.GetPath(), st.GetOwner())
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	select {
	case err := <-slow:
		t.Fatalf("the slow call finished (%v) before 200 quick ones: replies are not out of order", err)
	default:
	}
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
}

func TestMetadataPeerAndMethodDelivered(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{})
	c := NewConn(ts.addr, ClientOptions{})
	defer c.Close()
	md := metadata.Pairs("smarth-user", "alice", "smarth-auth", "alice:c2lnbmF0dXJl", "Smarth-Proxy-User", "bob")
	ctx := metadata.NewOutgoingContext(context.Background(), md)
	st, err := stat(ctx, c, "/x")
	if err != nil {
		t.Fatal(err)
	}
	if st.GetOwner() != "alice" || st.GetGroup() != "127.0.0.1" {
		t.Errorf("owner %q group %q, want the metadata's user alice and the peer 127.0.0.1", st.GetOwner(), st.GetGroup())
	}
	if m := <-ts.methods; m != dfspb.ClientProtocol_GetFileInfo_FullMethodName {
		t.Errorf("interceptor saw method %q, want %q", m, dfspb.ClientProtocol_GetFileInfo_FullMethodName)
	}
	// The same call over gRPC on the same port sees the same.
	gc, err := grpc.NewClient(ts.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	gst, err := stat(ctx, gc, "/x")
	if err != nil {
		t.Fatal(err)
	}
	if gst.GetOwner() != st.GetOwner() || gst.GetGroup() != st.GetGroup() {
		t.Errorf("gRPC answered owner %q group %q, IPC %q %q", gst.GetOwner(), gst.GetGroup(), st.GetOwner(), st.GetGroup())
	}
}

func TestIncomingMetadataKeys(t *testing.T) {
	// Keys arrive lower-cased and with every value, as over gRPC.
	h := NewHeader(metadata.MD{"smarth-user": {"alice"}, "x-multi": {"a", "b"}})
	b := appendCallHeader(nil, 7, time.Second, "/m", h)
	finishFrame(b)
	ch, err := decodeCall(b[4:])
	if err != nil {
		t.Fatal(err)
	}
	md, err := decodeMD(ch.mdRaw)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(md["smarth-user"]) != "[alice]" || fmt.Sprint(md["x-multi"]) != "[a b]" {
		t.Errorf("metadata %v", md)
	}
	if ch.id != 7 || ch.timeout != time.Second || string(ch.method) != "/m" {
		t.Errorf("header %+v", ch)
	}
}

func TestStatusCodesRoundTrip(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{})
	c := NewConn(ts.addr, ClientOptions{})
	defer c.Close()
	for code := codes.Canceled; code <= codes.Unauthenticated; code++ {
		p := fmt.Sprintf("/code/%d", code)
		_, err := stat(context.Background(), c, p)
		st, ok := status.FromError(err)
		if !ok || st.Code() != code || st.Message() != "refused "+p {
			t.Errorf("%s: got %v, want code %v message %q", p, err, code, "refused "+p)
		}
	}
	// A handler error that is not a status is Unknown, as with gRPC.
	_, err := stat(context.Background(), c, "/plain")
	if st, _ := status.FromError(err); st.Code() != codes.Unknown || st.Message() != "plain failure" {
		t.Errorf("plain error arrived as %v", err)
	}
	// A context's error is DeadlineExceeded, as with gRPC's server: a
	// handler that gave up at its deadline did not answer the call.
	_, err = stat(context.Background(), c, "/ctxerr")
	if st, _ := status.FromError(err); st.Code() != codes.DeadlineExceeded {
		t.Errorf("a handler's context error arrived as %v, want DeadlineExceeded", err)
	}
	// An unknown method is Unimplemented.
	err = c.Invoke(context.Background(), "/smarth.dfs.ClientProtocol/NoSuch", &dfspb.GetFileInfoRequest{}, &dfspb.GetFileInfoResponse{})
	if status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "NoSuch") {
		t.Errorf("unknown method: %v", err)
	}
}

func TestDeadlineTravelsAndIsEnforced(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{})
	c := NewConn(ts.addr, ClientOptions{})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := stat(ctx, c, "/d")
	if err != nil {
		t.Fatal(err)
	}
	if st.GetLength() < 4000 || st.GetLength() > 5000 {
		t.Errorf("server saw %d ms left of a 5 s deadline", st.GetLength())
	}
	st, err = stat(context.Background(), c, "/d")
	if err != nil || st.GetLength() != -1 {
		t.Errorf("no deadline: server saw %d ms left (err %v)", st.GetLength(), err)
	}

	// A call past its deadline returns DeadlineExceeded while the handler
	// is still running; the handler's context ends too.
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = stat(ctx, c, "/sleep/5000")
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("got %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("deadline of 100ms returned after %v", d)
	}
	select {
	case err := <-ts.nn.ctxEnded:
		if err != context.DeadlineExceeded {
			t.Errorf("handler context ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the handler's context did not end at the deadline")
	}
	// The connection is still good.
	if _, err := stat(context.Background(), c, "/after"); err != nil {
		t.Fatal(err)
	}
}

func TestCancellation(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{})
	c := NewConn(ts.addr, ClientOptions{})
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := stat(ctx, c, "/block"); done <- err }()
	<-ts.nn.started
	cancel()
	if err := <-done; status.Code(err) != codes.Canceled {
		t.Fatalf("got %v, want Canceled", err)
	}
	close(ts.nn.release)
	if _, err := stat(context.Background(), c, "/after"); err != nil {
		t.Fatal(err)
	}
}

func TestConnectionLossFailsPendingThenRedials(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{})
	c := NewConn(ts.addr, ClientOptions{})
	defer c.Close()
	const n = 5
	done := make(chan error, n)
	for range n {
		go func() { _, err := stat(context.Background(), c, "/block"); done <- err }()
	}
	for range n {
		<-ts.nn.started
	}
	ts.stop() // every connection closes; the handlers are still blocked
	for range n {
		err := <-done
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("pending call got %v, want Unavailable", err)
		}
	}
	close(ts.nn.release)

	// The server is down: the next call is refused as a gRPC dial is.
	_, err := stat(context.Background(), c, "/x")
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "Error while dialing") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("call to a stopped server: %v", err)
	}
	// Back on the same address: the next call dials anew.
	startServer(t, ts.addr, nil, ServerOptions{})
	if st, err := stat(userCtx("bob"), c, "/again"); err != nil || st.GetOwner() != "bob" {
		t.Fatalf("after restart: %v %v", st, err)
	}
}

func TestOversizeFramesRefusedClearly(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{MaxMessage: 1 << 10})
	// Client limit: the request is refused before it is sent.
	small := NewConn(ts.addr, ClientOptions{MaxMessage: 1 << 10})
	defer small.Close()
	big := &dfspb.GetFileInfoRequest{Path: "/" + strings.Repeat("p", MaxHeader+2000)}
	err := small.Invoke(context.Background(), dfspb.ClientProtocol_GetFileInfo_FullMethodName, big, &dfspb.GetFileInfoResponse{})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "exceeds the limit") {
		t.Errorf("oversize request: %v", err)
	}
	// Server limit: the server reads past the call and refuses only it.
	c := NewConn(ts.addr, ClientOptions{})
	defer c.Close()
	err = c.Invoke(context.Background(), dfspb.ClientProtocol_GetFileInfo_FullMethodName, big, &dfspb.GetFileInfoResponse{})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "exceeds the server's limit") {
		t.Errorf("request over the server's limit: %v", err)
	}
	// A reply over the client's limit fails that call only.
	_, err = stat(context.Background(), small, fmt.Sprintf("/big/%d", MaxHeader+4000))
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "reply of") {
		t.Errorf("oversize reply: %v", err)
	}
	for _, cc := range []*Conn{small, c} {
		if _, err := stat(context.Background(), cc, "/still-fine"); err != nil {
			t.Errorf("connection unusable after an oversize frame: %v", err)
		}
	}
}

func TestServerRefusesGarbage(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{})
	for name, bytes := range map[string][]byte{
		"wrong preface":  []byte("SMIPC/9\n"),
		"malformed call": append([]byte(Preface), 0, 0, 0, 3, kindCall, 0xff, 0xff),
		"not a protocol": []byte("GET / HTTP/1.1\r\n\r\n"),
	} {
		nc, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.Write(bytes)
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		// Closed (or reset: unread bytes) without a byte of answer.
		if n, err := io.ReadAll(nc); len(n) != 0 || isTimeout(err) {
			t.Errorf("%s: the server answered %q (%v) instead of closing", name, n, err)
		}
		nc.Close()
	}
	// A frame claiming 4 GiB is not allocated: the server reads its call
	// id, discards what follows and refuses the call.
	nc, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	hdr := append([]byte(Preface), 0xff, 0xff, 0xff, 0xff, kindCall)
	hdr = binary.AppendUvarint(hdr, 42)
	nc.Write(append(hdr, make([]byte, 20)...))
	nc.Close()
	// (the connection ends before 4 GiB arrive; the server must simply
	// close it, which the next dial shows it survived)
	c := NewConn(ts.addr, ClientOptions{})
	defer c.Close()
	if _, err := stat(context.Background(), c, "/alive"); err != nil {
		t.Fatal(err)
	}
}

func TestStreamsUnimplemented(t *testing.T) {
	c := NewConn("127.0.0.1:1", ClientOptions{})
	if _, err := c.NewStream(context.Background(), &grpc.StreamDesc{}, "/x/y"); status.Code(err) != codes.Unimplemented {
		t.Fatal(err)
	}
}

func TestGracefulStopAnswersCallsInFlight(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{})
	c := NewConn(ts.addr, ClientOptions{})
	defer c.Close()
	done := make(chan error, 1)
	go func() { _, err := stat(context.Background(), c, "/block"); done <- err }()
	<-ts.nn.started
	stopped := make(chan struct{})
	go func() { ts.mux.Close(); ts.ipc.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("GracefulStop returned while a call was being handled")
	case <-time.After(100 * time.Millisecond):
	}
	close(ts.nn.release)
	if err := <-done; err != nil {
		t.Fatalf("call in flight during a graceful stop: %v", err)
	}
	<-stopped
}

func TestCallContextDeadlineWithoutTimer(t *testing.T) {
	parent, cancelParent := context.WithCancel(context.Background())
	c := newCallCtx(parent, 50*time.Millisecond)
	if dl, ok := c.Deadline(); !ok || time.Until(dl) > 50*time.Millisecond {
		t.Fatalf("deadline %v %v", dl, ok)
	}
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	// Before Done is asked for, an expired deadline still shows in Err.
	time.Sleep(60 * time.Millisecond)
	if c.Err() != context.DeadlineExceeded {
		t.Fatalf("Err after the deadline: %v", c.Err())
	}
	select {
	case <-c.Done():
	case <-time.After(time.Second):
		t.Fatal("Done not closed after the deadline")
	}
	c.release()

	// Done follows the parent, and children follow Done.
	c = newCallCtx(parent, time.Hour)
	child, cancelChild := context.WithCancel(c)
	defer cancelChild()
	cancelParent()
	select {
	case <-child.Done():
	case <-time.After(time.Second):
		t.Fatal("child of a call context not cancelled with the connection")
	}
	if c.Err() != context.Canceled {
		t.Fatalf("Err after the connection ended: %v", c.Err())
	}
	c.release()

	// After the call returned, Done is closed for goroutines left behind.
	c = newCallCtx(context.Background(), time.Hour)
	c.release()
	select {
	case <-c.Done():
	default:
		t.Fatal("Done of a finished call is open")
	}
}

// A timeout given to InvokeHeader (a client's default deadline) travels to
// the server and fails the call on time without a context deadline.
func TestInvokeHeaderTimeout(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{})
	c := NewConn(ts.addr, ClientOptions{})
	defer c.Close()
	h := NewHeader(metadata.Pairs("smarth-user", "carol"))
	var out dfspb.GetFileInfoResponse
	if err := c.InvokeHeader(context.Background(), h, 3*time.Second, dfspb.ClientProtocol_GetFileInfo_FullMethodName,
		&dfspb.GetFileInfoRequest{Path: "/t"}, &out); err != nil {
		t.Fatal(err)
	}
	if l := out.GetStatus().GetLength(); l < 2000 || l > 3000 || out.GetStatus().GetOwner() != "carol" {
		t.Errorf("server saw %d ms left of 3 s, owner %q", l, out.GetStatus().GetOwner())
	}
	start := time.Now()
	err := c.InvokeHeader(context.Background(), h, 150*time.Millisecond, dfspb.ClientProtocol_GetFileInfo_FullMethodName,
		&dfspb.GetFileInfoRequest{Path: "/sleep/5000"}, &out)
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("got %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("150ms timeout fired after %v", d)
	}
}

// A server stopping gracefully under a stream of calls answers every call
// it was sent; calls racing the stop are either answered or refused as a
// dial is (the namenode is restarting: the client's retry waits), never
// lost in a closing connection with their fate unknown.
func TestGracefulStopLosesNoCall(t *testing.T) {
	for round := range 5 {
		ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{})
		c := NewConn(ts.addr, ClientOptions{})
		var wg sync.WaitGroup
		stop := make(chan struct{})
		var answered, refused atomic.Int64
		errs := make(chan error, 100)
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					_, err := stat(context.Background(), c, fmt.Sprintf("/sleep/%d", (g+i)%3))
					switch {
					case err == nil:
						answered.Add(1)
					case status.Code(err) == codes.Unavailable && strings.Contains(err.Error(), "Error while dialing"):
						refused.Add(1)
					default:
						errs <- err
						return
					}
				}
			}()
		}
		for answered.Load() < 200 {
			runtime.Gosched()
		}
		ts.mux.Close()
		ts.ipc.GracefulStop()
		for refused.Load() == 0 && len(errs) == 0 {
			runtime.Gosched()
		}
		close(stop)
		wg.Wait()
		c.Close()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: a call racing the stop failed with %v", round, err)
		}
	}
}

// A call that carries StateKey is answered with the server's state id,
// read after its handler, which a caller gets as gRPC's trailer; a call
// without it gets a plain reply (what a client from before state ids
// reads), errors included.
func TestReplyStateOnlyWhenAsked(t *testing.T) {
	var state atomic.Uint64
	state.Store(41)
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{ReplyState: func() uint64 { return state.Add(1) }})
	c := NewConn(ts.addr, ClientOptions{})
	defer c.Close()
	cp := dfspb.NewClientProtocolClient(c)
	asked := metadata.NewOutgoingContext(context.Background(), metadata.Pairs("smarth-user", "alice", StateKey, "7"))
	var tr metadata.MD
	if _, err := cp.GetFileInfo(asked, &dfspb.GetFileInfoRequest{Path: "/x"}, grpc.Trailer(&tr)); err != nil {
		t.Fatal(err)
	}
	if got := tr.Get(StateKey); len(got) != 1 || got[0] != "42" {
		t.Errorf("trailer %v, want %s: 42", tr, StateKey)
	}
	tr = nil
	if _, err := cp.GetFileInfo(asked, &dfspb.GetFileInfoRequest{Path: "/code/5"}, grpc.Trailer(&tr)); status.Code(err) != codes.NotFound {
		t.Fatalf("stat /code/5: %v", err)
	}
	if got := tr.Get(StateKey); len(got) != 1 || got[0] != "43" {
		t.Errorf("trailer of an error reply %v, want %s: 43", tr, StateKey)
	}
	tr = nil
	if _, err := cp.GetFileInfo(userCtx("alice"), &dfspb.GetFileInfoRequest{Path: "/x"}, grpc.Trailer(&tr)); err != nil {
		t.Fatal(err)
	}
	if tr != nil || state.Load() != 43 {
		t.Errorf("a call without %s got trailer %v (state read %d times past 41, want 2)", StateKey, tr, state.Load()-41)
	}
}
