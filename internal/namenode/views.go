package namenode

import (
	"context"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/cachemgr"
	"smarth/internal/namenode/console"
	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/topology"
)

// What the packages beside the server see of it: each defines the
// interface it reads the namenode through, and this file implements them
// on the server's state, so that a change in how the server holds its
// state is re-pointed here and nowhere else.

// cacheView is the cache manager's view (cachemgr.Namenode). Its methods
// but Commit run under nn.mu, which the manager takes.
type cacheView struct{ nn *NameNode }

var _ cachemgr.Namenode = cacheView{}

func (v cacheView) Block(id uint64) *blockmap.Block { return v.nn.state.Blocks().Get(id) }

func (v cacheView) IsLive(node string) bool { return v.nn.isLive(node) }

func (v cacheView) Location(node string) topology.Location { return v.nn.nodes[node].location() }

func (v cacheView) LiveDatanodes() []*dfspb.DatanodeInfo {
	var infos []*dfspb.DatanodeInfo
	for _, dn := range v.nn.nodes {
		if dn.live {
			infos = append(infos, dn.info)
		}
	}
	sortInfos(infos)
	return infos
}

func (v cacheView) SortByDistance(ids []string, readerHost string) {
	v.nn.sortByDistanceLocked(ids, v.nn.clientLocationLocked(readerHost), nil)
}

func (v cacheView) Lookup(path string) *namespace.INode {
	n, err := v.nn.state.Tree().Lookup(path)
	if err != nil {
		return nil
	}
	return n
}

func (v cacheView) Stat(c namespace.Caller, op, path string) error {
	_, err := v.nn.state.Tree().Stat(c, op, path)
	return err
}

func (v cacheView) Dirs() cachemgr.Dirs {
	d := v.nn.state.Cache()
	out := cachemgr.Dirs{LastID: d.LastID()}
	for _, p := range d.Pools() {
		out.Pools = append(out.Pools, cachemgr.Pool(*p))
	}
	for _, dir := range d.Directives() {
		out.Directives = append(out.Directives, cachemgr.Directive(*dir))
	}
	return out
}

// Commit runs a pool or directive change as a namespace mutation: the
// namenode's authorization for it first, then the manager's check, which
// sets a new directive's id. The record carries ctx's call ids, if any
// (atMostOnce), as a create's does.
func (v cacheView) Commit(ctx context.Context, c namespace.Caller, ch *cachemgr.Change, check func() error, after func()) error {
	nn := v.nn
	p, d := ch.Pool, ch.Directive
	var rec fsstate.Record
	var addDir *fsstate.AddCacheDirective
	target := p.Name
	switch ch.Kind {
	case cachemgr.AddPool:
		rec = &fsstate.AddCachePool{Pool: p.Name, Owner: p.Owner, Group: p.Group, Perm: p.Mode, Limit: p.Limit}
	case cachemgr.RemovePool:
		rec = &fsstate.RemoveCachePool{Pool: p.Name}
	case cachemgr.AddDirective:
		addDir = &fsstate.AddCacheDirective{Path: d.Path, Pool: d.Pool, Replication: d.Replication}
		rec, target = addDir, d.Path
	case cachemgr.RemoveDirective:
		rec, target = &fsstate.RemoveCacheDirective{DirectiveID: d.ID}, ""
	default:
		return errInvalid("%s: not a cache change", ch.Kind)
	}
	_, err := nn.mutateCall(loggedCall(ctx), ch.Kind.String(), target, c, rec, func() error {
		if err := nn.authorizeCacheChangeLocked(c, ch); err != nil {
			return err
		}
		if err := check(); err != nil {
			return err
		}
		if addDir != nil {
			addDir.DirectiveID = ch.Directive.ID
		}
		return nil
	}, func(fsstate.Applied) {
		if after != nil {
			after()
		}
	})
	return err
}

// consoleView is the web console's view (console.Namenode).
type consoleView struct{ nn *NameNode }

var _ console.Namenode = consoleView{}

func (v consoleView) Overview() console.Overview {
	nn := v.nn
	nn.mu.RLock()
	o := console.Overview{
		Addr: nn.Addr(), Placement: nn.cfg.Placement, Started: nn.startedAt,
		SafeMode: nn.safe.on, SafeModeReason: nn.safe.reason(nn.cfg), LastTxID: nn.journal.LastTxID(),
		Files: nn.state.Tree().Files(), Dirs: nn.state.Tree().Dirs(), Blocks: nn.state.Blocks().Len(),
		OpenFiles: nn.leases.files(), UnderReplicated: nn.stats.underReplicated, Missing: nn.stats.missing,
		Corrupt: nn.stats.corrupt, Pending: len(nn.pending),
	}
	for id, dn := range nn.nodes {
		o.Datanodes = append(o.Datanodes, console.Datanode{Info: dn.snapshot(), Live: dn.live, LastSeen: dn.lastSeen,
			Blocks: nn.state.Blocks().NodeBlockCount(id)})
	}
	nn.mu.RUnlock()
	o.Health = nn.health()
	o.Cache = nn.cache.Stats()
	o.Speeds = nn.speeds.Records("")
	if nn.ha != nil {
		o.HA = nn.ha.consoleHA()
	}
	return o
}

func (v consoleView) Journal() console.Journal {
	nn := v.nn
	nn.mu.RLock()
	j := console.Journal{Dir: nn.cfg.MetaDir, LastTxID: nn.journal.LastTxID(), CkptTxID: nn.ckptTx, CkptAt: nn.ckptAt,
		EveryTxns: nn.cfg.CheckpointTxns, Every: nn.cfg.CheckpointPeriod}
	nn.mu.RUnlock()
	j.Err = nn.journal.Err()
	return j
}

func (v consoleView) Health() error { return v.nn.health() }

func (v consoleView) Conf() any { return v.nn.cfg }

func (v consoleView) DatanodeHosts() map[string]string {
	nn := v.nn
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	out := make(map[string]string, len(nn.nodes))
	for id, dn := range nn.nodes {
		out[id] = dn.info.Hostname
	}
	return out
}

// webCtx makes the console's calls as its web user.
func webCtx(ctx context.Context) context.Context {
	return context.WithValue(ctx, callerKey{}, namespace.Caller{User: console.WebUser, Groups: []string{console.WebUser}})
}

func (v consoleView) FileInfo(ctx context.Context, path string) (*dfspb.FileStatus, error) {
	return v.nn.fileInfo(webCtx(ctx), path)
}

func (v consoleView) Listing(ctx context.Context, req *dfspb.GetListingRequest) (*dfspb.GetListingResponse, error) {
	return v.nn.listing(webCtx(ctx), req)
}

func (v consoleView) BlockLocations(ctx context.Context, req *dfspb.GetBlockLocationsRequest) (*dfspb.LocatedBlocks, error) {
	return v.nn.blockLocations(webCtx(ctx), req)
}
