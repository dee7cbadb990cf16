// Package container runs a task's user code (a Streaming command) the way
// YARN's LinuxContainerExecutor does: as an unprivileged OS user chosen
// by a policy (never root, never a banned user, never a system uid below
// min_user_id), with an environment rebuilt from an allow-list, in a
// private work directory, inside a cgroup that holds the job's memory
// and CPU request and is killed whole when the task ends.
//
// The "default" executor is today's behaviour for auth: simple
// development clusters: the command runs as the node manager's own user,
// in a process group of its own, with the daemon's environment.
package container

import (
	"errors"
	"fmt"
	"os/user"
	"slices"
	"strconv"
	"strings"
)

// The run_as values.
const (
	// RunAsSubmitter runs a task as the OS account named like its job's
	// submitter where the host has one the policy allows, else as
	// RunAsUser (YARN's secure mode, with nonsecure-mode's local user as
	// the fallback).
	RunAsSubmitter = "submitter"
	// RunAsLocalUser runs every task as RunAsUser (YARN's
	// nonsecure-mode.limit-users).
	RunAsLocalUser = "local-user"
)

// Defaults, as container-executor.cfg and yarn-default.xml have them.
const (
	DefaultRunAsUser = "nobody"
	DefaultMinUserID = 1000
)

// DefaultBannedUsers is container-executor.cfg's banned.users default,
// with root (never allowed anyway).
func DefaultBannedUsers() []string { return []string{"hdfs", "yarn", "mapred", "bin", "root"} }

// Policy says which OS user a task may run as.
type Policy struct {
	RunAs       string   `yaml:"run_as"`       // submitter (the OS account named like the job's submitter, else run_as_user) or local-user (always run_as_user)
	RunAsUser   string   `yaml:"run_as_user"`  // the OS account tasks run as when not as their submitter (yarn.nodemanager.linux-container-executor.nonsecure-mode.local-user)
	MinUserID   int      `yaml:"min_user_id"`  // accounts with a lower uid are refused, as system accounts (container-executor.cfg min.user.id)
	BannedUsers []string `yaml:"banned_users"` // accounts tasks never run as (container-executor.cfg banned.users)
}

// DefaultPolicy is run_as: submitter, falling back to nobody.
func DefaultPolicy() Policy {
	return Policy{RunAs: RunAsSubmitter, RunAsUser: DefaultRunAsUser, MinUserID: DefaultMinUserID, BannedUsers: DefaultBannedUsers()}
}

// Identity is an OS account a container runs as.
type Identity struct {
	Name   string
	UID    uint32
	GID    uint32
	Groups []uint32 // supplementary groups
}

// Validate checks the policy's settings and that run_as_user is an
// account the policy allows on this host.
func (p Policy) Validate() error {
	if p.RunAs != RunAsSubmitter && p.RunAs != RunAsLocalUser {
		return fmt.Errorf("run_as %q: want %s or %s", p.RunAs, RunAsSubmitter, RunAsLocalUser)
	}
	if p.MinUserID < 0 {
		return fmt.Errorf("min_user_id %d must not be negative", p.MinUserID)
	}
	if p.RunAsUser == "" {
		return errors.New("run_as_user is required (the local user tasks run as, e.g. nobody)")
	}
	if _, err := p.local(); err != nil {
		return fmt.Errorf("run_as_user: %w", err)
	}
	return nil
}

// Resolve is the account a task of submitter runs as: the submitter's
// own where run_as is submitter and the host has an allowed account of
// that name, else run_as_user. The second value says why the submitter's
// own account was not used ("" when it was, or when run_as is
// local-user), for the task's log.
func (p Policy) Resolve(submitter string) (*Identity, string, error) {
	if p.RunAs == RunAsSubmitter && submitter != "" {
		id, err := lookup(submitter)
		if err == nil {
			err = p.check(id, false)
		}
		if err == nil {
			return id, "", nil
		}
		local, lerr := p.local()
		return local, err.Error(), lerr
	}
	id, err := p.local()
	return id, "", err
}

// local is run_as_user, checked: it may have a uid below min_user_id
// (nobody, or an account the operator names on purpose) but is never
// root and never banned.
func (p Policy) local() (*Identity, error) {
	id, err := lookup(p.RunAsUser)
	if err != nil {
		return nil, err
	}
	return id, p.check(id, true)
}

// check applies container-executor's rules (its messages, too).
func (p Policy) check(id *Identity, configured bool) error {
	if id.UID == 0 {
		return fmt.Errorf("Requested user %s has id 0: containers never run as root", id.Name)
	}
	// root's group would give the container what the daemon's
	// group-readable files hold.
	if id.GID == 0 || slices.Contains(id.Groups, 0) {
		return fmt.Errorf("Requested user %s is in group 0 (root): containers never run with it", id.Name)
	}
	if slices.Contains(p.BannedUsers, id.Name) {
		return fmt.Errorf("Requested user %s is banned (banned_users)", id.Name)
	}
	if !configured && int64(id.UID) < int64(p.MinUserID) {
		return fmt.Errorf("Requested user %s has id %d, which is below the minimum allowed %d (min_user_id)", id.Name, id.UID, p.MinUserID)
	}
	return nil
}

// lookup reads an account and its groups from the host's user database.
func lookup(name string) (*Identity, error) {
	if name == "" || strings.ContainsAny(name, "/:\n") {
		return nil, fmt.Errorf("user %q: not a valid user name", name)
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("user %s: %w", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user %s: non-numeric uid %q or gid %q", name, u.Uid, u.Gid)
	}
	id := &Identity{Name: u.Username, UID: uint32(uid), GID: uint32(gid)}
	gids, err := u.GroupIds()
	if err != nil {
		return nil, fmt.Errorf("user %s: groups: %w", name, err)
	}
	for _, g := range gids {
		n, err := strconv.ParseUint(g, 10, 32)
		if err != nil {
			continue
		}
		id.Groups = append(id.Groups, uint32(n))
	}
	return id, nil
}
