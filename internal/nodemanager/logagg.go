package nodemanager

import (
	"context"
	"path"
	"path/filepath"
	"time"

	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/applogs"
	"smarth/internal/rpc/mrpb"
)

// Log aggregation (YARN's yarn.log-aggregation-enable): when the resource
// manager says a job is over (AggregateLogs in a heartbeat reply, with the
// job's user and its directory under remote_app_log_dir), this node
// uploads what its attempts of the job logged to the DFS as that user,
// through the same proxy client its tasks used (nm.users): the files are
// the user's, 0600, and the namenode decides who reads them. The local
// copy stays for log_retention, served under /logs/ as before; once the
// node is gone, `smarth job logs` reads the aggregated copy.

// aggregateTimeout bounds one job's upload from this node.
const aggregateTimeout = 2 * time.Minute

// aggregate uploads the logs of the jobs in reqs, one after another (a
// heartbeat's batch; the heartbeat does not wait for it).
func (nm *NodeManager) aggregate(reqs []*mrpb.AggregateLogs) {
	pool, ok := nm.users.(*mapreduce.DFSPool)
	if !ok || nm.dfs == nil {
		nm.log.Debug("no DFS to aggregate task logs to (a test file system)", "jobs", len(reqs))
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-nm.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for _, r := range reqs {
		nm.aggregateJob(ctx, pool, r)
	}
}

func (nm *NodeManager) aggregateJob(ctx context.Context, pool *mapreduce.DFSPool, r *mrpb.AggregateLogs) {
	job, user, dir := r.GetJobId(), r.GetUser(), r.GetDir()
	if !validID(job, "job_") || user == "" || path.Base(dir) != job {
		nm.log.Warn("log aggregation request ignored: bad job, user or directory", "job", job, "user", user, "dir", dir)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, aggregateTimeout)
	defer cancel()
	// dir is root/USER/JOB as the resource manager's remote_app_log_dir
	// makes it.
	root := path.Dir(path.Dir(dir))
	if applogs.Dir(root, user, job) != dir {
		nm.log.Warn("log aggregation request ignored: directory not ROOT/USER/JOB", "job", job, "user", user, "dir", dir)
		return
	}
	var n int
	var err error
	for try := 1; ; try++ {
		if n, err = nm.upload(ctx, pool, root, user, job); err == nil {
			break
		}
		if try == aggregateTries || ctx.Err() != nil {
			nm.log.Error("task logs not aggregated; they stay on this node for log_retention", "job", job, "user", user, "err", err)
			return
		}
		nm.log.Warn("task log aggregation failed; trying again", "job", job, "user", user, "try", try, "err", err)
		t := time.NewTimer(time.Duration(try) * time.Second)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	if n > 0 {
		nm.log.Info("task logs aggregated", "job", job, "user", user, "attempts", n,
			"path", path.Join(dir, applogs.NodeFile(nm.nodeID)))
	}
}

// aggregateTries is how often one job's upload is tried (a namenode
// failing over, a datanode pipeline lost) before its logs stay local.
const aggregateTries = 3

// upload is one try of a job's upload: the root made or checked as the
// node manager, the rest as the job's user.
func (nm *NodeManager) upload(ctx context.Context, pool *mapreduce.DFSPool, root, user, job string) (int, error) {
	if err := applogs.EnsureRoot(ctx, nm.dfs, root); err != nil {
		return 0, err
	}
	fsys, err := pool.Client(user)
	if err != nil {
		return 0, err
	}
	return applogs.Upload(ctx, fsys, root, user, job, applogs.NodeFile(nm.nodeID), filepath.Join(nm.logDir(), job))
}
