package auth

import (
	"context"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
)

// Caller is what a client attaches to each control-plane call: who it
// says it is, its proof, and its name. It is the one place metadata for
// identity is built on the client side (the DFS client over gRPC and IPC,
// job clients, node managers, admin tools, the cluster and testbed
// launchers), and a gRPC per-RPC credential (grpc.WithPerRPCCredentials)
// for connections that want it attached by the transport. The servers
// establish the caller from the credential alone in secure mode
// (internal/namenode, internal/resourcemanager); the asserted User
// counts only in simple mode.
type Caller struct {
	User       string // asserted name: trusted only in simple mode ("" sends none)
	Credential string // "user:mac", secure mode ("" sends none)
	// ProxyUser, when set, is the user the call acts for (Hadoop's proxy
	// users): the credential's user must be allowed to.
	ProxyUser string
	Client    string // the client's name (leases, logs); "" sends none
	// Datanode is a datanode's proof of the cluster's datanode key
	// (DatanodeCredential), on the datanode protocol.
	Datanode string
}

var _ credentials.PerRPCCredentials = Caller{}

// Pairs is the caller as metadata key/value pairs.
func (c Caller) Pairs() []string {
	var kv []string
	add := func(k, v string) {
		if v != "" {
			kv = append(kv, k, v)
		}
	}
	add(MDUser, c.User)
	add("smarth-client", c.Client)
	add(MDCredential, c.Credential)
	add(MDProxyUser, c.ProxyUser)
	add(MDDatanode, c.Datanode)
	return kv
}

// MD is the caller as outgoing metadata.
func (c Caller) MD() metadata.MD { return metadata.Pairs(c.Pairs()...) }

// Outgoing returns ctx carrying the caller on its outgoing calls.
func (c Caller) Outgoing(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, c.Pairs()...)
}

// GetRequestMetadata attaches the caller to a gRPC call.
func (c Caller) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	kv := c.Pairs()
	m := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m, nil
}

// RequireTransportSecurity is false: TLS is the cluster's switch (tls:
// true), and a simple or plaintext cluster still needs the caller's name.
func (c Caller) RequireTransportSecurity() bool { return false }
