package namenode

import (
	"context"
	"fmt"
	"log/slog"
	"os/user"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
)

// identity establishes who calls the namenode (docs/security.md). In
// secure mode a client proves its user with a credential the namenode's
// identity secret signed; in simple mode the asserted name is trusted, as
// Hadoop's simple auth. In both modes groups are resolved here, never
// taken from the caller, so claiming the supergroup gives nothing; and the
// datanode protocol needs the cluster's datanode key whenever one is
// configured (always in secure mode).
type identity struct {
	mode       string
	secret     []byte // identity secret (secure mode)
	dnKey      []byte // datanode key; nil: datanode protocol open (simple mode without a key)
	superuser  string
	proxyUsers []string
	static     map[string][]string // configured groups; users not named are looked up in the OS

	mu     sync.Mutex // guards groups
	groups map[string]groupEntry

	// web issues and checks WebHDFS tokens; a token is also a credential
	// here (a datanode serving a WebHDFS redirect presents one).
	web *webAuth

	creds credCache // credentials whose signature checked out (verify)
}

type groupEntry struct {
	groups []string
	at     time.Time
}

// groupCacheTTL bounds how stale an OS group lookup may be (Hadoop:
// hadoop.security.groups.cache.secs, 300 s).
const groupCacheTTL = 5 * time.Minute

func newIdentity(cfg Config, logger *slog.Logger) (*identity, error) {
	id := &identity{mode: cfg.Auth, superuser: cfg.Superuser, static: cfg.Groups, groups: map[string]groupEntry{},
		proxyUsers: append([]string{cfg.Superuser}, cfg.ProxyUsers...)}
	var err error
	if cfg.Auth == auth.Secure {
		if id.secret, err = auth.LoadOrCreateKey(cfg.authSecretFile()); err != nil {
			return nil, fmt.Errorf("auth_secret_file: %w", err)
		}
	} else {
		logger.Warn("auth is simple: the namenode trusts the user name each caller asserts; use only on a trusted network")
	}
	if cfg.Auth == auth.Secure || cfg.DatanodeKeyFile != "" {
		if id.dnKey, err = auth.LoadOrCreateKey(cfg.datanodeKeyFile()); err != nil {
			return nil, fmt.Errorf("datanode_key_file: %w", err)
		}
	}
	if cfg.Auth == auth.Secure { // where operators find what datanodes and the resource manager need
		logger.Info("auth is secure", "auth_secret_file", cfg.authSecretFile(), "datanode_key_file", cfg.datanodeKeyFile(),
			"hint", "copy datanode_key_file (0600) to every datanode; mint users' tokens with smarth login --secret-file")
	}
	if id.web, err = newWebAuth(id, cfg.MetaDir, time.Now); err != nil {
		return nil, err
	}
	return id, nil
}

func (c Config) authSecretFile() string {
	if c.AuthSecretFile != "" {
		return c.AuthSecretFile
	}
	return filepath.Join(c.MetaDir, "auth.key")
}

func (c Config) datanodeKeyFile() string {
	if c.DatanodeKeyFile != "" {
		return c.DatanodeKeyFile
	}
	return filepath.Join(c.MetaDir, "datanode.key")
}

type callerKey struct{}

// authenticate proves the user calling method and returns ctx carrying
// it (the datanode protocol is proven by authenticateDatanode; authorize
// in authz.go picks which by the method's rule).
func (id *identity) authenticate(ctx context.Context, method string, req any) (context.Context, error) {
	// ValueFromIncomingContext reads one key without copying the whole
	// metadata map, which FromIncomingContext does (with every key
	// lower-cased): that copy was 4% of the namenode's CPU per call.
	name := first(metadata.ValueFromIncomingContext(ctx, auth.MDUser))
	if id.mode == auth.Secure {
		u, err := id.verify(ctx, first(metadata.ValueFromIncomingContext(ctx, auth.MDCredential)), method, req)
		if err != nil {
			return ctx, status.Error(codes.Unauthenticated, err.Error())
		}
		name = u
	}
	if name == "" {
		name = defaultUser
	}
	if p := first(metadata.ValueFromIncomingContext(ctx, auth.MDProxyUser)); p != "" && p != name {
		if !slices.Contains(id.proxyUsers, name) {
			return ctx, status.Errorf(codes.PermissionDenied, "user %s may not act for %s (not a proxy user: proxy_users)", name, p)
		}
		name = p
	}
	return context.WithValue(ctx, callerKey{}, namespace.Caller{User: name, Groups: id.groupsOf(name)}), nil
}

// authenticateDatanode checks the datanode key proof and that a request
// naming a datanode names the proven one: a datanode cannot speak for
// another.
func (id *identity) authenticateDatanode(md metadata.MD, req any) error {
	if id.dnKey == nil {
		return nil
	}
	dn, err := auth.VerifyDatanode(id.dnKey, first(md.Get(auth.MDDatanode)))
	if err != nil {
		return status.Error(codes.Unauthenticated, err.Error())
	}
	named := ""
	switch r := req.(type) {
	case interface{ GetDatanodeId() string }:
		named = r.GetDatanodeId()
	case *dfspb.RegisterDatanodeRequest:
		named = r.GetDatanode().GetId()
	}
	if named != "" && named != dn {
		return status.Errorf(codes.PermissionDenied, "datanode %s may not speak for datanode %s", dn, named)
	}
	return nil
}

// groupsOf resolves user's groups on the server: the configured table,
// else the OS groups of the user on the namenode's host, else none. Never
// a group named like the user: a user called like the supergroup (or any
// group) would be a member of it (issue 23, hole 9); HDFS's
// ShellBasedUnixGroupsMapping also gives an unknown user no groups.
func (id *identity) groupsOf(name string) []string {
	if g, ok := id.static[name]; ok {
		return g
	}
	id.mu.Lock()
	e, ok := id.groups[name]
	id.mu.Unlock()
	if ok && time.Since(e.at) < groupCacheTTL {
		return e.groups
	}
	groups := osGroups(name)
	id.mu.Lock()
	id.groups[name] = groupEntry{groups: groups, at: time.Now()}
	id.mu.Unlock()
	return groups
}

// osGroups are name's groups on this host: none for a user the host does
// not know.
func osGroups(name string) []string {
	u, err := user.Lookup(name)
	if err != nil {
		return nil
	}
	ids, err := u.GroupIds()
	if err != nil {
		return nil
	}
	var out []string
	for _, gid := range ids {
		if g, err := user.LookupGroupId(gid); err == nil {
			out = append(out, g.Name)
		}
	}
	return out
}
