package resourcemanager

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/rpc/mrpb"
)

// Authorization in one place, as on the namenode (internal/namenode,
// authz.go): every method the resource manager serves has a rule in
// methodRules, checked by authorize before its handler runs, and a method
// without one is refused, so a method added to the protocol is served
// only once someone decided who may call it (TestEveryRMMethodHasARule).
// The rule says who may call at all; what a call may touch (whose job) is
// the handler's, by owner and admin rules as the caller established here.

// rule is who may call a method.
type rule uint8

const (
	// ruleUser: any user whose credential verifies (the asserted name in
	// simple mode); the handler checks the job's owner.
	ruleUser rule = iota + 1
	// ruleNodeManager: a user of nodemanager_users (anyone in simple
	// mode, Hadoop's simple auth).
	ruleNodeManager
)

const rmService = "/smarth.mr.ResourceManager/"

// methodRules is the resource manager's rule table, by full method name.
var methodRules = map[string]rule{
	rmService + "SubmitJob":     ruleUser,
	rmService + "GetJob":        ruleUser,
	rmService + "ListJobs":      ruleUser,
	rmService + "KillJob":       ruleUser,
	rmService + "ListNodes":     ruleUser, // as YARN's getClusterNodes: any authenticated user
	rmService + "RefreshNodes":  ruleUser, // the handler admits admins only
	rmService + "Heartbeat":     ruleNodeManager,
	rmService + "GetMapOutputs": ruleNodeManager,
}

// authorize is the gRPC server's interceptor: the method's rule, or a
// refusal for a method that has none.
func (rm *ResourceManager) authorize(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	var err error
	switch methodRules[info.FullMethod] {
	case ruleUser:
		_, err = rm.caller(ctx)
	case ruleNodeManager:
		_, err = rm.nodeCaller(ctx, describeCall(info.FullMethod, req))
	default:
		err = status.Errorf(codes.PermissionDenied, "%s: the resource manager has no authorization rule for this method", info.FullMethod)
	}
	if err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

// describeCall names a node manager's call as its refusal should: by the
// node or attempt it is about.
func describeCall(method string, req any) string {
	switch r := req.(type) {
	case *mrpb.HeartbeatRequest:
		return fmt.Sprintf("heartbeat from node %q", r.GetNodeId())
	case *mrpb.GetMapOutputsRequest:
		return fmt.Sprintf("map output query for attempt %q", r.GetAttemptId())
	}
	return method
}
