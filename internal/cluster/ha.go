package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	"smarth/internal/daemonconf"
	"smarth/internal/pki"
	"smarth/internal/ports"
	"smarth/internal/rpc/dfspb"
)

// A local HA cluster (Options.NameNodes > 1, issue 28) runs its namenodes
// nn1..nnN as the members of one replicated group: each has its own
// metadata directory, RPC, web and raft ports, the same two shared secrets
// (identity secret and datanode key) and a certificate from the cluster's
// CA (the group's port is mutual TLS, so an HA cluster always has TLS);
// nn1 bootstraps the group. Every port is chosen before the first member
// starts, since each member must be told every other one's addresses, and
// the group's log records them: a member comes back on the ports it had.
// The state file's namenode is the comma list of the members' RPC
// addresses, which every client fails over across (DefaultNameNode), and
// every datanode, the resource manager and the node managers are given
// the same list.

// maxNameNodes bounds an HA group: 5 members ride out two failures; more
// only slow down every commit on one machine.
const maxNameNodes = 5

// checkNameNodes validates Options.NameNodes; 0 is 1.
func (o *Options) checkNameNodes() error {
	if o.NameNodes == 0 {
		o.NameNodes = 1
	}
	switch {
	case o.NameNodes < 1 || o.NameNodes > maxNameNodes:
		return fmt.Errorf("--namenodes must be 1, 3 or 5, not %d", o.NameNodes)
	case o.NameNodes%2 == 0:
		// A group of 2k members needs k+1 for a majority, as 2k+1 does:
		// the extra member adds a failure to survive nothing.
		return fmt.Errorf("--namenodes %d: an HA group needs an odd number of namenodes (3 rides out one failure, 5 two); an even one survives no more failures than one fewer", o.NameNodes)
	}
	if o.NameNodes > 1 {
		// The group's raft port speaks mutual TLS only.
		o.TLS = true
	}
	return nil
}

// NameNodeName is the daemon name of namenode i (0-based) of a cluster of
// n: namenode for a single one (today's layout), nn1..nnN in an HA group.
func NameNodeName(i, n int) string {
	if n <= 1 {
		return "namenode"
	}
	return fmt.Sprintf("nn%d", i+1)
}

// haPorts are one member's addresses, chosen before any member starts.
type haPorts struct{ rpc, http, raft string }

// pickHAPorts chooses every member's ports: nn1 gets the requested RPC and
// web addresses (8020 and 9870 when free), the rest free loopback ports
// below the kernel's ephemeral range (ports.Listen), which no outgoing
// connection's source port can take before the member binds them. A
// port may still be taken by another server's explicit bind; the member
// then fails with its bind error and Up reports it.
func (o *Options) pickHAPorts() ([]haPorts, error) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	// Keep each chosen port open until all are chosen so that no two
	// members are given the same one.
	port := func(want string) (string, error) {
		if want != "" && !anyPort(want) {
			return want, nil
		}
		l, err := ports.Listen()
		if err != nil {
			return "", fmt.Errorf("choose a port for an HA namenode: %w", err)
		}
		held = append(held, l)
		return l.Addr().String(), nil
	}
	ps := make([]haPorts, o.NameNodes)
	for i := range ps {
		var rpcWant, httpWant string
		if i == 0 {
			rpcWant, httpWant = o.NameNodeRPC, o.NameNodeHTTP
		}
		var err error
		if ps[i].rpc, err = port(rpcWant); err != nil {
			return nil, err
		}
		if ps[i].http, err = port(httpWant); err != nil {
			return nil, err
		}
		if ps[i].raft, err = port(""); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// haConfig makes member i's config: the single namenode's config with its
// own addresses and metadata directory and the group's ha_* keys.
func (o *Options) haConfig(l layout, i int, ps []haPorts) (map[string]any, error) {
	peers := map[string]daemonconf.NameNodeHAPeer{}
	for j, p := range ps {
		peers[NameNodeName(j, len(ps))] = daemonconf.NameNodeHAPeer{RPC: p.rpc, HTTP: p.http, Raft: p.raft}
	}
	name := NameNodeName(i, len(ps))
	return o.nameNodeConfigFor(l, name, ps[i].rpc, ps[i].http, daemonconf.NameNodeHA{ID: name, Peers: peers, Bootstrap: i == 0})
}

// NameNodeDaemons are the recorded namenodes, nn1 first.
func (s *State) NameNodeDaemons() []Daemon {
	var out []Daemon
	for _, d := range s.Daemons {
		if d.Kind == "namenode" {
			out = append(out, d)
		}
	}
	// Members are recorded as they come up; clients and tables list
	// them nn1 first.
	slices.SortFunc(out, func(a, b Daemon) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// HA reports whether the cluster's namenodes are an HA group: several
// recorded, or, for a cluster known only by its namenode setting (a
// testbed's, from $SMARTH_NAMENODE), several listed.
func (s *State) HA() bool {
	if nns := s.NameNodeDaemons(); len(nns) > 0 {
		return len(nns) > 1
	}
	return strings.Contains(s.NameNode, ",")
}

// nameNodeList is the namenode setting clients of the cluster get: the
// single namenode's RPC address, or every member's as a comma list (in
// the order nn1..nnN; a member not yet ready is left out).
func (s *State) nameNodeList() string {
	var addrs []string
	for _, d := range s.NameNodeDaemons() {
		if d.Ready.RPC != "" {
			addrs = append(addrs, d.Ready.RPC)
		}
	}
	return strings.Join(addrs, ",")
}

// nameNodeHTTPList is every member's web address, comma-separated: what
// node managers fetch jobs' delegation tokens from, whichever member is
// active.
func (s *State) nameNodeHTTPList() string {
	var addrs []string
	for _, d := range s.NameNodeDaemons() {
		if d.Ready.HTTP != "" {
			addrs = append(addrs, d.Ready.HTTP)
		}
	}
	return strings.Join(addrs, ",")
}

// MemberStatus is one namenode's answer to GetHAStatus (its role, term
// and applied txid), or why it gave none.
type MemberStatus struct {
	Name string
	Addr string
	HA   *dfspb.GetHAStatusResponse // nil when Err is set
	Err  error
}

// Role is the member's role as status prints it: active, standby, or
// "down" / the error.
func (m MemberStatus) Role() string {
	switch {
	case m.Err != nil:
		return "unreachable"
	case m.HA.GetState() == dfspb.HAState_ACTIVE:
		return "active"
	case m.HA.GetState() == dfspb.HAState_STANDBY:
		return "standby"
	}
	return strings.ToLower(m.HA.GetState().String())
}

// HAStatus asks every recorded namenode that runs for its HA status, in
// parallel, nn1 first in the result. A member that is not running is
// reported with an error saying so, without a call.
func HAStatus(ctx context.Context, st *State) ([]MemberStatus, error) {
	sec, err := st.Security()
	if err != nil {
		return nil, err
	}
	nns := st.NameNodeDaemons()
	out := make([]MemberStatus, len(nns))
	for i, d := range nns {
		out[i] = MemberStatus{Name: d.Name, Addr: d.Ready.RPC}
		if !d.Running() || d.Ready.RPC == "" {
			out[i].Err = errors.New("not running")
		}
	}
	if len(nns) == 0 {
		// No records (a testbed's cluster): the members are the
		// setting's addresses, named by them.
		for _, a := range strings.Split(st.NameNode, ",") {
			out = append(out, MemberStatus{Name: a, Addr: a})
		}
	}
	var wg sync.WaitGroup
	for i := range out {
		if out[i].Err != nil {
			continue
		}
		wg.Go(func() {
			conn, err := grpc.NewClient(out[i].Addr, pki.DialOption(sec.TLS))
			if err != nil {
				out[i].Err = err
				return
			}
			defer conn.Close()
			n := &nameNode{conn: conn, rpc: dfspb.NewClientProtocolClient(conn), cred: sec.credential()}
			cctx, cancel := n.callCtx(ctx)
			defer cancel()
			out[i].HA, out[i].Err = n.rpc.GetHAStatus(cctx, &dfspb.GetHAStatusRequest{})
		})
	}
	wg.Wait()
	return out, nil
}

// ActiveNameNode returns the RPC address of the cluster's active
// namenode: the single namenode's, or the one member of an HA group that
// says ACTIVE and is named active by no member at a higher term.
func ActiveNameNode(ctx context.Context, st *State) (string, MemberStatus, error) {
	if !st.HA() {
		if st.NameNode == "" {
			return "", MemberStatus{}, fmt.Errorf("the cluster in %s has no namenode running", st.Home)
		}
		name := st.NameNode // a cluster known only by its setting
		if nns := st.NameNodeDaemons(); len(nns) > 0 {
			name = nns[0].Name
		}
		return st.NameNode, MemberStatus{Name: name, Addr: st.NameNode}, nil
	}
	ms, err := HAStatus(ctx, st)
	if err != nil {
		return "", MemberStatus{}, err
	}
	var best *MemberStatus
	var why []string
	for i, m := range ms {
		switch {
		case m.Err != nil:
			why = append(why, fmt.Sprintf("%s: %v", m.Name, m.Err))
		case m.HA.GetState() == dfspb.HAState_ACTIVE:
			if best == nil || m.HA.GetTerm() > best.HA.GetTerm() {
				best = &ms[i]
			}
		default:
			why = append(why, fmt.Sprintf("%s: %s (term %d, active %q)", m.Name, m.Role(), m.HA.GetTerm(), m.HA.GetActiveId()))
		}
	}
	if best == nil {
		return "", MemberStatus{}, fmt.Errorf("no active namenode in the HA group of %s: %s", st.Home, strings.Join(why, "; "))
	}
	// A deposed active that has not yet learnt of its successor still
	// says ACTIVE at its old term: a member at a higher term outranks it.
	for _, m := range ms {
		if m.Err == nil && m.HA.GetTerm() > best.HA.GetTerm() {
			return "", MemberStatus{}, fmt.Errorf("no settled active in the HA group of %s: %s says active at term %d, %s is at term %d", st.Home, best.Name, best.HA.GetTerm(), m.Name, m.HA.GetTerm())
		}
	}
	return best.Addr, *best, nil
}

// WaitActive polls until the cluster's HA group has a settled active
// namenode (see ActiveNameNode) or ctx ends.
func WaitActive(ctx context.Context, st *State) (string, MemberStatus, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		addr, m, err := ActiveNameNode(ctx, st)
		if err == nil {
			return addr, m, nil
		}
		select {
		case <-ctx.Done():
			return "", MemberStatus{}, fmt.Errorf("waiting for an active namenode: %w", err)
		case <-tick.C:
		}
	}
}

// activeWord names the namenode datanodes register with in progress
// lines: the namenode, or the active namenode of a group.
func (s *State) activeWord() string {
	if s.HA() {
		return "active namenode"
	}
	return "namenode"
}

// waitMembers waits until each started member of the HA group has joined
// it: it says active, or standby naming an active, and the group has a
// settled active. A started member counts as back only then: before, it
// is a process that has not yet caught up with the group's log.
func (u *upper) waitMembers(ctx context.Context, started []Daemon) error {
	wctx, cancel := context.WithTimeout(ctx, u.opts.ReadyTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		last = ""
		ms, err := HAStatus(wctx, u.st)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if !slices.ContainsFunc(started, func(d Daemon) bool { return d.Name == m.Name }) {
				continue
			}
			switch {
			case m.Err != nil:
				last = fmt.Sprintf("%s: %v", m.Name, m.Err)
			case m.HA.GetState() != dfspb.HAState_ACTIVE && m.HA.GetActiveId() == "":
				last = fmt.Sprintf("%s is %s and knows no active yet (term %d)", m.Name, m.Role(), m.HA.GetTerm())
			}
		}
		if last == "" {
			_, m, err := ActiveNameNode(wctx, u.st)
			if err == nil {
				fmt.Fprintf(u.opts.Out, "HA group: %s is active (term %d)\n", m.Name, m.HA.GetTerm())
				return nil
			}
			last = err.Error()
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("waiting for the started namenodes to join their HA group: %s", last)
		case <-tick.C:
		}
	}
}

// sameNameNodes refuses an Up that asks for a number of namenodes other
// than the home's cluster has (asked 0: any). A home's namespace lives
// in its namenodes' metadata: a new group of another size, or a single
// namenode beside a group's members, would start from nothing.
func sameNameNodes(old *State, asked int) error {
	have := len(old.NameNodeDaemons())
	if asked == 0 || have == 0 || asked == have {
		return nil
	}
	return fmt.Errorf("the cluster in %s has %d namenode(s), not the %d asked for: use another --home for a new cluster, or remove this one with `smarth cluster down --purge --home %s`", old.Home, have, asked, old.Home)
}
