package client

import (
	"context"

	"smarth/internal/fsattr"
	"smarth/internal/rpc/dfspb"
)

// ACLs, snapshots and storage policies, as HDFS's FileSystem offers them.

// ACLEntry is one entry of a POSIX ACL (the namespace's type: scope,
// type, name, rwx bits). Parse specs with ParseACLSpec.
type ACLEntry = fsattr.ACLEntry

// ACLStatus is getAclStatus's answer: owner, group, mode (whose group bits
// are the mask when there is an extended ACL) and the entries beyond the
// mode, as HDFS returns them.
type ACLStatus = fsattr.ACLStatus

// ParseACLSpec parses an ACL spec as hdfs dfs -setfacl takes it
// ("user:bob:rwx,default:group::r-x"); without perm, as for -x.
func ParseACLSpec(spec string, perm bool) ([]ACLEntry, error) {
	return fsattr.ParseACLSpec(spec, perm)
}

func aclSpec(in []ACLEntry) []*dfspb.AclEntry {
	out := make([]*dfspb.AclEntry, 0, len(in))
	for _, e := range in {
		out = append(out, &dfspb.AclEntry{Scope: dfspb.AclEntryScope(e.Scope), Type: dfspb.AclEntryType(e.Type), Name: e.Name, Permissions: uint32(e.Perm)})
	}
	return out
}

// ModifyACLEntries adds or changes entries of p's ACL.
func (f *FileSystem) ModifyACLEntries(ctx context.Context, p string, spec []ACLEntry) error {
	return f.aclCall("setfacl", p, func(p string) error {
		_, err := f.nn.ModifyAclEntries(ctx, &dfspb.ModifyAclEntriesRequest{Src: p, AclSpec: aclSpec(spec)})
		return err
	})
}

// RemoveACLEntries removes entries (their permissions are ignored).
func (f *FileSystem) RemoveACLEntries(ctx context.Context, p string, spec []ACLEntry) error {
	return f.aclCall("setfacl", p, func(p string) error {
		_, err := f.nn.RemoveAclEntries(ctx, &dfspb.RemoveAclEntriesRequest{Src: p, AclSpec: aclSpec(spec)})
		return err
	})
}

// RemoveDefaultACL removes p's default ACL.
func (f *FileSystem) RemoveDefaultACL(ctx context.Context, p string) error {
	return f.aclCall("setfacl", p, func(p string) error {
		_, err := f.nn.RemoveDefaultAcl(ctx, &dfspb.RemoveDefaultAclRequest{Src: p})
		return err
	})
}

// RemoveACL removes every entry beyond the mode bits.
func (f *FileSystem) RemoveACL(ctx context.Context, p string) error {
	return f.aclCall("setfacl", p, func(p string) error {
		_, err := f.nn.RemoveAcl(ctx, &dfspb.RemoveAclRequest{Src: p})
		return err
	})
}

// SetACL replaces p's ACL (a spec of only default entries keeps the access
// ACL).
func (f *FileSystem) SetACL(ctx context.Context, p string, spec []ACLEntry) error {
	return f.aclCall("setfacl", p, func(p string) error {
		_, err := f.nn.SetAcl(ctx, &dfspb.SetAclRequest{Src: p, AclSpec: aclSpec(spec)})
		return err
	})
}

func (f *FileSystem) aclCall(op, p string, call func(p string) error) error {
	p, err := cleanPath(p)
	if err != nil {
		return err
	}
	return mapError(op, p, call(p))
}

// GetACLStatus returns p's ACL.
func (f *FileSystem) GetACLStatus(ctx context.Context, p string) (ACLStatus, error) {
	p, err := cleanPath(p)
	if err != nil {
		return ACLStatus{}, err
	}
	r, err := f.nn.GetAclStatus(ctx, &dfspb.GetAclStatusRequest{Src: p})
	if err != nil {
		return ACLStatus{}, mapError("getfacl", p, err)
	}
	res := r.GetResult()
	st := ACLStatus{Owner: res.GetOwner(), Group: res.GetGroup(), Perm: uint16(res.GetPermission())}
	for _, e := range res.GetEntries() {
		st.Entries = append(st.Entries, ACLEntry{Scope: fsattr.ACLScope(e.GetScope()), Type: fsattr.ACLType(e.GetType()), Name: e.GetName(), Perm: uint16(e.GetPermissions())})
	}
	return st, nil
}

// AllowSnapshot makes dir snapshottable (superusers only).
func (f *FileSystem) AllowSnapshot(ctx context.Context, dir string) error {
	return f.aclCall("allowSnapshot", dir, func(p string) error {
		_, err := f.nn.AllowSnapshot(ctx, &dfspb.AllowSnapshotRequest{SnapshotRoot: p})
		return err
	})
}

// DisallowSnapshot makes dir unsnapshottable; it must have no snapshots.
func (f *FileSystem) DisallowSnapshot(ctx context.Context, dir string) error {
	return f.aclCall("disallowSnapshot", dir, func(p string) error {
		_, err := f.nn.DisallowSnapshot(ctx, &dfspb.DisallowSnapshotRequest{SnapshotRoot: p})
		return err
	})
}

// CreateSnapshot snapshots dir under name ("" for HDFS's default,
// sYYYYMMDD-HHMMSS.mmm) and returns the snapshot's path.
func (f *FileSystem) CreateSnapshot(ctx context.Context, dir, name string) (string, error) {
	var out string
	err := f.aclCall("createSnapshot", dir, func(p string) error {
		r, err := f.nn.CreateSnapshot(ctx, &dfspb.CreateSnapshotRequest{SnapshotRoot: p, SnapshotName: name})
		out = r.GetSnapshotPath()
		return err
	})
	return out, err
}

// DeleteSnapshot deletes a snapshot of dir.
func (f *FileSystem) DeleteSnapshot(ctx context.Context, dir, name string) error {
	return f.aclCall("deleteSnapshot", dir, func(p string) error {
		_, err := f.nn.DeleteSnapshot(ctx, &dfspb.DeleteSnapshotRequest{SnapshotRoot: p, SnapshotName: name})
		return err
	})
}

// RenameSnapshot renames a snapshot of dir.
func (f *FileSystem) RenameSnapshot(ctx context.Context, dir, from, to string) error {
	return f.aclCall("renameSnapshot", dir, func(p string) error {
		_, err := f.nn.RenameSnapshot(ctx, &dfspb.RenameSnapshotRequest{SnapshotRoot: p, SnapshotOldName: from, SnapshotNewName: to})
		return err
	})
}

// SnapshottableDir is a row of lsSnapshottableDir.
type SnapshottableDir struct {
	Dir       FileInfo
	Snapshots []string // by name
	Quota     int
}

// SnapshottableDirs lists the snapshottable directories the caller may
// see (all for a superuser, else the caller's own).
func (f *FileSystem) SnapshottableDirs(ctx context.Context) ([]SnapshottableDir, error) {
	r, err := f.nn.GetSnapshottableDirListing(ctx, &dfspb.GetSnapshottableDirListingRequest{})
	if err != nil {
		return nil, mapError("lsSnapshottableDir", "/", err)
	}
	var out []SnapshottableDir
	for _, d := range r.GetSnapshottableDirs() {
		out = append(out, SnapshottableDir{Dir: fileInfo(d.GetDirStatus()), Snapshots: d.GetSnapshotNames(), Quota: int(d.GetSnapshotQuota())})
	}
	return out, nil
}

// DiffEntry is a line of a snapshot diff: Kind "M", "+", "-" or "R",
// paths relative to the snapshot root.
type DiffEntry = fsattr.DiffEntry

// SnapshotDiff compares snapshots from and to of dir ("." for the current
// state).
func (f *FileSystem) SnapshotDiff(ctx context.Context, dir, from, to string) ([]DiffEntry, error) {
	p, err := cleanPath(dir)
	if err != nil {
		return nil, err
	}
	r, err := f.nn.GetSnapshotDiffReport(ctx, &dfspb.GetSnapshotDiffReportRequest{SnapshotRoot: p, FromSnapshot: from, ToSnapshot: to})
	if err != nil {
		return nil, mapError("snapshotDiff", p, err)
	}
	var out []DiffEntry
	for _, e := range r.GetDiffReport().GetDiffReportEntries() {
		out = append(out, DiffEntry{Kind: e.GetModificationLabel(), Path: e.GetFullpath(), Target: e.GetTargetPath()})
	}
	return out, nil
}

// StoragePolicy is a block storage policy (HDFS BlockStoragePolicy).
type StoragePolicy = fsattr.StoragePolicy

// SetStoragePolicy sets p's storage policy by name (HOT, COLD, WARM,
// ALL_SSD, ONE_SSD, LAZY_PERSIST, PROVIDED). It is a stored attribute:
// placement does not act on it yet.
func (f *FileSystem) SetStoragePolicy(ctx context.Context, p, policy string) error {
	return f.aclCall("setStoragePolicy", p, func(p string) error {
		_, err := f.nn.SetStoragePolicy(ctx, &dfspb.SetStoragePolicyRequest{Src: p, PolicyName: policy})
		return err
	})
}

// UnsetStoragePolicy removes p's own policy (it inherits again).
func (f *FileSystem) UnsetStoragePolicy(ctx context.Context, p string) error {
	return f.aclCall("unsetStoragePolicy", p, func(p string) error {
		_, err := f.nn.UnsetStoragePolicy(ctx, &dfspb.UnsetStoragePolicyRequest{Src: p})
		return err
	})
}

func policyOf(p *dfspb.BlockStoragePolicy) StoragePolicy {
	return StoragePolicy{ID: uint8(p.GetPolicyId()), Name: p.GetName(), StorageTypes: p.GetCreationPolicy(),
		CreationFallbacks: p.GetCreationFallbackPolicy(), ReplicationFallbacks: p.GetReplicationFallbackPolicy(), CopyOnCreateFile: p.GetCopyOnCreateFile()}
}

// GetStoragePolicy returns p's effective policy (its own or the nearest
// ancestor's); ok is false when none is set on it or above (HOT applies).
func (f *FileSystem) GetStoragePolicy(ctx context.Context, p string) (pol StoragePolicy, ok bool, err error) {
	p, err = cleanPath(p)
	if err != nil {
		return pol, false, err
	}
	r, err := f.nn.GetStoragePolicy(ctx, &dfspb.GetStoragePolicyRequest{Path: p})
	if err != nil {
		return pol, false, mapError("getStoragePolicy", p, err)
	}
	if r.GetStoragePolicy() == nil {
		return pol, false, nil
	}
	return policyOf(r.GetStoragePolicy()), true, nil
}

// StoragePolicies lists the policies the namenode knows.
func (f *FileSystem) StoragePolicies(ctx context.Context) ([]StoragePolicy, error) {
	r, err := f.nn.GetStoragePolicies(ctx, &dfspb.GetStoragePoliciesRequest{})
	if err != nil {
		return nil, mapError("listPolicies", "/", err)
	}
	var out []StoragePolicy
	for _, p := range r.GetPolicies() {
		out = append(out, policyOf(p))
	}
	return out, nil
}
