package namenode

import (
	"context"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"smarth/internal/namenode/journal"
	"smarth/internal/rpc/dfspb"
)

// rpcMethod is one unary method of the namenode's two gRPC services.
type rpcMethod struct {
	full string        // "/smarth.dfs.ClientProtocol/Create", as the interceptor sees it
	fn   reflect.Value // bound to a clientRPC or datanodeRPC
	req  reflect.Type  // *dfspb.CreateRequest
}

// rpcMethods lists every method of the ClientProtocol and
// DatanodeProtocol servers of nn, in a stable order.
func rpcMethods(nn *NameNode) []rpcMethod {
	var out []rpcMethod
	for _, svc := range []struct {
		name  string
		iface reflect.Type
		impl  any
	}{
		{"ClientProtocol", reflect.TypeFor[dfspb.ClientProtocolServer](), &clientRPC{nn: nn}},
		{"DatanodeProtocol", reflect.TypeFor[dfspb.DatanodeProtocolServer](), &datanodeRPC{nn: nn}},
	} {
		v := reflect.ValueOf(svc.impl)
		for i := 0; i < svc.iface.NumMethod(); i++ {
			m := svc.iface.Method(i)
			if m.Type.NumIn() != 2 || !m.IsExported() {
				continue // streams and the embedding guard
			}
			out = append(out, rpcMethod{full: "/smarth.dfs." + svc.name + "/" + m.Name,
				fn: v.MethodByName(m.Name), req: m.Type.In(1)})
		}
	}
	return out
}

// FuzzRPC sends arbitrary protobuf requests (the bytes a gRPC call
// carries, decoded into the method's request type) to every method of
// the namenode's client and datanode protocols, as hdfs, alice or bob,
// in simple mode, one namenode over many calls so that calls meet the
// state earlier ones made. No request may panic a handler (the
// interceptor would turn it into an error, but a panic can leave state
// half-changed or a lock held), hang it past its deadline, or leave the
// namenode unable to answer the next call.
func FuzzRPC(f *testing.F) {
	cfg, logger := testConfig(f), testLogger(f)
	cfg.MetaDir = "/meta"
	mk := func() *NameNode {
		nn, err := newNameNode(cfg, logger, journal.NewMemFS(), time.Now)
		if err != nil {
			panic(err)
		}
		return nn
	}
	nn := mk()
	methods := rpcMethods(nn)
	index := map[string]int{}
	for i, m := range methods {
		if name := m.full[strings.LastIndexByte(m.full, '/')+1:]; index[name] == 0 {
			index[name] = i + 1 // ClientProtocol's ReportBadBlocks, not the datanodes'
		}
	}
	add := func(method string, who uint8, m proto.Message) {
		i := index[method] - 1
		if i < 0 {
			f.Fatalf("no method %s", method)
		}
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint16(i), who, b)
	}
	add("Mkdirs", 0, &dfspb.MkdirsRequest{Path: "/a/b", CreateParent: true, Permission: 0o777})
	add("Create", 1, &dfspb.CreateRequest{Path: "/a/b/f", ClientName: "c1", Replication: 3, BlockSize: 1 << 20, CreateParent: true})
	add("AddBlock", 1, &dfspb.AddBlockRequest{Path: "/a/b/f", ClientName: "c1"})
	add("Complete", 1, &dfspb.CompleteRequest{Path: "/a/b/f", ClientName: "c1"})
	add("GetBlockLocations", 2, &dfspb.GetBlockLocationsRequest{Path: "/a/b/f", Length: 1 << 40})
	add("GetListing", 2, &dfspb.GetListingRequest{Path: "/a", StartAfter: "zz"})
	add("Rename", 1, &dfspb.RenameRequest{Src: "/a/b/f", Dst: "/a/../g"})
	add("Delete", 0, &dfspb.DeleteRequest{Path: "/", Recursive: true})
	add("SetReplication", 1, &dfspb.SetReplicationRequest{Path: "/a/b/f", Replication: 1 << 30})
	add("SetPermission", 2, &dfspb.SetPermissionRequest{Path: "/a", Permission: 0o7777})
	add("SetOwner", 1, &dfspb.SetOwnerRequest{Path: "/a/b/f", Owner: "hdfs", Group: "supergroup"})
	add("SetQuota", 0, &dfspb.SetQuotaRequest{Path: "/a", NsQuota: 1, DsQuota: -2})
	add("SetTimes", 1, &dfspb.SetTimesRequest{Path: "/a/b/f", MtimeMs: -5, AtimeMs: 1 << 62})
	add("SetXAttr", 1, &dfspb.SetXAttrRequest{Path: "/a/b/f", Xattr: &dfspb.XAttr{Name: "user.k", Value: []byte{0}}, Flags: 3})
	add("GetContentSummary", 2, &dfspb.GetContentSummaryRequest{Path: "/"})
	add("Fsck", 0, &dfspb.FsckRequest{Path: "/"})
	add("RegisterDatanode", 0, &dfspb.RegisterDatanodeRequest{Datanode: &dfspb.DatanodeInfo{Id: "dn1", IpAddr: "127.0.0.1", DataPort: 1}})
	add("SendHeartbeat", 0, &dfspb.HeartbeatRequest{DatanodeId: "dn1"})
	add("BlockReport", 0, &dfspb.BlockReportRequest{DatanodeId: "dn1", Blocks: []*dfspb.ReportedBlock{{Block: &dfspb.ExtendedBlock{BlockId: 1 << 30, GenerationStamp: 1000, NumBytes: 1 << 40}}}})
	add("ReportBadBlocks", 2, &dfspb.ReportBadBlocksRequest{Blocks: []*dfspb.LocatedBlock{{Block: &dfspb.ExtendedBlock{BlockId: 1 << 30}}}})
	add("AddCacheDirective", 0, &dfspb.AddCacheDirectiveRequest{Directive: &dfspb.CacheDirectiveInfo{Path: "/a", Pool: "p"}})
	calls := 0
	f.Fuzz(func(t *testing.T, which uint16, who uint8, b []byte) {
		// A fresh namenode now and then keeps the state small enough
		// that every call stays cheap.
		if calls++; calls%5000 == 0 {
			nn.Close()
			nn = mk()
			methods = rpcMethods(nn)
		}
		m := methods[int(which)%len(methods)]
		req := reflect.New(m.req.Elem()).Interface().(proto.Message)
		if err := proto.Unmarshal(b, req); err != nil {
			return // gRPC refuses it before any handler
		}
		user := []string{"hdfs", "alice", "bob"}[int(who)%3]
		call(t, nn, m, user, req)
		// The namenode still answers (no lock left held, no state that
		// breaks the next call).
		call(t, nn, methods[index["GetFileInfo"]-1], "hdfs", &dfspb.GetFileInfoRequest{Path: "/"})
	})
}

// call runs one method as user with a 2-second deadline and fails the
// test if it does not return within 10 seconds.
func call(t *testing.T, nn *NameNode, m rpcMethod, user string, req proto.Message) {
	ctx, cancel := context.WithTimeout(callCtx(user), 2*time.Second)
	defer cancel()
	ctx, err := nn.ident.authenticate(ctx, m.full, req)
	if err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.fn.Call([]reflect.Value{reflect.ValueOf(ctx), reflect.ValueOf(req)})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("%s %v hung; goroutines:\n%s", m.full, req, buf[:runtime.Stack(buf, true)])
	}
}
