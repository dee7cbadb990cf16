package cachemgr

import (
	"context"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/topology"
)

// Namenode is what the manager reads of the namenode, and the one thing it
// asks it to do (Commit). Every method but Commit is called with the
// namenode's lock held; what they return is read under it and not kept.
type Namenode interface {
	// Block is a block of the block map, or nil.
	Block(id uint64) *blockmap.Block
	// IsLive says whether a datanode is registered and live.
	IsLive(node string) bool
	// Location is a registered datanode's host, address and rack.
	Location(node string) topology.Location
	// LiveDatanodes lists the live datanodes in the datanode report's
	// order (rack, host, id).
	LiveDatanodes() []*dfspb.DatanodeInfo
	// SortByDistance orders datanode ids nearest to a reader's host first.
	SortByDistance(ids []string, readerHost string)
	// Lookup is the inode at a path, whatever its permissions, or nil.
	Lookup(path string) *namespace.INode
	// Stat checks that a path exists as the caller sees it (an error
	// naming the path if not).
	Stat(c namespace.Caller, op, path string) error
	// Dirs is the namespace's cache pools and directives.
	Dirs() Dirs
	// Commit makes a pool or directive change as a namespace mutation:
	// under the namenode's lock it checks that the namenode takes
	// mutations and that the caller may make the change, runs check,
	// applies the change, logs it and runs after (if not nil); it
	// returns once the change is durable. ctx is the client call's (its
	// ids go into the change's record, for the retry cache).
	Commit(ctx context.Context, c namespace.Caller, ch *Change, check func() error, after func()) error
}

// Pool groups directives under an owner and a byte limit (HDFS's
// CachePool).
type Pool struct {
	Name, Owner, Group string
	Mode               uint32
	Limit              int64 // bytes; 0 = unlimited
}

// Directive pins a path (a file, or the files directly in a directory) on
// Replication datanodes (HDFS's CacheDirective).
type Directive struct {
	ID          int64
	Path, Pool  string
	Replication int
}

// Dirs is the persisted part of caching, as the namespace holds it.
type Dirs struct {
	Pools      []Pool      // by name
	Directives []Directive // by id
	LastID     int64       // highest directive id ever handed out; never reused
}

// Pool is the pool named name, or nil.
func (d Dirs) Pool(name string) *Pool {
	for i := range d.Pools {
		if d.Pools[i].Name == name {
			return &d.Pools[i]
		}
	}
	return nil
}

// Directive is the directive with id, or nil.
func (d Dirs) Directive(id int64) *Directive {
	for i := range d.Directives {
		if d.Directives[i].ID == id {
			return &d.Directives[i]
		}
	}
	return nil
}

// ChangeKind is what a Change does.
type ChangeKind uint8

const (
	AddPool ChangeKind = iota + 1
	RemovePool
	AddDirective
	RemoveDirective
)

// String is the change's name in messages, as hdfs cacheadmin's commands.
func (k ChangeKind) String() string {
	switch k {
	case AddPool:
		return "addPool"
	case RemovePool:
		return "removePool"
	case AddDirective:
		return "addDirective"
	case RemoveDirective:
		return "removeDirective"
	}
	return "unknown cache change"
}

// Change is one pool or directive change for the namenode to log and
// apply.
type Change struct {
	Kind ChangeKind
	// Pool: for AddPool the pool, for RemovePool its Name.
	Pool Pool
	// Directive: for AddDirective the directive (the check sets its ID),
	// for RemoveDirective its ID.
	Directive Directive
}
