package namenode

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"smarth/internal/auth"
	"smarth/internal/rpc/dfspb"
)

// Every method the namenode registers (on gRPC and IPC alike) has a rule,
// and every rule names a registered method: a method added to the
// protocol without a decision about who may call it is refused (below),
// and this test names it.
func TestEveryMethodHasARule(t *testing.T) {
	served := map[string]bool{}
	for _, d := range []grpc.ServiceDesc{dfspb.ClientProtocol_ServiceDesc, dfspb.DatanodeProtocol_ServiceDesc} {
		for _, m := range d.Methods {
			name := "/" + d.ServiceName + "/" + m.MethodName
			served[name] = true
			if _, ok := methodRules[name]; !ok {
				t.Errorf("%s has no rule in methodRules", name)
			}
		}
		if len(d.Streams) > 0 {
			t.Errorf("%s has streams; the interceptor covers unary calls only", d.ServiceName)
		}
	}
	for name := range methodRules {
		if !served[name] {
			t.Errorf("methodRules names %s, which the namenode does not serve", name)
		}
	}
}

// A method without a rule is refused before its handler runs, whoever
// calls; and a handler reached without the interceptor trusts no name the
// metadata asserts (there used to be a fallback to it).
func TestAttackUnlistedMethodAndAssertedCaller(t *testing.T) {
	nn, secret, _ := secureNN(t)
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(auth.MDCredential, auth.UserCredential(secret, "hdfs")))
	ran := false
	handler := func(context.Context, any) (any, error) { ran = true; return nil, nil }
	_, err := nn.interceptor(ctx, &dfspb.GetFileInfoRequest{Path: "/"}, &grpc.UnaryServerInfo{FullMethod: "/smarth.dfs.ClientProtocol/Unlisted"}, handler)
	wantErr(t, err, codes.PermissionDenied, "no authorization rule")
	if ran {
		t.Fatal("the handler of a method without a rule ran")
	}
	if _, err := nn.interceptor(ctx, &dfspb.GetFileInfoRequest{Path: "/"}, &grpc.UnaryServerInfo{FullMethod: "/smarth.dfs.ClientProtocol/GetFileInfo"}, handler); err != nil || !ran {
		t.Fatalf("a listed method: %v (handler ran: %v)", err, ran)
	}

	asserted := metadata.NewIncomingContext(context.Background(), metadata.Pairs(mdUser, "hdfs"))
	if c := callerOf(asserted); c.User != "" || len(c.Groups) != 0 || nn.state.Tree().IsSuper(c) {
		t.Fatalf("a context without an established caller, asserting hdfs: %+v", c)
	}
	err = nn.mkdirs(asserted, &dfspb.MkdirsRequest{Path: "/by-assertion", Permission: 0o755})
	wantErr(t, err, codes.PermissionDenied, "permission denied")
}
