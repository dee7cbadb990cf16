package replog

import (
	"io"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// Per-follower replication state, as the leader sees it. raft keeps each
// follower's match index to itself (no API, no metric by follower), so
// the leader's transport watches the replies: an AppendEntries that
// succeeded proves the follower holds every entry up to the request's
// last, an InstallSnapshot every entry up to the snapshot's, and any
// reply at all that the follower was there. It is what `smarth admin ha`
// needs to refuse a membership change that would leave no majority, and
// what the metrics call a follower's lag (HDFS's CurrentLagTxns of a
// JournalNode).

// Follower is one other voter as this node, the leader, sees it.
type Follower struct {
	ID, Addr string
	// Match is the last raft index the follower is known to hold (0:
	// not known yet in this process).
	Match uint64
	// Lag is the leader's last index minus Match: entries the follower
	// still has to receive.
	Lag uint64
	// LastContact is how long ago the follower last answered the leader
	// (any RPC, heartbeats included); Contacted is false if it never has
	// since this node started or since it was added.
	LastContact time.Duration
	Contacted   bool
}

type followerState struct {
	match   uint64
	contact time.Time
	// appends counts the AppendEntries the follower answered that were
	// not heartbeats (entries, or the commit index an idle leader sends
	// every commitTimeout).
	appends uint64
}

// followerTracker records replies per follower id.
type followerTracker struct {
	mu sync.Mutex
	by map[raft.ServerID]*followerState
}

func (f *followerTracker) get(id raft.ServerID) *followerState {
	if f.by == nil {
		f.by = map[raft.ServerID]*followerState{}
	}
	s := f.by[id]
	if s == nil {
		s = &followerState{}
		f.by[id] = s
	}
	return s
}

// appended records an AppendEntries reply. A heartbeat (no entries, no
// previous entry) proves contact only.
func (f *followerTracker) appended(id raft.ServerID, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.get(id)
	s.contact = time.Now()
	if len(args.Entries) > 0 || args.PrevLogEntry > 0 || args.LeaderCommitIndex > 0 {
		s.appends++ // a heartbeat carries none of the three (raft's heartbeat)
	}
	if resp.Success && (len(args.Entries) > 0 || args.PrevLogEntry > 0) {
		s.match = args.PrevLogEntry + uint64(len(args.Entries))
	}
}

func (f *followerTracker) installed(id raft.ServerID, args *raft.InstallSnapshotRequest, resp *raft.InstallSnapshotResponse) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.get(id)
	s.contact = time.Now()
	if resp.Success {
		s.match = args.LastLogIndex
	}
}

func (f *followerTracker) contacted(id raft.ServerID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.get(id).contact = time.Now()
}

// forget drops what is known of id: a member added again starts empty,
// and must not inherit the match index of its former self.
func (f *followerTracker) forget(id raft.ServerID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.by, id)
}

func (f *followerTracker) snapshot(id raft.ServerID) (followerState, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.by[id]
	if !ok {
		return followerState{}, false
	}
	return *s, true
}

// trackingTransport is the network transport with the leader's side of
// each reply recorded. Embedding keeps every other method (Close,
// RequestPreVote, SetHeartbeatHandler...) the network transport's, so
// raft finds the same optional interfaces it would on the transport
// itself.
type trackingTransport struct {
	*raft.NetworkTransport
	f                *followerTracker
	beforeTimeoutNow func(target string) error // Config.beforeTimeoutNow
}

func (t *trackingTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	err := t.NetworkTransport.AppendEntries(id, target, args, resp)
	if err == nil {
		t.f.appended(id, args, resp)
	}
	return err
}

func (t *trackingTransport) InstallSnapshot(id raft.ServerID, target raft.ServerAddress, args *raft.InstallSnapshotRequest, resp *raft.InstallSnapshotResponse, data io.Reader) error {
	err := t.NetworkTransport.InstallSnapshot(id, target, args, resp, data)
	if err == nil {
		t.f.installed(id, args, resp)
	}
	return err
}

func (t *trackingTransport) TimeoutNow(id raft.ServerID, target raft.ServerAddress, args *raft.TimeoutNowRequest, resp *raft.TimeoutNowResponse) error {
	if t.beforeTimeoutNow != nil {
		if err := t.beforeTimeoutNow(string(id)); err != nil {
			return err
		}
	}
	err := t.NetworkTransport.TimeoutNow(id, target, args, resp)
	if err == nil {
		t.f.contacted(id)
	}
	return err
}

func (t *trackingTransport) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	p, err := t.NetworkTransport.AppendEntriesPipeline(id, target)
	if err != nil {
		return nil, err
	}
	tp := &trackingPipeline{AppendPipeline: p, id: id, f: t.f, out: make(chan raft.AppendFuture, 128), stop: make(chan struct{})}
	go tp.relay()
	return tp, nil
}

// trackingPipeline relays the pipeline's completed requests to raft in
// the order they complete, recording each reply on the way.
type trackingPipeline struct {
	raft.AppendPipeline
	id   raft.ServerID
	f    *followerTracker
	out  chan raft.AppendFuture
	stop chan struct{}
	once sync.Once
}

func (p *trackingPipeline) relay() {
	in := p.AppendPipeline.Consumer()
	for {
		select {
		case <-p.stop:
			return
		case fut := <-in:
			if fut.Error() == nil {
				p.f.appended(p.id, fut.Request(), fut.Response())
			}
			select {
			case p.out <- fut:
			case <-p.stop:
				return
			}
		}
	}
}

func (p *trackingPipeline) Consumer() <-chan raft.AppendFuture { return p.out }

func (p *trackingPipeline) Close() error {
	p.once.Do(func() { close(p.stop) })
	return p.AppendPipeline.Close()
}

// Followers is every other voter of the group with what this node knows
// of its replication; nil unless this node is the leader (only a leader
// replicates, so only its view means anything).
func (l *Log) Followers() []Follower {
	if l.raft.State() != raft.Leader {
		return nil
	}
	f := l.raft.GetConfiguration()
	if f.Error() != nil {
		return nil
	}
	last := l.raft.LastIndex()
	now := time.Now()
	var out []Follower
	for _, s := range f.Configuration().Servers {
		if string(s.ID) == l.cfg.ID {
			continue
		}
		fl := Follower{ID: string(s.ID), Addr: string(s.Address), Lag: last}
		if st, ok := l.followers.snapshot(s.ID); ok {
			fl.Match = st.match
			fl.Lag = last - min(last, st.match)
			if !st.contact.IsZero() {
				fl.Contacted, fl.LastContact = true, now.Sub(st.contact)
			}
		}
		out = append(out, fl)
	}
	return out
}
