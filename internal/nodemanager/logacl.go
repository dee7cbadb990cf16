package nodemanager

import (
	"context"
	"net/http"
	"time"

	"smarth/internal/rpc/mrpb"
	"smarth/internal/webui"
)

// Who may read what on the node manager's console (issue 23, hole 5):
// a job's task logs, and the listing of its attempts, go to its owner
// and the resource manager's admins only, as YARN's application view
// ACL. The node manager holds no identity secret, so it does not judge
// a caller itself: it hands the request's proof (webui.CallerContext's
// bearer or basic credential, or simple mode's user.name) to the
// resource manager, whose GetJob and ListJobs answer only to whoever may
// view the job (from its job history after a restart, history_dir). A
// job the resource manager has forgotten (past history_retention, or
// beyond retain_jobs without a history) has no one left to vouch for its
// owner, so its logs are refused rather than served to anyone.

// aclTimeout bounds the resource manager's answer to a log request.
const aclTimeout = 10 * time.Second

// mayViewJob asks the resource manager whether r's caller may view job.
func (nm *NodeManager) mayViewJob(r *http.Request, job string) error {
	ctx, cancel := context.WithTimeout(r.Context(), aclTimeout)
	defer cancel()
	_, err := nm.rm.GetJob(webui.OutgoingCaller(ctx, r), &mrpb.GetJobRequest{JobId: job})
	return err
}

// viewableJobs is the set of jobs r's caller may view, as the resource
// manager lists them (an admin's: every job it remembers).
func (nm *NodeManager) viewableJobs(r *http.Request) (map[string]bool, error) {
	ctx, cancel := context.WithTimeout(r.Context(), aclTimeout)
	defer cancel()
	l, err := nm.rm.ListJobs(webui.OutgoingCaller(ctx, r), &mrpb.ListJobsRequest{})
	if err != nil {
		return nil, err
	}
	ok := make(map[string]bool, len(l.GetJobs()))
	for _, j := range l.GetJobs() {
		ok[j.GetJobId()] = true
	}
	return ok, nil
}
