package mapreduce

import (
	"context"
	"io"

	"smarth/internal/client"
)

// DFS adapts smarth's file system client to FS. Node managers create the
// client with ClientHost set to their own hostname so that reads prefer
// the local replica and output's first replica is written locally.
func DFS(c *client.FileSystem) FS { return dfs{c} }

type dfs struct{ c *client.FileSystem }

func (d dfs) Create(ctx context.Context, p string, o CreateOptions) (io.WriteCloser, error) {
	return d.c.Create(ctx, p, client.CreateOptions{Overwrite: o.Overwrite, Replication: o.Replication})
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

func (d dfs) Delete(ctx context.Context, p string, recursive bool) error {
	return d.c.Delete(ctx, p, recursive)
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
		ReaderHost: a.Host, DatanodeID: a.Datanode, Affinity: a.Affinity})
	return err
}
