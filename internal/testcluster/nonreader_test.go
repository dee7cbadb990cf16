package testcluster

import (
	"encoding/binary"
	"net"
	"runtime"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"smarth/internal/ipc"
	"smarth/internal/rpc/dfspb"
)

// A peer with no credential sends calls to the namenode over IPC and
// never reads the refusals: the namenode stops reading it once
// MaxInFlight replies are unwritten (the peer's writes stall), and its
// heap does not grow with the number of calls sent (it grew 190 MiB for
// 400,000 calls before replies were bounded).
func TestNameNodeBoundsRepliesToPeerThatDoesNotRead(t *testing.T) {
	c := Start(t, Options{DataNodes: 0})
	req, _ := proto.Marshal(&dfspb.GetFileInfoRequest{Path: "/"})
	const method = "/smarth.dfs.ClientProtocol/GetFileInfo"
	const calls = 400000
	var b []byte
	b = append(b, ipc.Preface...)
	for i := range calls {
		body := []byte{1}
		body = binary.AppendUvarint(body, uint64(i+1))
		body = append(body, 0) // no timeout
		body = binary.AppendUvarint(body, uint64(len(method)))
		body = append(body, method...)
		body = append(body, 0) // no metadata
		body = append(body, req...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(body)))
		b = append(b, body...)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	nc, err := net.Dial("tcp", c.NameNodeAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.(*net.TCPConn).SetReadBuffer(4 << 10)
	nc.SetWriteDeadline(time.Now().Add(3 * time.Second))
	n, werr := nc.Write(b)
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("wrote %d of %d bytes (%v); namenode process heap grew %d MiB", n, len(b), werr, grew>>20)
	if werr == nil {
		t.Errorf("the namenode read all %d calls of a peer that reads none of its replies: no backpressure", calls)
	}
	if grew > 64<<20 {
		t.Errorf("heap grew %d MiB for one unauthenticated connection that does not read", grew>>20)
	}
}
