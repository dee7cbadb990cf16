package namenode

import (
	"context"
	"net"
	"slices"
	"sort"
	"strings"
	"time"

	"smarth/internal/daemonconf"
	"smarth/internal/namenode/replog"
	"smarth/internal/rpc/dfspb"
)

// The HA group's operations (issue 28; HDFS's haadmin -failover, and
// the membership changes HDFS makes by editing dfs.ha.namenodes and
// restarting): transfer-leader, add and remove, served by the active
// only (the interceptor refuses them on a standby naming the active),
// superusers only (authz.go). Each refuses what would hurt the group, in
// words that name the member at fault: removing the active itself,
// leaving no majority that answers, adding an id or raft address already
// there, a transfer to an unknown or silent member.
//
// A member added here is known to the namenodes through the group; to
// datanodes and clients only through their configuration (namenodes:,
// SMARTH_NAMENODE, the datanodes' namenode list), which the operator
// updates: nothing here tells them.

// peer is member id's addresses ("" fields: unknown here).
func (h *haNode) peer(id string) daemonconf.NameNodeHAPeer {
	h.peersMu.RLock()
	defer h.peersMu.RUnlock()
	return h.peers[id]
}

// memberPeers is the group's membership (raft's configuration) with the
// addresses this namenode knows of each member, sorted by id. A member
// added through another namenode and missing from this one's ha_peers
// has its raft address only.
func (h *haNode) memberPeers() []*dfspb.HAPeer {
	var out []*dfspb.HAPeer
	for _, m := range h.log.Stats().Members {
		p := h.peer(m.ID)
		out = append(out, &dfspb.HAPeer{Id: m.ID, RpcAddress: p.RPC, HttpAddress: p.HTTP, Voter: m.Voter})
	}
	if len(out) == 0 { // the configuration could not be read (shutting down)
		h.peersMu.RLock()
		for id, p := range h.peers {
			out = append(out, &dfspb.HAPeer{Id: id, RpcAddress: p.RPC, HttpAddress: p.HTTP, Voter: true})
		}
		h.peersMu.RUnlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return out
}

// contactWithin is how recently a follower must have answered the
// active to count as up: several heartbeat timeouts (heartbeats go out
// ten times in each), and never less than two seconds, so that a loaded
// machine's pauses do not make a live member look gone.
func (h *haNode) contactWithin() time.Duration {
	hb := h.nn.cfg.HA.HeartbeatTimeout
	if hb == 0 {
		hb = replog.DefaultHeartbeatTimeout
	}
	return max(4*hb, 2*time.Second)
}

// groupView is the membership and who answers, as the active sees it.
type groupView struct {
	self    string
	members []string                   // ids, sorted
	addrs   map[string]string          // id -> raft address
	follow  map[string]replog.Follower // the other members
	within  time.Duration
}

func (h *haNode) view() groupView {
	v := groupView{self: h.nn.cfg.HA.ID, addrs: map[string]string{}, follow: map[string]replog.Follower{}, within: h.contactWithin()}
	for _, m := range h.log.Stats().Members {
		v.members = append(v.members, m.ID)
		v.addrs[m.ID] = m.Addr
	}
	sort.Strings(v.members)
	for _, f := range h.log.Followers() {
		v.follow[f.ID] = f
	}
	return v
}

func (v groupView) has(id string) bool { return slices.Contains(v.members, id) }

// up says whether member id answers the active (the active itself does).
func (v groupView) up(id string) bool {
	if id == v.self {
		return true
	}
	f, ok := v.follow[id]
	return ok && f.Contacted && f.LastContact <= v.within
}

func (v groupView) notMember(op, id string) error {
	return errInvalid("%s: %s is not a member of the HA group (members: %s)", op, id, strings.Join(v.members, ", "))
}

// checkMajority refuses a membership of n voters of which only the ones
// in up answer: the group could commit nothing (not even the change
// back) until enough of them return.
func (v groupView) checkMajority(op, id string, n int, upIDs []string, down []string) error {
	need := n/2 + 1
	if len(upIDs) >= need {
		return nil
	}
	return errPrecondition("%s %s: the group would have %d members and need %d of them for a majority, but only %d answer the active (%s; not answering within %v: %s); bring those back or remove them first",
		op, id, n, need, len(upIDs), strings.Join(upIDs, ", "), v.within, strings.Join(down, ", "))
}

// activeOp checks that this namenode can run a group operation: a
// member of a group, active (the interceptor refused a standby already;
// this catches the active that lost its role since).
func (nn *NameNode) activeOp(op string) (*haNode, error) {
	if nn.ha == nil {
		return nil, errPrecondition("%s: this namenode is not a member of an HA group (ha_id is not set)", op)
	}
	if !nn.ha.active.Load() || nn.ha.transferTo.Load() != nil {
		nn.mu.RLock()
		defer nn.mu.RUnlock()
		return nil, nn.ha.writableLocked()
	}
	return nn.ha, nil
}

// memberOp starts an operation on existing member id (what the id
// names, for the error when it is missing) on the active: its view of
// the group, or the refusal.
func (nn *NameNode) memberOp(op, id, what string) (*haNode, groupView, error) {
	if id == "" {
		return nil, groupView{}, errInvalid("%s: the id of %s is required", op, what)
	}
	h, err := nn.activeOp(op)
	if err != nil {
		return nil, groupView{}, err
	}
	v := h.view()
	if !v.has(id) {
		return nil, groupView{}, v.notMember(op, id)
	}
	return h, v, nil
}

func (s *clientRPC) TransferHALeader(ctx context.Context, r *dfspb.TransferHALeaderRequest) (*dfspb.TransferHALeaderResponse, error) {
	return s.nn.transferHALeader(ctx, r.GetId())
}

func (s *clientRPC) AddHAMember(ctx context.Context, r *dfspb.AddHAMemberRequest) (*dfspb.AddHAMemberResponse, error) {
	peers, err := s.nn.addHAMember(ctx, r.GetId(), daemonconf.NameNodeHAPeer{Raft: r.GetRaftAddress(), RPC: r.GetRpcAddress(), HTTP: r.GetHttpAddress()})
	if err != nil {
		return nil, err
	}
	return &dfspb.AddHAMemberResponse{Peers: peers}, nil
}

func (s *clientRPC) RemoveHAMember(ctx context.Context, r *dfspb.RemoveHAMemberRequest) (*dfspb.RemoveHAMemberResponse, error) {
	peers, err := s.nn.removeHAMember(ctx, r.GetId())
	if err != nil {
		return nil, err
	}
	return &dfspb.RemoveHAMemberResponse{Peers: peers}, nil
}

// transferHALeader hands the active role to member id. The active first
// stops taking mutations (they are refused naming id) and waits until
// every one it took is committed, so that the stint ends with nothing
// uncommitted (a stint that ends otherwise makes the namenode exit to
// reload, see stepDown); then raft moves the leadership. A transfer that
// fails leaves this namenode active.
func (nn *NameNode) transferHALeader(ctx context.Context, id string) (*dfspb.TransferHALeaderResponse, error) {
	const op = "transfer-leader"
	h, v, err := nn.memberOp(op, id, "the member to make active")
	if err != nil {
		return nil, err
	}
	switch {
	case id == v.self:
		return nil, errPrecondition("%s: %s is already the active namenode", op, id)
	case !v.up(id):
		return nil, errPrecondition("%s: %s has not answered the active within %v; not handing it the active role", op, id, v.within)
	}
	nn.mu.Lock()
	if err := h.writableLocked(); err != nil {
		nn.mu.Unlock()
		return nil, err
	}
	h.transferTo.Store(&id)
	h.active.Store(false)
	last := nn.journal.LastTxID()
	nn.mu.Unlock()
	nn.logger.Info("HA transfer-leader: mutations stopped; waiting for the last edit to commit", "to", id, "txid", last)
	if err = nn.journal.Sync(last); err == nil {
		// raft gives a transfer one election timeout to catch the target
		// up and start its election; on a loaded host that can pass
		// with nothing wrong. Try again while still the leader, as an
		// operator would.
		for try := 1; ; try++ {
			err = h.log.TransferLeadership(ctx, id)
			if err == nil || try == 3 || ctx.Err() != nil || !h.log.IsLeader() {
				break
			}
			nn.logger.Info("HA transfer-leader: attempt failed; trying again", "to", id, "attempt", try, "err", err)
		}
	}
	if err != nil {
		// raft refuses entries until its failed transfer has wound down
		// (seconds, when the target is dead): an edit applied in memory
		// and refused by the log would stop this namenode. Mutations
		// resume only once a barrier commits.
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		serr := h.log.Settle(sctx)
		cancel()
		nn.mu.Lock()
		// Still the leader: take mutations again (stepDown, if the stint
		// did end, sets active back to false under the same lock).
		if serr == nil && h.log.Writable() == nil {
			h.active.Store(true)
		}
		h.transferTo.Store(nil)
		nn.mu.Unlock()
		nn.logger.Warn("HA transfer-leader failed", "to", id, "err", err)
		return nil, errUnavailable("%s: failover to %s failed: %v", op, id, err)
	}
	// The old leader learns the new one from its first heartbeat: wait
	// for it (bounded by the call's deadline), so that the answer, and
	// every refusal from now on, names it.
	for {
		if lid, _ := h.log.Leader(); lid == id || ctx.Err() != nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.transferTo.Store(nil)
	lid, _ := h.log.Leader()
	nn.logger.Info("HA transfer-leader: the active role moved", "to", id, "leader", lid, "term", h.log.Term())
	return &dfspb.TransferHALeaderResponse{ActiveId: lid, ActiveRpcAddress: h.peer(lid).RPC, Term: h.log.Term()}, nil
}

// addHAMember adds member id with addresses p as a voter; it receives
// the active's snapshot and log and then votes. Refused when the group
// of one more member could not count on a majority of those that answer
// now (the new one answers only once it runs and has caught up).
func (nn *NameNode) addHAMember(ctx context.Context, id string, p daemonconf.NameNodeHAPeer) ([]*dfspb.HAPeer, error) {
	const op = "add"
	if id == "" {
		return nil, errInvalid("%s: the new member's id is required", op)
	}
	for key, addr := range map[string]string{"raft address": p.Raft, "rpc address": p.RPC, "http address": p.HTTP} {
		if addr == "" && key == "http address" {
			continue
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, errInvalid("%s %s: %s %q is not host:port", op, id, key, addr)
		}
	}
	h, err := nn.activeOp(op)
	if err != nil {
		return nil, err
	}
	v := h.view()
	if v.has(id) {
		return nil, errExists("%s: %s is already a member of the HA group (raft address %s); remove it first to change its addresses", op, id, v.addrs[id])
	}
	for _, m := range v.members {
		if v.addrs[m] == p.Raft {
			return nil, errExists("%s %s: raft address %s is already member %s's", op, id, p.Raft, m)
		}
	}
	up, down := v.split(v.members)
	if err := v.checkMajority(op, id, len(v.members)+1, up, append(down, id+" (new)")); err != nil {
		return nil, err
	}
	if err := h.log.AddVoter(ctx, id, p.Raft); err != nil {
		return nil, errUnavailable("%s %s: %v", op, id, err)
	}
	h.peersMu.Lock()
	h.peers[id] = p
	h.peersMu.Unlock()
	nn.logger.Info("HA member added", "id", id, "raft", p.Raft, "rpc", p.RPC, "http", p.HTTP)
	return h.memberPeers(), nil
}

// removeHAMember removes member id. The active cannot remove itself
// (transfer the role first), nor leave a group whose remaining members
// that answer are no majority of it.
func (nn *NameNode) removeHAMember(ctx context.Context, id string) ([]*dfspb.HAPeer, error) {
	const op = "remove"
	h, v, err := nn.memberOp(op, id, "the member to remove")
	if err != nil {
		return nil, err
	}
	if id == v.self {
		return nil, errPrecondition("%s: %s is the active namenode; make another member active first (smarth admin ha transfer-leader <id>), then remove %s through it", op, id, id)
	}
	rest := slices.DeleteFunc(slices.Clone(v.members), func(m string) bool { return m == id })
	up, down := v.split(rest)
	if err := v.checkMajority(op, id, len(rest), up, down); err != nil {
		return nil, err
	}
	if err := h.log.RemoveServer(ctx, id); err != nil {
		return nil, errUnavailable("%s %s: %v", op, id, err)
	}
	h.peersMu.Lock()
	delete(h.peers, id)
	h.peersMu.Unlock()
	nn.logger.Info("HA member removed", "id", id)
	return h.memberPeers(), nil
}

// split divides ids into those that answer the active and those that do
// not.
func (v groupView) split(ids []string) (up, down []string) {
	for _, m := range ids {
		if v.up(m) {
			up = append(up, m)
		} else {
			down = append(down, m)
		}
	}
	return up, down
}
