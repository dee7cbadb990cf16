package client

import (
	"context"
	"io/fs"

	"smarth/internal/rpc/dfspb"
)

// User is the user this client acts as (Config.User after defaults); a
// shell resolves relative paths against /user/<User>.
func (f *FileSystem) User() string { return f.cfg.User }

// HasCredential says whether the client proves its user with a
// credential (a secure cluster) rather than asserting it (simple auth).
func (f *FileSystem) HasCredential() bool { return f.cfg.Credential != "" }

// NameNodeAddr is the "host:port" of the namenode this client talks to.
func (f *FileSystem) NameNodeAddr() string { return f.cfg.NameNode }

// SetPermission sets the mode bits of path: the nine rwx bits and the
// sticky bit (fs.ModeSticky, HDFS's 01000). Only the owner or a superuser
// may; the namenode checks.
func (f *FileSystem) SetPermission(ctx context.Context, p string, mode fs.FileMode) error {
	p, err := cleanPath(p)
	if err != nil {
		return err
	}
	if _, err := f.nn.SetPermission(ctx, &dfspb.SetPermissionRequest{Path: p, Permission: PermBits(mode)}); err != nil {
		return mapError("chmod", p, err)
	}
	return nil
}

// SetOwner changes the owner and/or the group of path ("" keeps one).
// Only a superuser may change the owner; the owner may change the group to
// one of their groups.
func (f *FileSystem) SetOwner(ctx context.Context, p, owner, group string) error {
	p, err := cleanPath(p)
	if err != nil {
		return err
	}
	if owner == "" && group == "" {
		return &PathError{Op: "chown", Path: p, Kind: fs.ErrInvalid, Msg: "give an owner, a group or both"}
	}
	if _, err := f.nn.SetOwner(ctx, &dfspb.SetOwnerRequest{Path: p, Owner: owner, Group: group}); err != nil {
		return mapError("chown", p, err)
	}
	return nil
}

// PermBits is mode as the namenode stores it: rwx bits plus 01000 for
// sticky.
func PermBits(mode fs.FileMode) uint32 {
	bits := uint32(mode.Perm())
	if mode&fs.ModeSticky != 0 {
		bits |= 0o1000
	}
	return bits
}

// ModeOf is the inverse of PermBits.
func ModeOf(bits uint32) fs.FileMode {
	m := fs.FileMode(bits) & fs.ModePerm
	if bits&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}
