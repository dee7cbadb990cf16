package ipc

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"smarth/internal/rpc/dfspb"
)

// Replies that carry a state id free their call's in-flight slot as plain
// replies do: many more calls than MaxInFlight, each asking for the state,
// all get answered on one connection. (They once did not: the writer
// counted only plain replies, and after MaxInFlight calls the connection
// stopped being read.)
func TestReplyStateFreesInFlightSlots(t *testing.T) {
	ts := startServer(t, "127.0.0.1:0", nil, ServerOptions{MaxInFlight: 16, ReplyState: func() uint64 { return 5 }})
	c := NewConn(ts.addr, ClientOptions{})
	defer c.Close()
	h := NewHeader(metadata.Pairs("smarth-user", "alice"))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				var tr metadata.MD
				var out dfspb.GetFileInfoResponse
				err := c.InvokeHeader(context.Background(), h.With(StateKey, strconv.Itoa(g*1000+i)), 20*time.Second,
					dfspb.ClientProtocol_GetFileInfo_FullMethodName, &dfspb.GetFileInfoRequest{Path: "/x"}, &out, grpc.Trailer(&tr))
				if err != nil || len(tr.Get(StateKey)) != 1 {
					t.Errorf("call %d of goroutine %d: %v, trailer %v", i, g, err, tr)
					return
				}
			}
		})
	}
	wg.Wait()
}
