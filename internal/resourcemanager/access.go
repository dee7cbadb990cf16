package resourcemanager

import (
	"context"
	"os/user"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
)

// Who may do what with jobs. The resource manager decides it here, on
// the server, from the caller's identity as Identify establishes it:
// a job runs as its submitter, only its owner or an admin may kill it,
// and apps that run arbitrary commands need allow_streaming.

// Identify establishes who called an RPC.
type Identify func(ctx context.Context) (string, error)

// mdUser is the metadata key clients put their user name in.
const mdUser = "smarth-user"

// AssertedUser is Hadoop's simple mode (auth: simple): the caller is
// whoever the "smarth-user" metadata names, so it suits only a network
// whose every caller is trusted. Secure mode, the default, uses
// VerifiedUser instead (New picks by Config.Auth unless Config.Identify is
// set).
func AssertedUser(ctx context.Context) (string, error) {
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if u := md.Get(mdUser); len(u) > 0 && u[0] != "" {
			return u[0], nil
		}
	}
	return "", status.Error(codes.Unauthenticated, "the call names no user (metadata smarth-user)")
}

// VerifiedUser is secure mode: the caller is the user its credential
// (metadata smarth-auth, minted with the namenode's identity secret)
// proves; the asserted smarth-user is ignored, so naming another user
// gets nothing.
func VerifiedUser(secret []byte) Identify {
	return func(ctx context.Context) (string, error) {
		var cred string
		if md, ok := metadata.FromIncomingContext(ctx); ok {
			if c := md.Get(auth.MDCredential); len(c) > 0 {
				cred = c[0]
			}
		}
		u, err := auth.VerifyUser(secret, cred)
		if err != nil {
			return "", status.Error(codes.Unauthenticated, err.Error())
		}
		return u, nil
	}
}

// GroupsOf resolves a user's groups on the resource manager's host, as
// Hadoop's ShellBasedUnixGroupsMapping does: never from what the caller
// claims.
type GroupsOf func(user string) ([]string, error)

// OSGroups looks the user's groups up in the host's user database.
func OSGroups(name string) ([]string, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, err
	}
	ids, err := u.GroupIds()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range ids {
		if g, err := user.LookupGroupId(id); err == nil {
			out = append(out, g.Name)
		}
	}
	return out, nil
}

// caller establishes the caller of an RPC.
func (rm *ResourceManager) caller(ctx context.Context) (string, error) {
	u, err := rm.cfg.Identify(ctx)
	if err != nil {
		if _, ok := status.FromError(err); ok {
			return "", err
		}
		return "", status.Errorf(codes.Unauthenticated, "who is calling: %v", err)
	}
	return u, nil
}

// isAdmin: user may act on every job (admin_users, or a member of
// admin_group on this host).
func (rm *ResourceManager) isAdmin(name string) bool {
	if slices.Contains(rm.cfg.AdminUsers, name) {
		return true
	}
	if rm.cfg.AdminGroup == "" {
		return false
	}
	groups, err := rm.cfg.GroupsOf(name)
	if err != nil {
		rm.log.Debug("no groups for user", "user", name, "err", err)
		return false
	}
	return slices.Contains(groups, rm.cfg.AdminGroup)
}

// mayView refuses a caller who neither owns j nor is an admin: a job's
// status names its input, output, counters and where its task logs are.
// The same rule holds for a job read from the history store.
func (rm *ResourceManager) mayView(id, owner, caller string) error {
	if caller == owner || rm.isAdmin(caller) {
		return nil
	}
	return status.Errorf(codes.PermissionDenied, "view %s: user %s is neither the job's owner nor an admin of the resource manager",
		id, caller)
}

// mayModify refuses a caller who neither owns j nor is an admin.
func (rm *ResourceManager) mayModify(op string, j *job, caller string) error {
	if caller == j.user || rm.isAdmin(caller) {
		return nil
	}
	return status.Errorf(codes.PermissionDenied, "%s %s: user %s is neither the job's owner (%s) nor an admin of the resource manager",
		op, j.id, caller, j.user)
}
