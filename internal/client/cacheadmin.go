package client

import (
	"context"
	"errors"
	"strconv"

	"google.golang.org/grpc/status"

	"smarth/internal/rpc/dfspb"
)

// cacheErr is mapError keeping the namenode's own words: for pools and
// directives "not found" may be the pool, not the path, and the generic
// "no such file or directory" would point at the wrong thing.
func cacheErr(op, name string, err error) error {
	mapped := mapError(op, name, err)
	var pe *PathError
	if st, ok := status.FromError(err); ok && err != nil && errors.As(mapped, &pe) && st.Message() != "" {
		pe.Msg = trimPrefix(st.Message(), op, name)
	}
	return mapped
}

// Cache pools and directives, shaped like HDFS's CacheAdmin: a pool groups
// directives; a directive pins a path (a file, or the files directly in a
// directory) in datanode memory under the namenode's "pinned" policy.

// CachePool describes a pool. The stats fields are filled by
// ListCachePools.
type CachePool struct {
	Name, Owner, Group string
	Mode               uint32 // 0: the namenode's default (0755)
	Limit              int64  // bytes; 0 = unlimited
	BytesNeeded        int64
	BytesCached        int64
	Files              int64
}

// CacheDirective describes a directive. ID is set by the namenode; the
// stats fields are filled by ListCacheDirectives.
type CacheDirective struct {
	ID          int64
	Path, Pool  string
	Replication int // cached copies per block; 0 = 1
	BytesNeeded int64
	BytesCached int64
	Files       int64
}

// AddCachePool creates a pool (superusers only).
func (f *FileSystem) AddCachePool(ctx context.Context, p CachePool) error {
	_, err := f.nn.AddCachePool(ctx, &dfspb.AddCachePoolRequest{Pool: &dfspb.CachePoolInfo{
		Name: p.Name, Owner: p.Owner, Group: p.Group, Mode: p.Mode, Limit: p.Limit}})
	return cacheErr("addPool", p.Name, err)
}

// RemoveCachePool removes a pool and its directives.
func (f *FileSystem) RemoveCachePool(ctx context.Context, name string) error {
	_, err := f.nn.RemoveCachePool(ctx, &dfspb.RemoveCachePoolRequest{Name: name})
	return cacheErr("removePool", name, err)
}

// ListCachePools lists every pool with its directives' totals.
func (f *FileSystem) ListCachePools(ctx context.Context) ([]CachePool, error) {
	r, err := f.nn.ListCachePools(ctx, &dfspb.ListCachePoolsRequest{})
	if err != nil {
		return nil, cacheErr("listPools", "", err)
	}
	out := make([]CachePool, 0, len(r.GetPools()))
	for _, p := range r.GetPools() {
		out = append(out, CachePool{Name: p.GetName(), Owner: p.GetOwner(), Group: p.GetGroup(), Mode: p.GetMode(),
			Limit: p.GetLimit(), BytesNeeded: p.GetBytesNeeded(), BytesCached: p.GetBytesCached(), Files: p.GetFiles()})
	}
	return out, nil
}

// AddCacheDirective pins d.Path in pool d.Pool and returns the new
// directive's id. A missing path is an error naming it; nothing is added.
func (f *FileSystem) AddCacheDirective(ctx context.Context, d CacheDirective) (int64, error) {
	r, err := f.nn.AddCacheDirective(ctx, &dfspb.AddCacheDirectiveRequest{Directive: &dfspb.CacheDirectiveInfo{
		Path: d.Path, Pool: d.Pool, Replication: int32(d.Replication)}})
	if err != nil {
		return 0, cacheErr("addDirective", d.Path, err)
	}
	return r.GetId(), nil
}

// RemoveCacheDirective removes one directive; its blocks are uncached.
func (f *FileSystem) RemoveCacheDirective(ctx context.Context, id int64) error {
	_, err := f.nn.RemoveCacheDirective(ctx, &dfspb.RemoveCacheDirectiveRequest{Id: id})
	return cacheErr("removeDirective", strconv.FormatInt(id, 10), err)
}

// ListCacheDirectives lists directives, optionally only one pool's or one
// path's ("" = all).
func (f *FileSystem) ListCacheDirectives(ctx context.Context, pool, path string) ([]CacheDirective, error) {
	r, err := f.nn.ListCacheDirectives(ctx, &dfspb.ListCacheDirectivesRequest{Pool: pool, Path: path})
	if err != nil {
		return nil, cacheErr("listDirectives", path, err)
	}
	out := make([]CacheDirective, 0, len(r.GetDirectives()))
	for _, d := range r.GetDirectives() {
		out = append(out, CacheDirective{ID: d.GetId(), Path: d.GetPath(), Pool: d.GetPool(), Replication: int(d.GetReplication()),
			BytesNeeded: d.GetBytesNeeded(), BytesCached: d.GetBytesCached(), Files: d.GetFiles()})
	}
	return out, nil
}

// CacheStats returns the namenode's cache statistics: per datanode, per
// application, hits/misses/evictions and the running jobs' R_j. It is the
// wire message itself, which already has the shape a report needs.
func (f *FileSystem) CacheStats(ctx context.Context) (*dfspb.GetCacheStatsResponse, error) {
	r, err := f.nn.GetCacheStats(ctx, &dfspb.GetCacheStatsRequest{})
	return r, cacheErr("cache stats", "", err)
}
