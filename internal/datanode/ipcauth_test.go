package datanode

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
	"smarth/internal/datanode/store"
	"smarth/internal/rpc/dfspb"
)

// TestInterDatanodeNeedsDatanodeKey: with a datanode key, a peer without
// proof of it, or with a proof under another key, cannot start recovery of
// a replica being written (which stops its writer and can truncate it):
// Unauthenticated, replica untouched. Controls: a call with the cluster's
// key is served, and a whole lease recovery between two keyed datanodes
// (the primary proves itself to its peer) commits.
func TestInterDatanodeNeedsDatanodeKey(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "datanode.key")
	key, err := auth.LoadOrCreateKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	withKey := func(c *Config) { c.DatanodeKeyFile = keyFile }
	nn := startFakeNameNode(t)
	dn1, _ := startDataNode(t, nn, "", withKey)
	dn2, _ := startDataNode(t, nn, "", withKey)
	data := randomData(3*pkt, 41)
	leaveRBW(t, dn2, 600, data)

	conn, err := grpc.NewClient(dn2.IPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	peer := dfspb.NewInterDatanodeProtocolClient(conn)
	req := &dfspb.InitReplicaRecoveryRequest{Block: &dfspb.ExtendedBlock{BlockId: 600, GenerationStamp: 1}, RecoveryId: 7}
	call := func(cred string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if cred != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, auth.MDDatanode, cred)
		}
		_, err := peer.InitReplicaRecovery(ctx, req)
		return err
	}
	otherKey := make([]byte, 32)
	for name, cred := range map[string]string{"no proof": "", "other key": auth.DatanodeCredential(otherKey, "intruder")} {
		if err := call(cred); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("%s: InitReplicaRecovery = %v, want Unauthenticated", name, err)
		}
	}
	if r, _ := dn2.store.Get(600); r.State != store.RBW || r.GS != 1 || r.Length != int64(len(data)) {
		t.Fatalf("replica after refused calls: %+v, want the untouched RBW", r)
	}
	if err := call(auth.DatanodeCredential(key, "a-member")); err != nil {
		t.Fatalf("call with the cluster's key: %v", err)
	}

	leaveRBW(t, dn1, 610, data[:2*pkt])
	leaveRBW(t, dn2, 610, data)
	nn.command(dn1.ID(), recoverCmd(610, 5, dn1, dn2))
	waitFor(t, "CommitBlockSynchronization between keyed datanodes", func() bool { return nn.commit(610) != nil })
	if c := nn.commit(610); c.GetNewLength() != 2*pkt || len(c.GetNewTargets()) != 2 {
		t.Fatalf("commit %v, want both replicas at %d bytes", c, 2*pkt)
	}
}

// Every method the datanode's RPC port serves is in its rule table, and a
// method that is not is refused before any handler, even without a key.
func TestEveryDataNodeMethodHasARule(t *testing.T) {
	for _, m := range dfspb.InterDatanodeProtocol_ServiceDesc.Methods {
		name := "/" + dfspb.InterDatanodeProtocol_ServiceDesc.ServiceName + "/" + m.MethodName
		if !interDatanodeMethods[name] {
			t.Errorf("%s has no authorization rule", name)
		}
	}
	d := &DataNode{}
	called := false
	_, err := d.authorizePeer(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/smarth.dfs.InterDatanodeProtocol/DeleteEverything"},
		func(context.Context, any) (any, error) { called = true; return nil, nil })
	if status.Code(err) != codes.PermissionDenied || called {
		t.Fatalf("unlisted method: err %v, handler called %v; want PermissionDenied before the handler", err, called)
	}
}
