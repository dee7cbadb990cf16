package namenode

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/retrycache"
	"smarth/internal/rpc/callid"
	"smarth/internal/rpc/dfspb"
)

// The retry cache (retry_cache_* keys; package retrycache). Which calls
// are at most once follows HDFS's ClientProtocol @AtMostOnce, as far as
// smarth has them: create, append, delete, rename (rename2 and the move
// to trash included), concat, setXAttr and removeXAttr, createSnapshot,
// deleteSnapshot and renameSnapshot, and the cache pool and directive
// changes; each handler runs through atMostOnce. Their repeat with the
// same ids is answered from the cache (a repeated addCacheDirective gets
// the first id, not a second directive). What HDFS marks @Idempotent
// (mkdirs, the setters, addBlock, complete, truncate, allowSnapshot) is
// not cached: the client repeats those anyway.
//
// The ids reach the other members with the edit: a call's record is
// logged wrapped in an fsstate.Call holding the ids and the user, and
// replaying it (haFSM.Apply, and a single namenode's edit log at start)
// adds the outcome to the replaying member's cache. So a call whose
// reply was lost with the active that applied it is answered by the new
// active from its cache, not applied again. What a member restored from
// a snapshot (an image) has not replayed is not in its cache, as with
// HDFS after a checkpoint.

type retryCallKey struct{}

// initRetryCache makes the cache unless retry_cache_enable is off, and
// its metrics.
func (nn *NameNode) initRetryCache() {
	hits := prometheus.NewCounter(prometheus.CounterOpts{Namespace: "smarth_namenode", Name: "retry_cache_hits_total",
		Help: "At-most-once calls answered from the retry cache (a repeat of a call already applied)."})
	nn.retryHits = hits
	nn.metrics.reg.MustRegister(hits)
	if !nn.cfg.RetryCacheEnable {
		return
	}
	nn.retry = retrycache.New(retrycache.Config{Expiry: nn.cfg.RetryCacheExpiry, MaxEntries: nn.cfg.RetryCacheMaxEntries, Now: nn.clock})
	nn.metrics.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "smarth_namenode", Name: "retry_cache_entries",
		Help: "Outcomes of at-most-once calls held in the retry cache."}, func() float64 { return float64(nn.retry.Len()) }))
}

// atMostOnce runs fn, an at-most-once call, through the retry cache: a
// repeat of a call that succeeded gets the first reply; otherwise fn
// runs with the call's ids in ctx (loggedCall), and its success is
// remembered. A call without ids (an older client, WebHDFS) just runs.
func atMostOnce[T any](ctx context.Context, nn *NameNode, method string, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	id, ok, err := callid.FromIncoming(ctx)
	if err != nil {
		return zero, errInvalid("%s: %v", method, err)
	}
	if !ok || nn.retry == nil {
		return fn(ctx)
	}
	user := callerOf(ctx).User
	call, out, hit, err := nn.retry.Begin(ctx, id, user)
	if err != nil {
		return zero, errUnavailable("%s: gave up waiting for the first attempt of call %v: %v", method, id, err)
	}
	if hit {
		reply, ok := out.(T)
		if !ok {
			// The same ids on another method: a client bug, not a retry.
			return zero, errInvalid("%s: call %v was already used for another call (%T)", method, id, out)
		}
		nn.retryHits.Inc()
		nn.logger.Debug("retry cache hit", "method", method, "call", id.String(), "user", user)
		return reply, nil
	}
	reply, err := fn(context.WithValue(ctx, retryCallKey{}, &fsstate.Call{ID: id, User: user}))
	call.End(err == nil, shared(reply))
	return reply, err
}

// shared gives the shared equal of a reply that carries nothing of its
// call's own (replayedDelete and the rest), so that the cache does not
// keep one object per delete or rename alive for the collector to trace.
func shared(reply any) any {
	switch r := reply.(type) {
	case *dfspb.DeleteResponse:
		if r.GetDeleted() {
			return replayedDelete
		}
	case *dfspb.RenameResponse:
		return replayedRename
	case *dfspb.ConcatResponse:
		return replayedConcat
	case *dfspb.SetXAttrResponse:
		return replayedSetXAttr
	case *dfspb.RemoveXAttrResponse:
		return replayedRemoveXAttr
	case *dfspb.DeleteSnapshotResponse:
		return replayedDeleteSnapshot
	case *dfspb.RenameSnapshotResponse:
		return replayedRenameSnapshot
	case *dfspb.AddCachePoolResponse:
		return replayedAddCachePool
	case *dfspb.RemoveCachePoolResponse:
		return replayedRemoveCachePool
	case *dfspb.RemoveCacheDirectiveResponse:
		return replayedRemoveCacheDirective
	}
	return reply
}

// loggedCall is the ids the record of ctx's call is logged with (nil:
// none, the record is logged bare).
func loggedCall(ctx context.Context) *fsstate.Call {
	c, _ := ctx.Value(retryCallKey{}).(*fsstate.Call)
	return c
}

// retryLoader rebuilds the retry cache while a single namenode replays
// its edit log at start: a client that repeats a call across the restart
// gets the first outcome.
type retryLoader struct {
	*fsstate.State
	nn *NameNode
}

func (l retryLoader) ApplyEdit(txid uint64, payload []byte) error {
	res, err := l.State.ReplayEdit(txid, payload)
	if err == nil {
		l.nn.rememberReplayedLocked(res)
	}
	return err
}

// The replies that carry nothing of the call's own: one each, shared by
// every entry (gRPC only reads a reply it sends), so that a standby
// allocates nothing per delete or rename it replays.
var (
	replayedDelete      = &dfspb.DeleteResponse{Deleted: true}
	replayedRename      = &dfspb.RenameResponse{}
	replayedConcat      = &dfspb.ConcatResponse{}
	replayedSetXAttr    = &dfspb.SetXAttrResponse{}
	replayedRemoveXAttr = &dfspb.RemoveXAttrResponse{}

	replayedDeleteSnapshot       = &dfspb.DeleteSnapshotResponse{}
	replayedRenameSnapshot       = &dfspb.RenameSnapshotResponse{}
	replayedAddCachePool         = &dfspb.AddCachePoolResponse{}
	replayedRemoveCachePool      = &dfspb.RemoveCachePoolResponse{}
	replayedRemoveCacheDirective = &dfspb.RemoveCacheDirectiveResponse{}
)

// rememberReplayedLocked adds a replayed call's outcome to the cache:
// the reply the active gave, rebuilt from the state the record left.
// Callers hold nn.mu (or own the namenode, at load).
func (nn *NameNode) rememberReplayedLocked(res fsstate.Applied) {
	if res.Call == nil || nn.retry == nil {
		return
	}
	var reply any
	switch op := res.Call.Op.(type) {
	case *fsstate.Create:
		reply = &dfspb.CreateResponse{Status: fileStatus(res.File)}
	case *fsstate.Append:
		reply = nn.appendResponseLocked(res.File, op.Host)
	case *fsstate.Delete:
		reply = replayedDelete
	case *fsstate.Rename, *fsstate.Rename2:
		reply = replayedRename
	case *fsstate.Concat:
		reply = replayedConcat
	case *fsstate.SetXAttr:
		reply = replayedSetXAttr
	case *fsstate.RemoveXAttr:
		reply = replayedRemoveXAttr
	case *fsstate.CreateSnapshot:
		reply = &dfspb.CreateSnapshotResponse{SnapshotPath: res.Path}
	case *fsstate.DeleteSnapshot:
		reply = replayedDeleteSnapshot
	case *fsstate.RenameSnapshot:
		reply = replayedRenameSnapshot
	case *fsstate.AddCachePool:
		reply = replayedAddCachePool
	case *fsstate.RemoveCachePool:
		reply = replayedRemoveCachePool
	case *fsstate.AddCacheDirective:
		reply = &dfspb.AddCacheDirectiveResponse{Id: op.DirectiveID}
	case *fsstate.RemoveCacheDirective:
		reply = replayedRemoveCacheDirective
	default:
		nn.logger.Warn("edit carries call ids of an operation the retry cache does not hold", "op", fmt.Sprint(op.Kind()), "call", res.Call.ID.String())
		return
	}
	nn.retry.Add(res.Call.ID, res.Call.User, reply)
}
