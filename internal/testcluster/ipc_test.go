package testcluster

import (
	"bytes"
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
	"smarth/internal/client"
	"smarth/internal/ipc"
	"smarth/internal/pki"
	"smarth/internal/rpc/dfspb"
)

// The namenode's one RPC port serves gRPC and IPC; in secure mode both
// refuse a call with no, a forged or someone else's credential with the
// same status, and both serve a proven caller the same answer.
func TestSecureRefusalsSameOverIPCAndGRPC(t *testing.T) {
	c := Start(t, Options{DataNodes: 1})
	ctx := context.Background()
	if err := c.Client(t).Mkdir(ctx, "/d", 0o755, true); err != nil {
		t.Fatal(err)
	}
	gc, err := grpc.NewClient(c.NameNodeAddr(), pki.DialOption(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	ic := ipc.NewConn(c.NameNodeAddr(), ipc.ClientOptions{})
	defer ic.Close()
	transports := map[string]dfspb.ClientProtocolClient{"grpc": dfspb.NewClientProtocolClient(gc), "ipc": dfspb.NewClientProtocolClient(ic)}

	me := osUser()
	for _, tc := range []struct {
		name string
		md   metadata.MD
		ok   bool
	}{
		{"asserted name, no credential", metadata.Pairs(auth.MDUser, me), false},
		{"forged credential", metadata.Pairs(auth.MDUser, me, auth.MDCredential, me+":00"), false},
		{"another user's credential acting for the superuser", metadata.Pairs(auth.MDCredential, c.Credential("mallory"), auth.MDProxyUser, me), false},
		{"a forged datanode proof", metadata.Pairs(auth.MDDatanode, "dn1:00"), false},
		{"valid credential", metadata.Pairs(auth.MDCredential, c.Credential(me)), true},
	} {
		call := metadata.NewOutgoingContext(ctx, tc.md)
		var stats = map[string]*status.Status{}
		var owners = map[string]string{}
		for name, nn := range transports {
			r, err := nn.GetFileInfo(call, &dfspb.GetFileInfoRequest{Path: "/d"})
			stats[name] = status.Convert(err)
			owners[name] = r.GetStatus().GetOwner()
			_, err = nn.Delete(call, &dfspb.DeleteRequest{Path: "/nonexistent-" + name})
			if !tc.ok && status.Code(err) == codes.NotFound {
				t.Errorf("%s over %s: a delete reached the namespace", tc.name, name)
			}
		}
		g, i := stats["grpc"], stats["ipc"]
		if g.Code() != i.Code() || g.Message() != i.Message() || owners["grpc"] != owners["ipc"] {
			t.Errorf("%s: gRPC answered %v %q (owner %q), IPC %v %q (owner %q)", tc.name,
				g.Code(), g.Message(), owners["grpc"], i.Code(), i.Message(), owners["ipc"])
		}
		if tc.ok != (i.Code() == codes.OK) || (!tc.ok && i.Code() != codes.Unauthenticated && i.Code() != codes.PermissionDenied) {
			t.Errorf("%s: IPC answered %v %q", tc.name, i.Code(), i.Message())
		}
	}
	if _, err := c.Client(t).Stat(ctx, "/d"); err != nil {
		t.Fatalf("/d after the refused calls: %v", err)
	}
}

// With TLS on, clients of both transports write and read; an IPC client
// speaking plaintext to the TLS port is refused, not downgraded.
func TestTLSClusterBothTransports(t *testing.T) {
	c := Start(t, Options{DataNodes: 1, TLS: true})
	for _, tr := range []string{client.TransportIPC, client.TransportGRPC} {
		fs := c.Client(t, WithConfig(func(cfg *client.Config) { cfg.RPCTransport = tr }))
		putGet(t, fs, "/"+tr, bytes.Repeat([]byte(tr), 100_000))
	}
	ctx := metadata.NewOutgoingContext(context.Background(), metadata.Pairs(auth.MDCredential, c.Credential(osUser())))
	tlsConn := ipc.NewConn(c.NameNodeAddr(), ipc.ClientOptions{TLS: c.ClientTLS()})
	defer tlsConn.Close()
	r, err := dfspb.NewClientProtocolClient(tlsConn).GetFileInfo(ctx, &dfspb.GetFileInfoRequest{Path: "/ipc"})
	if err != nil || r.GetStatus().GetLength() != int64(len("ipc")*100_000) {
		t.Fatalf("IPC over TLS: %v %v", r, err)
	}
	plain := ipc.NewConn(c.NameNodeAddr(), ipc.ClientOptions{})
	defer plain.Close()
	if _, err := dfspb.NewClientProtocolClient(plain).GetFileInfo(ctx, &dfspb.GetFileInfoRequest{Path: "/ipc"}); status.Code(err) != codes.Unavailable {
		t.Fatalf("plaintext IPC to a TLS namenode: %v, want Unavailable", err)
	}
}
