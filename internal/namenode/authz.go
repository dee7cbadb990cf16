package namenode

import (
	"context"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/cachemgr"
	"smarth/internal/namenode/namespace"
)

// Authorization in one place: every method the namenode serves, over gRPC
// and the IPC transport alike (both run nn.interceptor), has a rule in
// methodRules, checked before any handler runs. A method without one is
// refused, so a method added to the protocol is served only once someone
// decided who may call it (TestEveryMethodHasARule lists the ones
// missing). The rule says who may call at all; what a call may touch
// (paths, open files, blocks) is the handler's, by the namespace's
// permission rules as the caller the interceptor established.

// rule is who may call a method.
type rule uint8

const (
	// ruleUser: any authenticated user (a credential in secure mode, the
	// asserted name in simple mode); the handler checks what the call
	// names as that user.
	ruleUser rule = iota + 1
	// ruleService: the cluster's services (the superuser, a member of the
	// supergroup, or one of proxy_users): calls the resource manager
	// makes for the whole cluster.
	ruleService
	// ruleDatanode: the datanode protocol, with proof of the cluster's
	// datanode key whenever one is configured (always in secure mode).
	ruleDatanode
	// ruleSuperuser: the superuser or a member of the supergroup only
	// (HDFS's checkSuperuserPrivilege): administration of the whole
	// namenode, such as saving its namespace.
	ruleSuperuser
)

const (
	clientProtocol   = "/smarth.dfs.ClientProtocol/"
	datanodeProtocol = "/smarth.dfs.DatanodeProtocol/"
)

// methodRules is the namenode's rule table, by full method name.
var methodRules = func() map[string]rule {
	m := map[string]rule{}
	for _, name := range []string{
		// namespace and file data: the handler checks paths
		"Mkdirs", "Create", "GetBlockLocations", "GetFileInfo", "GetListing", "Delete", "Rename",
		"SetReplication", "SetPermission", "SetOwner", "SetTimes", "SetQuota", "CreateSymlink",
		"SetXAttr", "RemoveXAttr", "GetXAttrs", "ListXAttrs", "GetContentSummary",
		"GetAclStatus", "ModifyAclEntries", "RemoveAclEntries", "RemoveDefaultAcl", "RemoveAcl", "SetAcl",
		"AllowSnapshot", "DisallowSnapshot", "CreateSnapshot", "DeleteSnapshot", "RenameSnapshot",
		"GetSnapshottableDirListing", "GetSnapshotDiffReport",
		"SetStoragePolicy", "UnsetStoragePolicy", "GetStoragePolicy", "GetStoragePolicies",
		"Append", "Truncate", "Concat",
		// calls on an open file: fileForWriteLocked binds them to the
		// user who opened it
		"AddBlock", "Complete", "AbandonBlock", "GetAdditionalDatanode", "UpdateBlockForPipeline",
		"UpdatePipeline", "RenewLease",
		// cluster state every client reads, and its reports
		"ReportBadBlocks", "GetDatanodeReport", "Fsck", "GetServerDefaults", "ClientHeartbeat", "GetSpeeds",
		// where the active namenode is: every client must be able to find it,
		// and the active's state id, which observer reads start from
		"GetHAStatus", "Msync",
		// the handler lets every user GET and only a superuser change it
		"SetSafeMode",
		// cache: pools and directives check the superuser and the pool's
		// mode; CacheAccess the block's file
		"AddCachePool", "RemoveCachePool", "ListCachePools", "AddCacheDirective", "RemoveCacheDirective",
		"ListCacheDirectives", "GetCacheStats", "CacheAccess",
	} {
		m[clientProtocol+name] = ruleUser
	}
	m[clientProtocol+"JobCacheStatus"] = ruleService
	m[clientProtocol+"SaveNamespace"] = ruleSuperuser
	m[clientProtocol+"RefreshNodes"] = ruleSuperuser
	m[clientProtocol+"GetBlocks"] = ruleSuperuser
	m[clientProtocol+"MoveReplica"] = ruleSuperuser
	// the HA group's membership and its active (haops.go)
	for _, name := range []string{"TransferHALeader", "AddHAMember", "RemoveHAMember"} {
		m[clientProtocol+name] = ruleSuperuser
	}
	for _, name := range []string{"RegisterDatanode", "SendHeartbeat", "BlockReport", "BlockReceivedAndDeleted",
		"ReportBadBlocks", "CommitBlockSynchronization"} {
		m[datanodeProtocol+name] = ruleDatanode
	}
	return m
}()

// authorize establishes the caller of method by its rule and returns ctx
// carrying it.
func (nn *NameNode) authorize(ctx context.Context, method string, req any) (context.Context, error) {
	r, ok := methodRules[method]
	if !ok {
		return ctx, status.Errorf(codes.PermissionDenied, "%s: the namenode has no authorization rule for this method; refused", method)
	}
	if r == ruleDatanode {
		md, _ := metadata.FromIncomingContext(ctx)
		return ctx, nn.ident.authenticateDatanode(md, req)
	}
	ctx, err := nn.ident.authenticate(ctx, method, req)
	if err != nil || r == ruleUser {
		return ctx, err
	}
	if r == ruleSuperuser {
		if c := callerOf(ctx); !nn.state.Tree().IsSuper(c) {
			// HDFS's AccessControlException text.
			return ctx, errDenied("Access denied for user %s. Superuser privilege is required", c.User)
		}
		return ctx, nil
	}
	if c := callerOf(ctx); !nn.ident.isService(c, nn.state.Tree()) {
		return ctx, status.Errorf(codes.PermissionDenied, "%s: permission denied: user %s is not a service user (the namenode's superuser, a member of its supergroup, or one of its proxy_users)",
			method[len(clientProtocol):], c.User)
	}
	return ctx, nil
}

// isService says whether c acts for the cluster's services: the superuser
// (and supergroup) or a proxy user, as the resource manager and node
// managers are.
func (id *identity) isService(c namespace.Caller, t *namespace.Tree) bool {
	return t.IsSuper(c) || slices.Contains(id.proxyUsers, c.User)
}

// Cache pools and directives (cachemgr): pools are managed by superusers;
// a directive may be added or removed by a superuser, the pool's owner, or
// anyone the pool's mode lets write. authorizeCacheChangeLocked runs in
// the change's mutation, before the manager's own checks (does the pool
// exist already, does the path).
func (nn *NameNode) authorizeCacheChangeLocked(c namespace.Caller, ch *cachemgr.Change) error {
	switch ch.Kind {
	case cachemgr.AddPool, cachemgr.RemovePool:
		return nn.requireSuperLocked(ch.Kind.String()+" "+ch.Pool.Name, c)
	case cachemgr.AddDirective:
		return nn.poolWritableLocked("addDirective "+ch.Directive.Path, c, ch.Directive.Pool)
	case cachemgr.RemoveDirective:
		d := cacheView{nn}.Dirs().Directive(ch.Directive.ID)
		if d == nil {
			return nil // the manager answers NotFound
		}
		return nn.poolWritableLocked("removeDirective "+d.Path, c, d.Pool)
	}
	return errDenied("%s: no authorization rule for this cache change; refused", ch.Kind)
}

func (nn *NameNode) requireSuperLocked(op string, c namespace.Caller) error {
	if !nn.state.Tree().IsSuper(c) {
		return errDenied("%s: user %s is not a superuser (superuser: %s, supergroup: %s)", op, c.User, nn.cfg.Superuser, nn.cfg.Supergroup)
	}
	return nil
}

// poolWritableLocked checks that the caller may change a pool's directives.
func (nn *NameNode) poolWritableLocked(op string, c namespace.Caller, name string) error {
	p := cacheView{nn}.Dirs().Pool(name)
	if p == nil {
		return errNotFound("%s: cache pool %s does not exist", op, name)
	}
	inGroup := false
	for _, g := range c.Groups {
		inGroup = inGroup || g == p.Group
	}
	switch {
	case nn.state.Tree().IsSuper(c), c.User == p.Owner, inGroup && p.Mode&0o020 != 0, p.Mode&0o002 != 0:
		return nil
	}
	return errDenied("%s: user %s may not write cache pool %s (owner %s, group %s, mode %#o)", op, c.User, name, p.Owner, p.Group, p.Mode)
}

// mayCacheBlockLocked: only a caller who may read the block's file (the
// map task acts as its job's submitter), or a service identity, may ask
// to cache it: caching is a read that changes what datanodes hold in
// memory for everyone.
func (nn *NameNode) mayCacheBlockLocked(c namespace.Caller, b *blockmap.Block) error {
	if nn.ident.isService(c, nn.state.Tree()) {
		return nil
	}
	f := nn.state.Tree().ByID(b.FileID)
	if f == nil || nn.state.Tree().CheckAccess(c, f.Path(), namespace.Read) != nil {
		// Not the path: the caller may not know it.
		return errDenied("cache access: block %d: permission denied: user %s may not read its file", b.ID, c.User)
	}
	return nil
}
