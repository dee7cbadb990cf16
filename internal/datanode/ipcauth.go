package datanode

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
)

// authorizePeer guards InterDatanodeProtocol (lease recovery's
// InitReplicaRecovery and UpdateReplicaUnderRecovery, which stop writers
// and truncate replicas): with a datanode key configured, a call must
// carry proof of it (smarth-dn-auth, as the namenode's datanode protocol
// requires), so only members of the cluster can reach into a replica. The
// recovery primary sends the proof through rpcContext. Without a key (a
// simple-mode cluster) the protocol stays open, as the namenode's does.
//
// It is the datanode's one authorization point for its RPC port, with its
// rule table: interDatanodeMethods are the methods served (each needs the
// datanode key), and any other method is refused, key or not, so a method
// added later is served only once someone decided who may call it.
func (d *DataNode) authorizePeer(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if !interDatanodeMethods[info.FullMethod] {
		return nil, status.Errorf(codes.PermissionDenied, "%s: the datanode has no authorization rule for this method", info.FullMethod)
	}
	if d.dnKey == nil {
		return handler(ctx, req)
	}
	md, _ := metadata.FromIncomingContext(ctx)
	creds := md.Get(auth.MDDatanode)
	if len(creds) != 1 {
		return nil, status.Errorf(codes.Unauthenticated, "%s: InterDatanodeProtocol needs proof of the cluster's datanode key (datanode_key_file)", info.FullMethod)
	}
	peer, err := auth.VerifyDatanode(d.dnKey, creds[0])
	if err != nil {
		return nil, status.Errorf(codes.Unauthenticated, "%s: %v", info.FullMethod, err)
	}
	d.log.Debug("inter-datanode call", "method", info.FullMethod, "peer", peer)
	return handler(ctx, req)
}

// interDatanodeMethods is the datanode's rule table: every method of its
// RPC port, all under the datanode-key rule.
var interDatanodeMethods = map[string]bool{
	"/smarth.dfs.InterDatanodeProtocol/InitReplicaRecovery":        true,
	"/smarth.dfs.InterDatanodeProtocol/UpdateReplicaUnderRecovery": true,
}
