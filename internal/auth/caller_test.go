package auth

import (
	"context"
	"reflect"
	"testing"

	"google.golang.org/grpc/metadata"
)

// A caller's metadata holds exactly the fields it has, the same through
// every way it is attached (pairs, outgoing context, per-RPC credential).
func TestCallerMetadata(t *testing.T) {
	c := Caller{User: "alice", Credential: "svc:00ff", ProxyUser: "alice", Client: "c1"}
	want := map[string]string{MDUser: "alice", "smarth-client": "c1", MDCredential: "svc:00ff", MDProxyUser: "alice"}
	got, err := c.GetRequestMetadata(context.Background())
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("GetRequestMetadata = %v, %v; want %v", got, err, want)
	}
	md, _ := metadata.FromOutgoingContext(c.Outgoing(context.Background()))
	for k, v := range want {
		if g := md.Get(k); len(g) != 1 || g[0] != v {
			t.Errorf("outgoing %s = %v, want %q", k, g, v)
		}
	}
	if kv := (Caller{Credential: "bob:01"}).Pairs(); !reflect.DeepEqual(kv, []string{MDCredential, "bob:01"}) {
		t.Errorf("credential-only caller sends %v: no asserted name, no proxy", kv)
	}
	if (Caller{}).RequireTransportSecurity() {
		t.Error("RequireTransportSecurity: TLS is the cluster's switch, not the credential's")
	}
}
