package client

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"smarth/internal/ipc"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/rpc/standby"
)

// Observer reads (Config.ObserverReads; HDFS's ObserverReadProxyProvider
// with its AlignmentContext). With several namenodes the client keeps a
// state id: the highest edit any member's reply said it had reached
// (every call then carries the state id, ipc.StateKey, and every reply of
// a namenode that knows them carries its own). A namespace read
// (standby.ObserverReads) goes first to a standby, round robin among
// them, with the state id: the standby serves it once it has applied
// that far, so the client reads its own writes and never goes back in
// time; a standby that is behind refuses, and the read goes to the
// active as any other call. What is not promised: a read from a standby
// sees another client's write only once this client has heard of it
// (any reply of the active raises the state id).
//
// A standby that refused is skipped for a second, one that did not
// answer within observerTimeout or could not be reached for ten: reads
// then go to the active (or the next standby) at once rather than paying
// the same wait again. A member that answers without a state id (a
// namenode from before them) turns observer reads off for the
// FileSystem: without its state the client cannot know what it has
// seen.

// observerTimeout bounds a read's attempt on a standby: the standby
// holds it at most half a second for its log (the namenode's
// observerWait), so anything past that is a standby in trouble, and the
// read goes to the active.
const observerTimeout = 2 * time.Second

// Skips after a failed attempt on a standby.
const (
	observerSkipRefused = time.Second      // it was behind
	observerSkipFailed  = 10 * time.Second // unreachable, or no answer in time
)

// observers is a failoverConn's observer-read state.
type observers struct {
	on    bool
	state atomic.Uint64 // the highest state id seen
	// syncedAt: when the last msync that was answered was sent (monoNow;
	// 0: none yet). state covers what the active had acknowledged then.
	syncedAt atomic.Int64
	syncMu   sync.Mutex // one msync at a time: the reads that wait for it share it
	// autoMsync: Config.ObserverAutoMsync, how stale syncedAt may be.
	autoMsync time.Duration
	off       atomic.Bool   // a member answered without a state id
	next      atomic.Uint32 // round robin among the standbys
	// served and toActive count the observer reads a standby answered
	// and those that went to the active (FileSystem.ObserverReads).
	served, toActive atomic.Int64
	// skipUntil[i]: member i gets no observer read before this time
	// (UnixNano); a read there waits for nothing else.
	skipUntil []atomic.Int64
}

// MsyncEveryRead as Config.ObserverAutoMsync makes every observer read
// msync first (HDFS's auto-msync-period 0).
const MsyncEveryRead time.Duration = -1

// parseAutoMsync reads an auto-msync period in HDFS's terms: a negative
// number never (0 here), 0 every read (MsyncEveryRead), a positive
// number milliseconds, or a duration.
func parseAutoMsync(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		ms, nerr := strconv.ParseInt(v, 10, 64)
		if nerr != nil {
			return 0, err
		}
		d = time.Duration(ms) * time.Millisecond
	}
	switch {
	case d < 0:
		return 0, nil
	case d == 0:
		return MsyncEveryRead, nil
	}
	return d, nil
}

// monoBase makes monoNow monotonic (a wall clock step must not make an
// old msync look fresh).
var monoBase = time.Now()

// monoNow is nanoseconds on the monotonic clock, above 0.
func monoNow() int64 { return int64(time.Since(monoBase)) + 1 }

// synced reports whether an observer read that began at start may rely
// on the last msync (Config.ObserverAutoMsync): any msync at all by
// default; one sent after start with MsyncEveryRead; else one sent at
// most autoMsync before start.
func (o *observers) synced(start int64) bool {
	at := o.syncedAt.Load()
	switch {
	case at == 0:
		return false
	case o.autoMsync == 0:
		return true
	case o.autoMsync < 0:
		return at >= start
	}
	return at >= start-int64(o.autoMsync)
}

// stateCtxKey carries the state id to send with a call (identConn adds
// it to the call's metadata).
type stateCtxKey struct{}

func withState(ctx context.Context, st uint64) context.Context {
	return context.WithValue(ctx, stateCtxKey{}, st)
}

func stateFrom(ctx context.Context) (uint64, bool) {
	st, ok := ctx.Value(stateCtxKey{}).(uint64)
	return st, ok
}

// learn raises the state id to what a reply's trailer says, or turns
// observer reads off when a namenode answered without one.
func (o *observers) learn(tr metadata.MD, err error, c *failoverConn, member int) {
	v := tr.Get(ipc.StateKey)
	if len(v) == 0 {
		if err == nil && o.off.CompareAndSwap(false, true) {
			c.log.Warn("observer reads off: a namenode answered without a state id (older than observer reads?)", "namenode", c.members[member].addr)
		}
		return
	}
	st, perr := strconv.ParseUint(v[0], 10, 64)
	if perr != nil {
		return
	}
	for cur := o.state.Load(); st > cur && !o.state.CompareAndSwap(cur, st); cur = o.state.Load() {
	}
}

// track makes a call carry the state id and capture the reply's.
func (o *observers) track(ctx context.Context, opts []grpc.CallOption) (context.Context, []grpc.CallOption, *metadata.MD) {
	tr := new(metadata.MD)
	return withState(ctx, o.state.Load()), append(opts, grpc.Trailer(tr)), tr
}

// msync asks the active for its state id before the first observer read,
// as HDFS's ObserverReadProxyProvider does (HDFS-14272). A client's state
// covers what it has heard of, and a new one has heard of nothing: a
// process started after another's write had completed (`fs -put` then
// `fs -cat` in a script) could otherwise read from a standby that has not
// applied the write yet. False when it failed: this read goes to the
// active, and the next one asks again. A namenode without Msync (older)
// turns observer reads off, as one without state ids does.
//
// With Config.ObserverAutoMsync a read also asks again when the last
// msync is older than that (HDFS's auto-msync-period), so that a
// long-lived client sees other clients' writes within the period; reads
// waiting for one msync share it when it was sent after they began.
func (c *failoverConn) msync(ctx context.Context, start int64) bool {
	c.obs.syncMu.Lock()
	defer c.obs.syncMu.Unlock()
	if c.obs.synced(start) {
		return true // another read's msync, while this one waited
	}
	return c.msyncCall(ctx) == nil && !c.obs.off.Load()
}

// msyncCall asks the active for its state id (under obs.syncMu).
func (c *failoverConn) msyncCall(ctx context.Context) error {
	sent := monoNow()
	ctx, opts, tr := c.obs.track(ctx, nil)
	err := c.invoke(ctx, dfspb.ClientProtocol_Msync_FullMethodName, &dfspb.MsyncRequest{}, &dfspb.MsyncResponse{}, opts)
	c.obs.learn(*tr, err, c, int(c.cur.Load()))
	if status.Code(err) == codes.Unimplemented {
		if c.obs.off.CompareAndSwap(false, true) {
			c.log.Warn("observer reads off: the active namenode has no msync (older than observer reads?)", "namenode", c.members[c.cur.Load()].addr)
		}
		return nil // every read goes to the active from now on
	}
	if err == nil {
		c.obs.syncedAt.Store(sent)
	}
	return err
}

// observerRead tries a read on a standby. done says whether err is the
// call's outcome (an answer, or the caller's context ended); otherwise
// the read goes to the active.
func (c *failoverConn) observerRead(ctx context.Context, method string, req, reply any, opts []grpc.CallOption) (done bool, err error) {
	o := &c.obs
	j := c.pickObserver()
	if j < 0 {
		o.toActive.Add(1)
		return false, nil
	}
	actx, cancel := context.WithTimeout(ctx, observerTimeout)
	defer cancel()
	actx, aopts, tr := o.track(actx, opts)
	err = c.members[j].ic.Invoke(actx, method, req, reply, aopts...)
	o.learn(*tr, err, c, j)
	_, refused := standby.Is(err)
	switch {
	case err == nil:
		o.served.Add(1)
		return true, nil
	case ctx.Err() != nil:
		return true, err
	case refused:
		o.skipUntil[j].Store(time.Now().Add(observerSkipRefused).UnixNano())
	case notSent(err) || unknownOutcome(err):
		o.skipUntil[j].Store(time.Now().Add(observerSkipFailed).UnixNano())
	default:
		return true, err // the standby's answer: not found, permission denied, ...
	}
	c.log.Debug("observer read goes to the active", "method", method, "standby", c.members[j].addr, "err", err)
	o.toActive.Add(1)
	return false, nil
}

// pickObserver is the next member, round robin, that is not believed
// active and is not being skipped; -1 if none.
func (c *failoverConn) pickObserver() int {
	others := len(c.members) - 1 // every member but the active, in turn
	cur := int(c.cur.Load())
	start := int(c.obs.next.Add(1))
	now := time.Now().UnixNano()
	for k := range others {
		j := (start + k) % others
		if j >= cur {
			j++ // skip over the active
		}
		if c.obs.skipUntil[j].Load() <= now {
			return j
		}
	}
	return -1
}
