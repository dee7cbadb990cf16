package client

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/rpc/callid"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/rpc/standby"
)

// NameNodes splits a namenode setting (Config.NameNode, --namenode,
// $SMARTH_NAMENODE) into its addresses: one "host:port", or the
// namenodes of an HA group as a comma list "a:8020,b:8020,c:8020".
func NameNodes(s string) []string {
	var out []string
	for _, a := range strings.Split(s, ",") {
		out = append(out, strings.TrimSpace(a))
	}
	return out
}

// checkNameNodes refuses a list with an empty, malformed or repeated
// entry, naming it: a typo must not silently drop a namenode of the group.
func checkNameNodes(setting string, addrs []string) error {
	for i, a := range addrs {
		if a == "" {
			return fmt.Errorf("namenode list %q: entry %d is empty", setting, i+1)
		}
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("namenode list %q: %q is not host:port", setting, a)
		}
		if slices.Contains(addrs[:i], a) {
			return fmt.Errorf("namenode list %q: %s is named twice", setting, a)
		}
	}
	return nil
}

// failoverConn is the namenode connection of a client configured with the
// namenodes of an HA group, as HDFS's ConfiguredFailoverProxyProvider with
// its RetryPolicies.failoverOnNetworkException: every call of the
// FileSystem (its own, the lease renewer's, the speed reporter's, the
// writers') goes through it to the namenode it believes active, and moves
// to another one when
//
//   - the namenode refuses the call as a standby (standby.Is): it goes to
//     the active the refusal names, else to the next namenode in the list;
//   - the call provably never reached the namenode (the connection could
//     not be made: refused, unreachable, TLS handshake failed): the next
//     namenode;
//   - the outcome is unknown (the connection broke or the namenode did not
//     answer in time after the call was sent) and the method is idempotent
//     (reads, lease renewal, setters that leave the same state when
//     applied twice; idempotentMethods) or at most once (create, append,
//     delete, rename, concat, xattrs, snapshots, cache pools and
//     directives; atMostOnceMethods): the next
//     namenode. An at-most-once call carries its client's and call's ids
//     (package callid), the same on every attempt, and the namenode's
//     retry cache, which the group rebuilds from its replicated log,
//     answers a repeat with the first attempt's outcome (HDFS's
//     RetryCache with @AtMostOnce);
//   - the namenode has not answered within Config.FailoverProbeAfter and
//     another one says it is the active at a higher term (hung, e.g. a
//     frozen process or host): the call is abandoned there and repeated
//     on the new active (watchHung).
//
// The write path's calls are idempotent as HDFS marks them, each by a
// check in the namenode: a repeated addBlock whose previous block is the
// one before an unwritten last block gets that block again (with targets
// chosen afresh by a new active, which the edit log does not tell); a
// repeated complete of a file closed with the blocks it names succeeds; a
// repeated abandonBlock of a block already gone succeeds; a repeated
// updatePipeline to the stamp the block already has succeeds;
// updateBlockForPipeline and getAdditionalDatanode change nothing that a
// repeat would double. So a write in flight survives a failover: a chaos
// run had 43 puts fail with "connection reset" on the addBlock or
// complete that the active took when it was killed.
//
// Any other answer of a namenode (not found, permission denied, ...) is
// the answer. A round ends when every namenode worth trying was tried
// without success (each at most once: a standby naming an active already
// tried ends it too); the client then waits, from
// Config.FailoverSleepBase doubling to Config.FailoverSleepMax, so that an
// election in progress is waited out rather than hammered, and gives up
// after Config.FailoverAttempts rounds. The wait ends early when a member
// says it is the active at a term above those known when the round began
// (awaitActive: one status watch per connection, shared by its waiting
// calls), so a new active is used within about probeEvery of taking
// over; each early end needs a higher term, so the rounds still bound
// the call. The final error
// names every namenode tried and what each said last.
type failoverConn struct {
	members   []*failoverMember
	cur       atomic.Int32 // index of the namenode believed active
	attempts  int
	sleepBase time.Duration
	sleepMax  time.Duration
	log       *slog.Logger
	ids       *callid.Source // the FileSystem's client id and call counter
	// probeAfter: how long a call waits for an answer before the other
	// namenodes are asked whether one of them is the active now
	// (Config.FailoverProbeAfter; <= 0: never).
	probeAfter time.Duration

	watchMu sync.Mutex
	watch   *activeWatch // the watch for a new active between rounds; nil: no call waits

	obs observers // observer reads (observer.go); obs.on: Config.ObserverReads
}

type failoverMember struct {
	addr string
	ic   *identConn
	term atomic.Uint64 // the highest term it said it had (GetHAStatus)
}

// atMostOnceMethods are ClientProtocol's @AtMostOnce methods that smarth
// has: they are sent with call ids (callid), and the namenode's retry
// cache answers a repeat with the first outcome, so they may be repeated
// on another namenode when the first attempt's outcome is unknown.
var atMostOnceMethods = map[string]bool{
	dfspb.ClientProtocol_Create_FullMethodName:      true,
	dfspb.ClientProtocol_Append_FullMethodName:      true,
	dfspb.ClientProtocol_Delete_FullMethodName:      true,
	dfspb.ClientProtocol_Rename_FullMethodName:      true,
	dfspb.ClientProtocol_Concat_FullMethodName:      true,
	dfspb.ClientProtocol_SetXAttr_FullMethodName:    true,
	dfspb.ClientProtocol_RemoveXAttr_FullMethodName: true,

	dfspb.ClientProtocol_CreateSnapshot_FullMethodName: true,
	dfspb.ClientProtocol_DeleteSnapshot_FullMethodName: true,
	dfspb.ClientProtocol_RenameSnapshot_FullMethodName: true,

	dfspb.ClientProtocol_AddCachePool_FullMethodName:         true,
	dfspb.ClientProtocol_RemoveCachePool_FullMethodName:      true,
	dfspb.ClientProtocol_AddCacheDirective_FullMethodName:    true, // the repeat gets the first id
	dfspb.ClientProtocol_RemoveCacheDirective_FullMethodName: true,
}

// notRepeatedMethods are neither: after an unknown outcome their error is
// returned, and whoever called decides. A test (TestEveryMethodHasAFailoverClass)
// demands that every ClientProtocol method is in exactly one of the three
// sets, so a new method cannot be left out by accident.
var notRepeatedMethods = map[string]bool{
	// The balancer's move: a repeat on a new active would schedule a
	// second copy; a move lost is chosen again in the next iteration.
	dfspb.ClientProtocol_MoveReplica_FullMethodName: true,
	// Cache access reports feed block goodness: one counted twice skews
	// it, one lost costs nothing.
	dfspb.ClientProtocol_CacheAccess_FullMethodName: true,
	// Administrator commands on the group itself: after an unknown
	// outcome the administrator reads `smarth admin ha status` (HDFS's
	// haadmin does not repeat a failover either).
	dfspb.ClientProtocol_TransferHALeader_FullMethodName: true,
	dfspb.ClientProtocol_AddHAMember_FullMethodName:      true,
	dfspb.ClientProtocol_RemoveHAMember_FullMethodName:   true,
}

// repeatable: a repeat of the method after an unknown outcome does what
// one call does.
func repeatable(method string) bool { return idempotentMethods[method] || atMostOnceMethods[method] }

var _ grpc.ClientConnInterface = (*failoverConn)(nil)

// idempotentMethods may be repeated on another namenode when the first
// attempt's outcome is unknown: applying them twice leaves what applying
// them once does (HDFS's @Idempotent on ClientProtocol; updatePipeline,
// which HDFS makes at most once, is idempotent here by the namenode's
// check of the stamp).
var idempotentMethods = func() map[string]bool {
	m := map[string]bool{}
	for _, name := range []string{
		dfspb.ClientProtocol_GetBlockLocations_FullMethodName,
		dfspb.ClientProtocol_GetFileInfo_FullMethodName,
		dfspb.ClientProtocol_GetListing_FullMethodName,
		dfspb.ClientProtocol_GetXAttrs_FullMethodName,
		dfspb.ClientProtocol_ListXAttrs_FullMethodName,
		dfspb.ClientProtocol_GetContentSummary_FullMethodName,
		dfspb.ClientProtocol_GetDatanodeReport_FullMethodName,
		dfspb.ClientProtocol_Fsck_FullMethodName,
		dfspb.ClientProtocol_GetServerDefaults_FullMethodName,
		dfspb.ClientProtocol_GetHAStatus_FullMethodName,
		dfspb.ClientProtocol_Msync_FullMethodName, // HDFS's msync is @Idempotent
		dfspb.ClientProtocol_GetSpeeds_FullMethodName,
		dfspb.ClientProtocol_ListCachePools_FullMethodName,
		dfspb.ClientProtocol_ListCacheDirectives_FullMethodName,
		dfspb.ClientProtocol_GetCacheStats_FullMethodName,
		dfspb.ClientProtocol_JobCacheStatus_FullMethodName,
		dfspb.ClientProtocol_GetAclStatus_FullMethodName,
		dfspb.ClientProtocol_GetSnapshottableDirListing_FullMethodName,
		dfspb.ClientProtocol_GetSnapshotDiffReport_FullMethodName,
		dfspb.ClientProtocol_GetStoragePolicy_FullMethodName,
		dfspb.ClientProtocol_GetStoragePolicies_FullMethodName,
		dfspb.ClientProtocol_RenewLease_FullMethodName,
		dfspb.ClientProtocol_ClientHeartbeat_FullMethodName,
		dfspb.ClientProtocol_Mkdirs_FullMethodName, // an existing directory is success
		dfspb.ClientProtocol_SetReplication_FullMethodName,
		dfspb.ClientProtocol_SetPermission_FullMethodName,
		dfspb.ClientProtocol_SetOwner_FullMethodName,
		dfspb.ClientProtocol_SetTimes_FullMethodName,
		dfspb.ClientProtocol_SetQuota_FullMethodName,
		dfspb.ClientProtocol_SetAcl_FullMethodName,
		dfspb.ClientProtocol_ModifyAclEntries_FullMethodName,
		dfspb.ClientProtocol_RemoveAclEntries_FullMethodName,
		dfspb.ClientProtocol_RemoveDefaultAcl_FullMethodName,
		dfspb.ClientProtocol_RemoveAcl_FullMethodName,
		dfspb.ClientProtocol_SetStoragePolicy_FullMethodName,
		dfspb.ClientProtocol_UnsetStoragePolicy_FullMethodName,
		dfspb.ClientProtocol_ReportBadBlocks_FullMethodName,
		dfspb.ClientProtocol_AddBlock_FullMethodName,       // the unwritten last block again
		dfspb.ClientProtocol_Complete_FullMethodName,       // a file closed with these blocks is success
		dfspb.ClientProtocol_AbandonBlock_FullMethodName,   // a block already gone is success
		dfspb.ClientProtocol_UpdatePipeline_FullMethodName, // the block at this stamp already is success
		dfspb.ClientProtocol_UpdateBlockForPipeline_FullMethodName,
		dfspb.ClientProtocol_GetAdditionalDatanode_FullMethodName,
		dfspb.ClientProtocol_SetSafeMode_FullMethodName,
		dfspb.ClientProtocol_RefreshNodes_FullMethodName,  // HDFS @Idempotent: it rereads the same files
		dfspb.ClientProtocol_SaveNamespace_FullMethodName, // a second image of the same namespace (safe mode holds it still)
		dfspb.ClientProtocol_GetBlocks_FullMethodName,
		dfspb.ClientProtocol_CreateSymlink_FullMethodName,    // always refused: symlinks are off
		dfspb.ClientProtocol_AllowSnapshot_FullMethodName,    // already snapshottable is success
		dfspb.ClientProtocol_DisallowSnapshot_FullMethodName, // already not snapshottable is success
		dfspb.ClientProtocol_Truncate_FullMethodName,         // the truncate in progress again is "not ready"
	} {
		m[name] = true
	}
	return m
}()

// notSent reports whether err proves the call never reached the
// namenode: the connection could not be made. Both transports word a
// failed dial as gRPC does ("Error while dialing").
func notSent(err error) bool {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.Unavailable {
		return false
	}
	msg := st.Message()
	for _, s := range []string{"Error while dialing", "TLS handshake with", "authentication handshake failed", "keeps closing connections"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// unknownOutcome reports whether err leaves open whether the namenode
// applied the call: the connection broke after the call was sent, or no
// answer came in time.
func unknownOutcome(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	}
	return false
}

func (c *failoverConn) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	if !c.obs.on || c.obs.off.Load() {
		return c.invoke(ctx, method, req, reply, opts)
	}
	if start := monoNow(); standby.ObserverReads[method] && (c.obs.synced(start) || c.msync(ctx, start)) {
		if done, err := c.observerRead(ctx, method, req, reply, opts); done {
			return err
		}
	}
	ctx, opts, tr := c.obs.track(ctx, opts)
	err := c.invoke(ctx, method, req, reply, opts)
	c.obs.learn(*tr, err, c, int(c.cur.Load()))
	return err
}

// invoke is a call through the active, failing over as above.
func (c *failoverConn) invoke(ctx context.Context, method string, req, reply any, opts []grpc.CallOption) error {
	if atMostOnceMethods[method] {
		if _, ok := callid.From(ctx); !ok {
			ctx = callid.With(ctx, c.ids.Next()) // one id for every attempt
		}
	}
	said := make([]string, len(c.members)) // what each namenode said last
	tried := make([]bool, len(c.members))  // since the last sleep
	sleep := c.sleepBase
	known := c.knownTerm() // the highest term known when the round began
	var last error
	for rounds := 0; ; {
		i := int(c.cur.Load())
		m := c.members[i]
		moved, err := c.attempt(ctx, i, method, req, reply, opts)
		if err == nil {
			return nil
		}
		last = err
		next := (i + 1) % len(c.members)
		active, isStandby := standby.Is(err)
		switch {
		case moved >= 0:
			next = moved
			err = status.Errorf(codes.DeadlineExceeded, "no answer within %v, and %s is the active at a higher term (%d)",
				c.probeAfter, c.members[moved].addr, c.members[moved].term.Load())
			last = err
		case isStandby:
			if j := c.index(active); j >= 0 && j != i {
				next = j
			}
		case notSent(err):
		case unknownOutcome(err) && ctx.Err() == nil && repeatable(method):
		default:
			return err // the namenode's answer, or an unknown outcome not safe to repeat
		}
		said[i] = status.Convert(err).Message()
		tried[i] = true
		// Move on unless another call already did.
		if c.cur.CompareAndSwap(int32(i), int32(next)) {
			c.log.Info("namenode failover", "method", method, "from", m.addr, "to", c.members[next].addr, "err", said[i])
		}
		if ctx.Err() != nil {
			break
		}
		if tried[int(c.cur.Load())] {
			// Every namenode worth trying was tried: a round is over.
			// Wait for an election or a restart before the next one.
			if rounds++; rounds >= c.attempts {
				break
			}
			// A member that becomes the active meanwhile ends the wait
			// (awaitActive), and the call goes straight there.
			if j := c.awaitActive(ctx, sleep, known); j >= 0 {
				if from := c.cur.Swap(int32(j)); int(from) != j {
					c.log.Info("namenode failover", "method", method, "from", c.members[from].addr, "to", c.members[j].addr,
						"err", "the active at term "+strconv.FormatUint(c.members[j].term.Load(), 10))
				}
			}
			if ctx.Err() != nil {
				break
			}
			sleep = min(2*sleep, c.sleepMax)
			known = c.knownTerm()
			clear(tried)
		}
	}
	return c.finalError(method, said, last)
}

// finalError names every namenode and what it said; the code is the last
// error's (Unavailable when all were standbys or unreachable), so callers
// sort it as they would a single namenode's.
func (c *failoverConn) finalError(method string, said []string, last error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "no namenode could serve %s (tried ", method[strings.LastIndex(method, "/")+1:])
	for i, m := range c.members {
		if i > 0 {
			b.WriteString("; ")
		}
		s := said[i]
		if s == "" {
			s = "not tried"
		}
		fmt.Fprintf(&b, "%s: %s", m.addr, s)
	}
	b.WriteString(")")
	return status.Error(status.Code(last), b.String())
}

// attempt is one try of the call on member i. A repeatable call that has
// no answer after probeAfter is watched (watchHung): if another member
// turns out to be the active at a higher term, the attempt is abandoned
// and moved is that member; else (-1) the call waits for its answer, as
// long as it takes (a slow but healthy active is not abandoned: a big
// listing still completes).
func (c *failoverConn) attempt(ctx context.Context, i int, method string, req, reply any, opts []grpc.CallOption) (moved int, err error) {
	ic := c.members[i].ic
	if c.probeAfter <= 0 || !repeatable(method) {
		return -1, ic.Invoke(ctx, method, req, reply, opts...)
	}
	actx, abandon := context.WithCancel(ctx)
	defer abandon()
	var to atomic.Int32
	to.Store(-1)
	watch := time.AfterFunc(c.probeAfter, func() {
		if j := c.watchHung(actx, i); j >= 0 {
			to.Store(int32(j))
			abandon()
		}
	})
	err = ic.Invoke(actx, method, req, reply, opts...)
	watch.Stop()
	abandon() // ends a watch still running
	if err != nil && ctx.Err() == nil {
		if j := int(to.Load()); j >= 0 {
			return j, err
		}
	}
	return -1, err
}

// probeEvery is how often a hung call's watch asks the group again while
// no other member is the active (an election in progress). Only the
// other members are asked again, each answer deciding as it comes, so a
// new active is found within about this long of taking over. (Every
// round used to wait for the hung member's deadline too, 250 ms with the
// default FailoverProbeAfter: a new active was found up to 350 ms late,
// the bulk of the gap between "another member ACTIVE" and "first write
// acknowledged" after a SIGSTOP in docs/reliability.md.)
const probeEvery = 100 * time.Millisecond

// watchHung asks every member for its HA status (HDFS's
// getServiceStatus) in parallel with a short deadline, until another
// member says it is the active at a term higher than member i has said
// it had (its index is returned), or ctx ends (the call got its answer:
// -1). Member i is asked in the first round only, with a shorter
// deadline, and that round decides nothing before its answer or its
// deadline: a slow but live active answers at its own term, which a
// deposed active still claiming the role cannot beat; a hung one does
// not answer. The later rounds, every probeEvery, ask the others only,
// and the first answer that names a new active ends the watch.
func (c *failoverConn) watchHung(ctx context.Context, i int) int {
	type answer struct {
		j  int
		st *dfspb.GetHAStatusResponse
	}
	others := max(min(c.probeAfter, 500*time.Millisecond), 100*time.Millisecond)
	for first := true; ; first = false {
		answers := make(chan answer, len(c.members))
		asked := 0
		for j, m := range c.members {
			deadline := others
			if j == i {
				if !first {
					continue
				}
				deadline = others / 2
			}
			asked++
			go func() {
				pctx, cancel := context.WithTimeout(ctx, deadline)
				defer cancel()
				st := &dfspb.GetHAStatusResponse{}
				if err := m.ic.Invoke(pctx, dfspb.ClientProtocol_GetHAStatus_FullMethodName, &dfspb.GetHAStatusRequest{}, st); err != nil {
					st = nil
				} else {
					m.noteTerm(st.GetTerm())
				}
				answers <- answer{j, st}
			}()
		}
		var active *answer
		heardI := !first // i's answer (or its deadline) is in
		for range asked {
			select {
			case <-ctx.Done():
				return -1
			case a := <-answers:
				if a.j == i {
					heardI = true
				} else if a.st.GetState() == dfspb.HAState_ACTIVE && (active == nil || a.st.GetTerm() > active.st.GetTerm()) {
					active = &a
				}
			}
			if heardI && active != nil && active.st.GetTerm() > c.members[i].term.Load() {
				c.log.Info("namenode not answering; another is the active at a higher term", "hung", c.members[i].addr,
					"after", c.probeAfter, "active", c.members[active.j].addr, "term", active.st.GetTerm())
				return active.j
			}
		}
		select {
		case <-ctx.Done():
			return -1
		case <-time.After(probeEvery):
		}
	}
}

func (c *failoverConn) index(addr string) int {
	for i, m := range c.members {
		if m.addr == addr {
			return i
		}
	}
	return -1
}

// NewStream goes to the namenode believed active; ClientProtocol has no
// streaming methods.
func (c *failoverConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.members[c.cur.Load()].ic.NewStream(ctx, desc, method, opts...)
}
