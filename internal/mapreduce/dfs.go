package mapreduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"

	"smarth/internal/client"
)

// DFS adapts smarth's file system client to FS. Node managers create the
// client with ClientHost set to their own hostname so that reads prefer
// the local replica and output's first replica is written locally.
func DFS(c *client.FileSystem) FS { return dfs{c} }

type dfs struct{ c *client.FileSystem }

// Home is /user/USER, which relative job paths resolve against.
func (d dfs) Home() string { return "/user/" + d.c.User() }

func (d dfs) Create(ctx context.Context, p string, o CreateOptions) (io.WriteCloser, error) {
	return d.c.Create(ctx, p, client.CreateOptions{Overwrite: o.Overwrite, Replication: o.Replication,
		NoCreateParent: o.NoCreateParent})
}

func (d dfs) Open(ctx context.Context, p string) (File, error) { return d.c.Open(ctx, p) }

func (d dfs) Stat(ctx context.Context, p string) (FileInfo, error) {
	st, err := d.c.Stat(ctx, p)
	if err != nil {
		return FileInfo{}, err
	}
	return FileInfo{Path: st.Path, Size: st.Size, IsDir: st.IsDir}, nil
}

func (d dfs) List(ctx context.Context, p string) ([]FileInfo, error) {
	ls, err := d.c.List(ctx, p)
	if err != nil {
		return nil, err
	}
	out := make([]FileInfo, len(ls))
	for i, st := range ls {
		out[i] = FileInfo{Path: st.Path, Size: st.Size, IsDir: st.IsDir}
	}
	return out, nil
}

func (d dfs) MkdirAll(ctx context.Context, p string) error { return d.c.Mkdir(ctx, p, 0o755, true) }

func (d dfs) Mkdir(ctx context.Context, p string) error { return d.c.Mkdir(ctx, p, 0o755, false) }

func (d dfs) Delete(ctx context.Context, p string, recursive bool) error {
	return d.c.Delete(ctx, p, recursive)
}

func (d dfs) SetPermission(ctx context.Context, p string, mode fs.FileMode) error {
	return d.c.SetPermission(ctx, p, mode)
}

func (d dfs) Rename(ctx context.Context, src, dst string) error { return d.c.Rename(ctx, src, dst) }

func (d dfs) BlockLocations(ctx context.Context, p string, off, n int64) ([]BlockLocation, error) {
	ls, err := d.c.BlockLocations(ctx, p, off, n)
	if err != nil {
		return nil, err
	}
	out := make([]BlockLocation, len(ls))
	for i, b := range ls {
		out[i] = BlockLocation{Offset: b.Offset, Length: b.Length, BlockID: b.BlockID, Hosts: b.Hosts, Racks: b.Racks, Cached: b.Cached}
	}
	return out, nil
}

var _ CacheReporter = dfs{}

// ReportCacheAccess tells the namenode's cache manager of a map task's
// read (seed 003). The answer (whether and where the block is now cached)
// is not needed by the task.
func (d dfs) ReportCacheAccess(ctx context.Context, a CacheAccess) error {
	_, _, err := d.c.ReportCacheAccess(ctx, client.CacheAccess{BlockID: a.BlockID, App: a.App, JobID: a.JobID,
		ReaderHost: a.Host, DatanodeID: a.Datanode, Affinity: a.Affinity, ReadBytes: a.ReadBytes, ReadTime: a.ReadTime,
		TaskTime: a.TaskTime})
	return err
}

// UserFS gives the file system as one user sees it. The resource manager
// (output checks, commit, abort) and the node managers (tasks) act on a
// job's files as its submitter, so the namenode's permission checks apply
// to the job as they would to the user's own commands.
type UserFS interface {
	For(user string) (FS, error)
	Close() error
}

// SharedFS is a UserFS that gives every user the same FS (tests over a
// LocalFS, which has no users).
type SharedFS struct{ FS FS }

func (s SharedFS) For(string) (FS, error) { return s.FS, nil }
func (s SharedFS) Close() error           { return nil }

// DFSPool is a UserFS of DFS clients, one per user, made on first use
// from a base configuration with User set. A client is kept until the
// pool is closed: it holds the user's leases and a connection.
type DFSPool struct {
	base client.Config

	mu      sync.Mutex // guards clients, closed
	clients map[string]*client.FileSystem
	closed  bool
}

var _ UserFS = (*DFSPool)(nil)

// NewDFSPool returns a pool of clients configured like base.
func NewDFSPool(base client.Config) *DFSPool {
	return &DFSPool{base: base, clients: map[string]*client.FileSystem{}}
}

// For returns the DFS as user. Which identity the namenode then
// establishes depends on the cluster's identity mode (today the name is
// asserted in the RPC metadata, Hadoop's simple mode).
func (p *DFSPool) For(user string) (FS, error) {
	c, err := p.Client(user)
	if err != nil {
		return nil, err
	}
	return DFS(c), nil
}

// Client is the pool's DFS client acting as user, for what FS does not
// carry (modes and owners: log aggregation).
func (p *DFSPool) Client(user string) (*client.FileSystem, error) {
	if user == "" {
		return nil, errors.New("a job's file system access needs a user")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("DFS client pool closed")
	}
	if c := p.clients[user]; c != nil {
		return c, nil
	}
	cfg := p.base
	cfg.User = user
	if cfg.ClientName != "" {
		cfg.ClientName += "-" + user
	}
	c, err := client.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("DFS client for user %s: %w", user, err)
	}
	p.clients[user] = c
	return c, nil
}

// Close closes every client.
func (p *DFSPool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var errs []error
	for _, c := range p.clients {
		errs = append(errs, c.Close())
	}
	p.clients = nil
	return errors.Join(errs...)
}
