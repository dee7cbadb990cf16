package resourcemanager

import (
	"context"
	"fmt"
	"net"
	"os/user"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
)

// Who may act as a node manager (docs/security.md, "Node managers").
// A node manager receives task launches — job parameters, input splits,
// the submitter's name and the job's shuffle secret — reports attempts
// finished, and advertises the shuffle address reducers fetch from. In
// secure mode the resource manager therefore takes its heartbeats (and
// its map-output queries) only from a caller whose credential proves a
// user listed in nodemanager_users, as YARN accepts node managers only
// as its service principal; a node id, once registered, stays bound to
// the user that registered it. The credential is the one job clients
// send (metadata smarth-auth, a user credential signed with the
// namenode's identity secret), checked by the same Identify.

// maxRefusalLog bounds the refusals remembered so as to log each once.
const maxRefusalLog = 1024

// defaultNodeManagerUsers are the node-manager users of a config that
// names none: the resource manager's own OS user and the user of its own
// credential (token_file), which is what `smarth cluster up` and the
// test clusters run node managers as.
func defaultNodeManagerUsers(tokenFile string) []string {
	var users []string
	if u, err := user.Current(); err == nil {
		users = append(users, u.Username)
	}
	if cred, err := auth.LoadCredential(tokenFile); err == nil && cred != "" {
		if u := auth.CredentialUser(cred); u != "" && !slices.Contains(users, u) {
			users = append(users, u)
		}
	}
	return users
}

// nodeCaller establishes who is making call (e.g. `heartbeat from node
// "x"`) as a node manager: "" in simple mode (no check, Hadoop's simple
// auth), else a user of NodeManagerUsers. A refusal is logged once per
// peer and reason.
func (rm *ResourceManager) nodeCaller(ctx context.Context, call string) (string, error) {
	if rm.cfg.Auth == auth.Simple {
		return "", nil
	}
	u, err := rm.caller(ctx)
	if err != nil {
		st := status.Convert(err)
		err = status.Errorf(st.Code(), "%s refused: %s (a node manager needs its credential in token_file)", call, st.Message())
		rm.logRefusal(ctx, err)
		return "", err
	}
	if !slices.Contains(rm.cfg.NodeManagerUsers, u) {
		err := status.Errorf(codes.PermissionDenied, "%s refused: user %s is not a node-manager user of this resource manager (nodemanager_users: %v)",
			call, u, rm.cfg.NodeManagerUsers)
		rm.logRefusal(ctx, err)
		return "", err
	}
	return u, nil
}

// bindNode checks that id is not bound to a user other than u and binds
// it to u. The binding outlives the node's loss, so that another user
// cannot take an id over by waiting until its node manager falls silent.
// rm.mu is held.
func (rm *ResourceManager) bindNode(ctx context.Context, id, u string) error {
	if u == "" { // simple mode
		return nil
	}
	if owner, ok := rm.nodeOwners[id]; ok {
		if owner == u {
			return nil
		}
		err := status.Errorf(codes.PermissionDenied, "heartbeat from node %q refused: that node id is registered by user %s, not %s", id, owner, u)
		rm.logRefusal(ctx, err)
		return err
	}
	rm.nodeOwners[id] = u
	return nil
}

// logRefusal logs err once per peer host and message: a refused node
// manager retries every heartbeat.
func (rm *ResourceManager) logRefusal(ctx context.Context, err error) {
	from := "unknown"
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		from = p.Addr.String()
		if h, _, e := net.SplitHostPort(from); e == nil {
			from = h
		}
	}
	key := from + "\x00" + status.Convert(err).Message()
	rm.refusedMu.Lock()
	defer rm.refusedMu.Unlock()
	if _, seen := rm.refused[key]; seen {
		return
	}
	if len(rm.refused) >= maxRefusalLog {
		if !rm.refusedFull {
			rm.refusedFull = true
			rm.log.Warn(fmt.Sprintf("more than %d distinct node-manager refusals; further ones are not logged", maxRefusalLog))
		}
		return
	}
	rm.refused[key] = struct{}{}
	rm.log.Warn("node manager refused", "peer", from, "err", status.Convert(err).Message())
}
