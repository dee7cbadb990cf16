package client

import (
	"context"
	"time"

	"smarth/internal/rpc/dfspb"
)

// CacheAccess is one map task's read of its input block, reported so the
// namenode's cache manager can record it and cache the block (seed 003,
// section IV: on the reader's node for a local read, on the datanode that
// served it for a remote one).
type CacheAccess struct {
	BlockID    uint64
	App        string
	JobID      string
	ReaderHost string        // canonical hostname of the node the task ran on
	DatanodeID string        // datanode that served the read; "" if unknown
	Affinity   float64       // the app's cache affinity in [0,1]; < 0: the namenode's configured value
	ReadBytes  int64         // bytes the task read of its input; 0: not measured
	ReadTime   time.Duration // time spent inside those reads
	TaskTime   time.Duration // how long the task had run when it reported; 0: not measured
}

// ReportCacheAccess sends an access to the namenode and says whether the
// block is (or is being) cached afterwards, and on which datanode.
func (f *FileSystem) ReportCacheAccess(ctx context.Context, a CacheAccess) (cached bool, datanodeID string, err error) {
	r, err := f.nn.CacheAccess(ctx, &dfspb.CacheAccessRequest{
		BlockId: a.BlockID, App: a.App, JobId: a.JobID, ReaderHost: a.ReaderHost,
		DatanodeId: a.DatanodeID, Affinity: a.Affinity, ReadBytes: a.ReadBytes, ReadNanos: int64(a.ReadTime),
		TaskNanos: int64(a.TaskTime),
	})
	if err != nil {
		return false, "", mapError("cache access", "", err)
	}
	return r.GetCached(), r.GetCachedOn(), nil
}

// JobInput is a running job's input as the resource manager tells the
// namenode about it; Finished makes the namenode forget the job.
type JobInput struct {
	JobID    string
	App      string
	BlockIDs []uint64
	Finished bool
}

// JobCache is what the namenode knows of one job's input in memory: R_j
// (the cached fraction of its input blocks) and the hosts caching each
// cached block.
type JobCache struct {
	CachedFraction float64
	CachedHosts    map[uint64][]string // block id -> canonical hostnames
}

// JobCacheStatus registers or refreshes the given jobs' inputs with the
// namenode and returns their cache state, keyed by job id.
func (f *FileSystem) JobCacheStatus(ctx context.Context, jobs []JobInput) (map[string]JobCache, error) {
	req := &dfspb.JobCacheStatusRequest{}
	for _, j := range jobs {
		req.Jobs = append(req.Jobs, &dfspb.JobCacheStatusRequest_Job{JobId: j.JobID, App: j.App, BlockIds: j.BlockIDs, Finished: j.Finished})
	}
	r, err := f.nn.JobCacheStatus(ctx, req)
	if err != nil {
		return nil, mapError("job cache status", "", err)
	}
	out := make(map[string]JobCache, len(r.GetJobs()))
	for _, j := range r.GetJobs() {
		jc := JobCache{CachedFraction: j.GetCachedFraction(), CachedHosts: map[uint64][]string{}}
		for _, b := range j.GetBlocks() {
			jc.CachedHosts[b.GetBlockId()] = b.GetHosts()
		}
		out[j.GetJobId()] = jc
	}
	return out, nil
}
