package ipc

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"smarth/internal/pki"
)

// BenchmarkRoundTrip makes the same small call (GetFileInfo, identity
// metadata, a handler that does almost nothing) over both transports of
// one mux, from 64 goroutines per core: what each transport costs per call
// on both ends together. Compare the ns/op of the two in one run.
func BenchmarkRoundTrip(b *testing.B) {
	ts := startServer(b, "127.0.0.1:0", nil, ServerOptions{})
	gc, err := grpc.NewClient(ts.addr, pki.DialOption(nil))
	if err != nil {
		b.Fatal(err)
	}
	defer gc.Close()
	ic := NewConn(ts.addr, ClientOptions{})
	defer ic.Close()
	ctx := metadata.NewOutgoingContext(context.Background(), metadata.Pairs("smarth-user", "alice", "smarth-auth", "alice:bWFjbWFjbWFjbWFjbWFjbWFjbWFj"))
	for _, tr := range []struct {
		name string
		cc   grpc.ClientConnInterface
	}{{"grpc", gc}, {"ipc", ic}} {
		b.Run(tr.name, func(b *testing.B) {
			b.SetParallelism(64)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := stat(ctx, tr.cc, "/bench"); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
