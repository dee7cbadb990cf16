// Package jobclient is the job client: it plans a job in the user's
// process (app lookup, parameter validation, output and input checks,
// Prepare, splits from block locations), submits it to the resource
// manager and follows it to the end. Client implements mapreduce.Runner,
// so multi-job Driver apps run on the cluster exactly as they run on the
// local runner.
package jobclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os/user"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
	"smarth/internal/mapreduce"
	"smarth/internal/pki"
	"smarth/internal/rpc/mrpb"
)

// Config configures a Client.
type Config struct {
	ResourceManager string // host:port
	FS              mapreduce.FS
	Registry        *mapreduce.Registry
	User            string // default: the credential's user, else the OS user
	// Credential proves User to a resource manager that checks
	// credentials (auth: secure); default: read from TokenFile, else
	// $SMARTH_TOKEN_FILE, else ~/.smarth/token when present.
	Credential string
	TokenFile  string
	// TLS, when set, verifies the resource manager against the
	// cluster's CA (pki.ClientConfig); nil: plaintext.
	TLS          *tls.Config
	PollInterval time.Duration // default 100ms
	// Progress, if set, is called with each status polled while a job runs.
	Progress func(*mrpb.JobStatus)
	// RPCTimeout bounds each call to the resource manager (default 30s).
	RPCTimeout time.Duration
}

// Client submits jobs to a resource manager.
type Client struct {
	cfg  Config
	conn *grpc.ClientConn
	rm   mrpb.ResourceManagerClient
}

var _ mapreduce.Runner = (*Client)(nil)

// New connects lazily to the resource manager.
func New(cfg Config) (*Client, error) {
	if cfg.ResourceManager == "" {
		return nil, errors.New("no resource manager address")
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 100 * time.Millisecond
	}
	if cfg.RPCTimeout <= 0 {
		cfg.RPCTimeout = 30 * time.Second
	}
	if cfg.Credential == "" {
		cred, err := auth.LoadCredential(cfg.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("jobclient: %w", err)
		}
		cfg.Credential = cred
	}
	if cfg.User == "" && cfg.Credential != "" {
		cfg.User = auth.CredentialUser(cfg.Credential)
	}
	if cfg.User == "" {
		if u, err := user.Current(); err == nil {
			cfg.User = u.Username
		}
	}
	conn, err := grpc.NewClient(cfg.ResourceManager, pki.DialOption(cfg.TLS))
	if err != nil {
		return nil, fmt.Errorf("resource manager %s: %w", cfg.ResourceManager, err)
	}
	return &Client{cfg: cfg, conn: conn, rm: mrpb.NewResourceManagerClient(conn)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// FS is the file system jobs run against.
func (c *Client) FS() mapreduce.FS { return c.cfg.FS }

func (c *Client) rpcCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RPCTimeout)
	return auth.Caller{User: c.cfg.User, Credential: c.cfg.Credential}.Outgoing(ctx), cancel
}

// rpcErr turns a gRPC error into its message, naming the resource
// manager when it cannot be reached.
func (c *Client) rpcErr(err error) error {
	if err == nil {
		return nil
	}
	st := status.Convert(err)
	if st.Code() == codes.Unavailable {
		if transportFailure(st.Message()) {
			return fmt.Errorf("resource manager %s is not reachable: %s", c.cfg.ResourceManager, st.Message())
		}
		// The resource manager answered: something behind it (the
		// namenode down or in safe mode) is unavailable. Calling the
		// resource manager unreachable would send the operator to the
		// wrong daemon.
		return fmt.Errorf("resource manager %s: %s", c.cfg.ResourceManager, st.Message())
	}
	return errors.New(st.Message())
}

// transportFailure reports whether an Unavailable status was made by the
// gRPC client itself (no connection to the server) rather than sent by
// the server: grpc-go words its own with these prefixes.
func transportFailure(msg string) bool {
	for _, p := range []string{"connection error", "last connection error", "name resolver error", "last resolver error",
		"connection closed", "error reading from server", "transport is closing", "produced zero addresses"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// Run runs an app to completion: a Driver app drives its jobs through
// this client; any other app is one job.
func (c *Client) Run(ctx context.Context, app string, params map[string]string) (*mapreduce.Result, error) {
	a, err := c.cfg.Registry.Lookup(app)
	if err != nil {
		return nil, err
	}
	if d, ok := a.(mapreduce.Driver); ok {
		start := time.Now()
		err := d.Drive(ctx, c, params)
		res := &mapreduce.Result{JobID: "driver_" + app, State: mapreduce.StateSucceeded, Elapsed: time.Since(start)}
		if err != nil {
			res.State, res.Error = mapreduce.StateFailed, err.Error()
		}
		return res, err
	}
	id, err := c.Submit(ctx, app, params)
	if err != nil {
		return nil, err
	}
	return c.Wait(ctx, id)
}

// Submit plans a job here and hands it to the resource manager.
func (c *Client) Submit(ctx context.Context, app string, params map[string]string) (string, error) {
	plan, err := mapreduce.PlanJob(ctx, c.cfg.FS, c.cfg.Registry, app, params)
	if err != nil {
		return "", err
	}
	j := plan.Job
	req := &mrpb.SubmitJobRequest{Name: j.Name, App: j.App, Params: j.Params, Output: j.Output,
		NumReduces: int32(j.NumReduces), User: c.cfg.User}
	for _, s := range plan.Splits {
		req.Splits = append(req.Splits, &mrpb.Split{Index: int32(s.Index), Path: s.Path, Offset: s.Offset,
			Length: s.Length, Hosts: s.Hosts, Racks: s.Racks, Meta: s.Meta, BlockId: s.BlockID, CachedHosts: s.CachedHosts})
	}
	rctx, cancel := c.rpcCtx(ctx)
	defer cancel()
	resp, err := c.rm.SubmitJob(rctx, req)
	if err != nil {
		return "", c.rpcErr(err)
	}
	return resp.GetJobId(), nil
}

// Wait follows a job until it ends. If ctx ends first the job is killed.
func (c *Client) Wait(ctx context.Context, id string) (*mapreduce.Result, error) {
	t := time.NewTicker(c.cfg.PollInterval)
	defer t.Stop()
	for {
		st, err := c.Status(ctx, id)
		if err != nil && ctx.Err() == nil {
			return nil, err
		}
		if st != nil {
			if c.cfg.Progress != nil {
				c.cfg.Progress(st)
			}
			switch st.GetState() {
			case mapreduce.StateSucceeded:
				return Result(st), nil
			case mapreduce.StateFailed, mapreduce.StateKilled:
				return Result(st), fmt.Errorf("job %s %s: %s", id, st.GetState(), st.GetError())
			}
		}
		select {
		case <-ctx.Done():
			kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			c.Kill(kctx, id)
			cancel()
			return nil, fmt.Errorf("job %s killed: %w", id, ctx.Err())
		case <-t.C:
		}
	}
}

// Result converts a status to a Result.
func Result(st *mrpb.JobStatus) *mapreduce.Result {
	r := &mapreduce.Result{JobID: st.GetJobId(), State: st.GetState(), Error: st.GetError(),
		Counters: map[string]map[string]int64{}}
	if st.GetFinishTimeMs() > 0 {
		r.Elapsed = time.Duration(st.GetFinishTimeMs()-st.GetSubmitTimeMs()) * time.Millisecond
	}
	for _, cn := range st.GetCounters() {
		if r.Counters[cn.GetGroup()] == nil {
			r.Counters[cn.GetGroup()] = map[string]int64{}
		}
		r.Counters[cn.GetGroup()][cn.GetName()] = cn.GetValue()
	}
	return r
}

// Status reports one job.
func (c *Client) Status(ctx context.Context, id string) (*mrpb.JobStatus, error) {
	rctx, cancel := c.rpcCtx(ctx)
	defer cancel()
	st, err := c.rm.GetJob(rctx, &mrpb.GetJobRequest{JobId: id})
	return st, c.rpcErr(err)
}

// List reports the jobs the resource manager remembers, newest first;
// with states, only jobs in one of them.
func (c *Client) List(ctx context.Context, states ...string) ([]*mrpb.JobStatus, error) {
	rctx, cancel := c.rpcCtx(ctx)
	defer cancel()
	resp, err := c.rm.ListJobs(rctx, &mrpb.ListJobsRequest{States: states})
	if err != nil {
		return nil, c.rpcErr(err)
	}
	return resp.GetJobs(), nil
}

// Nodes reports the node managers (YARN's getClusterNodes): the running
// ones, and with all the lost ones the resource manager remembers.
func (c *Client) Nodes(ctx context.Context, all bool) ([]*mrpb.NodeReport, error) {
	rctx, cancel := c.rpcCtx(ctx)
	defer cancel()
	resp, err := c.rm.ListNodes(rctx, &mrpb.ListNodesRequest{All: all})
	if err != nil {
		return nil, c.rpcErr(err)
	}
	return resp.GetNodes(), nil
}

// RefreshNodes has the resource manager re-read its hosts_exclude_file
// (`yarn rmadmin -refreshNodes`); admins only.
func (c *Client) RefreshNodes(ctx context.Context) (*mrpb.RefreshNodesResponse, error) {
	rctx, cancel := c.rpcCtx(ctx)
	defer cancel()
	resp, err := c.rm.RefreshNodes(rctx, &mrpb.RefreshNodesRequest{})
	if err != nil {
		return nil, c.rpcErr(err)
	}
	return resp, nil
}

// Kill stops a job.
func (c *Client) Kill(ctx context.Context, id string) error {
	rctx, cancel := c.rpcCtx(ctx)
	defer cancel()
	_, err := c.rm.KillJob(rctx, &mrpb.KillJobRequest{JobId: id})
	return c.rpcErr(err)
}
