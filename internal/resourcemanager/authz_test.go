package resourcemanager

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/rpc/mrpb"
)

// Every method the resource manager serves has a rule, and every rule
// names a method it serves: a method added to the protocol without one
// is refused (below), and this test says which.
func TestEveryRMMethodHasARule(t *testing.T) {
	served := map[string]bool{}
	for _, m := range mrpb.ResourceManager_ServiceDesc.Methods {
		name := "/" + mrpb.ResourceManager_ServiceDesc.ServiceName + "/" + m.MethodName
		served[name] = true
		if methodRules[name] == 0 {
			t.Errorf("%s has no authorization rule", name)
		}
	}
	for name := range methodRules {
		if !served[name] {
			t.Errorf("rule for %s, which the resource manager does not serve", name)
		}
	}
}

// A method without a rule is refused before its handler runs, whoever
// calls.
func TestAttackUnlistedRMMethod(t *testing.T) {
	rm := &ResourceManager{}
	called := false
	_, err := rm.authorize(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: rmService + "DropAllJobs"},
		func(context.Context, any) (any, error) { called = true; return nil, nil })
	if status.Code(err) != codes.PermissionDenied || called {
		t.Fatalf("unlisted method: err %v, handler called %v; want PermissionDenied before the handler", err, called)
	}
}
