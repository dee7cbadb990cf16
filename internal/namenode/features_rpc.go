package namenode

import (
	"context"
	"path"
	"strings"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/topology"
)

// ClientProtocol calls for ACLs, snapshots and storage policies. The
// namespace decides; these translate messages, log the edits and answer.

// HdfsFileStatus flags.
const (
	flagHasACL          = 1
	flagSnapshotEnabled = 8
)

// decorateLocked adds what the side structures know to a status: the ACL
// and snapshottable flags, the effective storage policy. Callers hold
// nn.mu.
func (nn *NameNode) decorateLocked(st *dfspb.FileStatus, n *namespace.INode) *dfspb.FileStatus {
	t := nn.state.Tree()
	if t.HasACL(n) {
		st.Flags |= flagHasACL
	}
	if n.IsDir() && t.IsSnapshottable(n) {
		st.Flags |= flagSnapshotEnabled
	}
	st.StoragePolicy = uint32(t.StoragePolicyOf(n))
	return st
}

func aclFromProto(in []*dfspb.AclEntry) []namespace.ACLEntry {
	out := make([]namespace.ACLEntry, 0, len(in))
	for _, e := range in {
		out = append(out, namespace.ACLEntry{Scope: namespace.ACLScope(e.GetScope()), Type: namespace.ACLType(e.GetType()),
			Name: e.GetName(), Perm: uint16(e.GetPermissions())})
	}
	return out
}

func aclToProto(in []namespace.ACLEntry) []*dfspb.AclEntry {
	out := make([]*dfspb.AclEntry, 0, len(in))
	for _, e := range in {
		out = append(out, &dfspb.AclEntry{Scope: dfspb.AclEntryScope(e.Scope), Type: dfspb.AclEntryType(e.Type),
			Name: e.Name, Permissions: uint32(e.Perm)})
	}
	return out
}

// changeACL logs and applies one of the five ACL operations.
func (nn *NameNode) changeACL(ctx context.Context, src string, kind namespace.ACLOp, spec []*dfspb.AclEntry) error {
	p, err := cleanPath(kind.String(), src)
	if err != nil {
		return err
	}
	for _, e := range spec {
		if e.GetPermissions() > 7 || e.GetType() > dfspb.AclEntryType_ACL_OTHER || e.GetScope() > dfspb.AclEntryScope_ACL_SCOPE_DEFAULT {
			return errInvalid("%s %s: invalid ACL entry %v", kind, p, e)
		}
	}
	if (kind == namespace.ACLModify || kind == namespace.ACLSet || kind == namespace.ACLRemoveEntries) && len(spec) == 0 {
		return errInvalid("%s %s: the ACL spec is empty", kind, p)
	}
	c := callerOf(ctx)
	op := &fsstate.ACL{Path: p, Op: kind, Entries: aclFromProto(spec)}
	if kind == namespace.ACLRemoveEntries {
		for i := range op.Entries {
			op.Entries[i].Perm = 0 // HDFS ignores them; logged without
		}
	}
	_, err = nn.mutate(kind.String(), p, c, op, nil, nil)
	return err
}

func (s *clientRPC) ModifyAclEntries(ctx context.Context, r *dfspb.ModifyAclEntriesRequest) (*dfspb.ModifyAclEntriesResponse, error) {
	return &dfspb.ModifyAclEntriesResponse{}, s.nn.changeACL(ctx, r.GetSrc(), namespace.ACLModify, r.GetAclSpec())
}

func (s *clientRPC) RemoveAclEntries(ctx context.Context, r *dfspb.RemoveAclEntriesRequest) (*dfspb.RemoveAclEntriesResponse, error) {
	return &dfspb.RemoveAclEntriesResponse{}, s.nn.changeACL(ctx, r.GetSrc(), namespace.ACLRemoveEntries, r.GetAclSpec())
}

func (s *clientRPC) RemoveDefaultAcl(ctx context.Context, r *dfspb.RemoveDefaultAclRequest) (*dfspb.RemoveDefaultAclResponse, error) {
	return &dfspb.RemoveDefaultAclResponse{}, s.nn.changeACL(ctx, r.GetSrc(), namespace.ACLRemoveDefault, nil)
}

func (s *clientRPC) RemoveAcl(ctx context.Context, r *dfspb.RemoveAclRequest) (*dfspb.RemoveAclResponse, error) {
	return &dfspb.RemoveAclResponse{}, s.nn.changeACL(ctx, r.GetSrc(), namespace.ACLRemoveAll, nil)
}

func (s *clientRPC) SetAcl(ctx context.Context, r *dfspb.SetAclRequest) (*dfspb.SetAclResponse, error) {
	return &dfspb.SetAclResponse{}, s.nn.changeACL(ctx, r.GetSrc(), namespace.ACLSet, r.GetAclSpec())
}

func (s *clientRPC) GetAclStatus(ctx context.Context, r *dfspb.GetAclStatusRequest) (*dfspb.GetAclStatusResponse, error) {
	p, err := cleanPath("getAclStatus", r.GetSrc())
	if err != nil {
		return nil, err
	}
	nn := s.nn
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	st, err := nn.state.Tree().GetACLStatus(callerOf(ctx), p)
	if err != nil {
		return nil, statusOf(err)
	}
	return &dfspb.GetAclStatusResponse{Result: &dfspb.AclStatus{Owner: st.Owner, Group: st.Group,
		Sticky: st.Perm&namespace.StickyBit != 0, Permission: uint32(st.Perm), Entries: aclToProto(st.Entries)}}, nil
}

// ---- snapshots

// snapshotOp cleans root and runs the snapshot record that record makes
// for the clean path.
func (nn *NameNode) snapshotOp(ctx context.Context, opName, root string, record func(path string) fsstate.Record) (fsstate.Applied, error) {
	p, err := cleanPath(opName, root)
	if err != nil {
		return fsstate.Applied{}, err
	}
	c := callerOf(ctx)
	op := record(p)
	var pre func() error
	if cs, ok := op.(*fsstate.CreateSnapshot); ok && cs.Snapshot == "" {
		// The default name comes from the clock, under the lock, so that
		// the record carries it.
		pre = func() error { cs.Snapshot = namespace.DefaultSnapshotName(nn.nowMs()); return nil }
	}
	return nn.mutateCall(loggedCall(ctx), opName, p, c, op, pre, nil)
}

func (s *clientRPC) AllowSnapshot(ctx context.Context, r *dfspb.AllowSnapshotRequest) (*dfspb.AllowSnapshotResponse, error) {
	_, err := s.nn.snapshotOp(ctx, "allowSnapshot", r.GetSnapshotRoot(), func(p string) fsstate.Record { return &fsstate.AllowSnapshot{Path: p} })
	return &dfspb.AllowSnapshotResponse{}, err
}

func (s *clientRPC) DisallowSnapshot(ctx context.Context, r *dfspb.DisallowSnapshotRequest) (*dfspb.DisallowSnapshotResponse, error) {
	_, err := s.nn.snapshotOp(ctx, "disallowSnapshot", r.GetSnapshotRoot(), func(p string) fsstate.Record { return &fsstate.DisallowSnapshot{Path: p} })
	return &dfspb.DisallowSnapshotResponse{}, err
}

func (s *clientRPC) CreateSnapshot(ctx context.Context, r *dfspb.CreateSnapshotRequest) (*dfspb.CreateSnapshotResponse, error) {
	return atMostOnce(ctx, s.nn, "createSnapshot", func(ctx context.Context) (*dfspb.CreateSnapshotResponse, error) {
		res, err := s.nn.snapshotOp(ctx, "createSnapshot", r.GetSnapshotRoot(), func(p string) fsstate.Record {
			return &fsstate.CreateSnapshot{Path: p, Snapshot: r.GetSnapshotName()}
		})
		if err != nil {
			return nil, err
		}
		return &dfspb.CreateSnapshotResponse{SnapshotPath: res.Path}, nil
	})
}

func (s *clientRPC) DeleteSnapshot(ctx context.Context, r *dfspb.DeleteSnapshotRequest) (*dfspb.DeleteSnapshotResponse, error) {
	if r.GetSnapshotName() == "" {
		return nil, errInvalid("deleteSnapshot %s: a snapshot name is required", r.GetSnapshotRoot())
	}
	return atMostOnce(ctx, s.nn, "deleteSnapshot", func(ctx context.Context) (*dfspb.DeleteSnapshotResponse, error) {
		_, err := s.nn.snapshotOp(ctx, "deleteSnapshot", r.GetSnapshotRoot(), func(p string) fsstate.Record {
			return &fsstate.DeleteSnapshot{Path: p, Snapshot: r.GetSnapshotName()}
		})
		return &dfspb.DeleteSnapshotResponse{}, err
	})
}

func (s *clientRPC) RenameSnapshot(ctx context.Context, r *dfspb.RenameSnapshotRequest) (*dfspb.RenameSnapshotResponse, error) {
	if r.GetSnapshotOldName() == "" || r.GetSnapshotNewName() == "" {
		return nil, errInvalid("renameSnapshot %s: the old and new snapshot names are required", r.GetSnapshotRoot())
	}
	return atMostOnce(ctx, s.nn, "renameSnapshot", func(ctx context.Context) (*dfspb.RenameSnapshotResponse, error) {
		_, err := s.nn.snapshotOp(ctx, "renameSnapshot", r.GetSnapshotRoot(), func(p string) fsstate.Record {
			return &fsstate.RenameSnapshot{Path: p, Snapshot: r.GetSnapshotOldName(), NewName: r.GetSnapshotNewName()}
		})
		return &dfspb.RenameSnapshotResponse{}, err
	})
}

func (s *clientRPC) GetSnapshottableDirListing(ctx context.Context, r *dfspb.GetSnapshottableDirListingRequest) (*dfspb.GetSnapshottableDirListingResponse, error) {
	nn := s.nn
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	resp := &dfspb.GetSnapshottableDirListingResponse{}
	for _, row := range nn.state.Tree().SnapshottableDirs(callerOf(ctx)) {
		st := &dfspb.SnapshottableDirectoryStatus{DirStatus: nn.decorateLocked(fileStatus(row.Dir), row.Dir),
			SnapshotQuota: namespace.MaxSnapshots, SnapshotNumber: uint32(len(row.Snapshots))}
		if p := row.Dir.Path(); p != "/" {
			st.ParentFullPath = path.Dir(p)
		}
		for _, sn := range row.Snapshots {
			st.SnapshotNames = append(st.SnapshotNames, sn.Name)
		}
		resp.SnapshottableDirs = append(resp.SnapshottableDirs, st)
	}
	return resp, nil
}

func (s *clientRPC) GetSnapshotDiffReport(ctx context.Context, r *dfspb.GetSnapshotDiffReportRequest) (*dfspb.GetSnapshotDiffReportResponse, error) {
	p, err := cleanPath("snapshotDiff", r.GetSnapshotRoot())
	if err != nil {
		return nil, err
	}
	nn := s.nn
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	diff, err := nn.state.Tree().SnapshotDiff(callerOf(ctx), p, r.GetFromSnapshot(), r.GetToSnapshot())
	if err != nil {
		return nil, statusOf(err)
	}
	rep := &dfspb.SnapshotDiffReport{SnapshotRoot: p, FromSnapshot: r.GetFromSnapshot(), ToSnapshot: r.GetToSnapshot()}
	for _, e := range diff {
		rep.DiffReportEntries = append(rep.DiffReportEntries, &dfspb.SnapshotDiffReportEntry{Fullpath: e.Path, ModificationLabel: e.Kind, TargetPath: e.Target})
	}
	return &dfspb.GetSnapshotDiffReportResponse{DiffReport: rep}, nil
}

// ---- storage policies

func policyProto(p namespace.StoragePolicy) *dfspb.BlockStoragePolicy {
	return &dfspb.BlockStoragePolicy{PolicyId: uint32(p.ID), Name: p.Name, CreationPolicy: p.StorageTypes,
		CreationFallbackPolicy: p.CreationFallbacks, ReplicationFallbackPolicy: p.ReplicationFallbacks, CopyOnCreateFile: p.CopyOnCreateFile}
}

func (nn *NameNode) setStoragePolicy(ctx context.Context, src string, id uint8) error {
	name := "setStoragePolicy"
	if id == namespace.PolicyUnspecified {
		name = "unsetStoragePolicy"
	}
	p, err := cleanPath(name, src)
	if err != nil {
		return err
	}
	c := callerOf(ctx)
	_, err = nn.mutate(name, p, c, &fsstate.SetStoragePolicy{Path: p, Policy: id}, nil, nil)
	return err
}

func (s *clientRPC) SetStoragePolicy(ctx context.Context, r *dfspb.SetStoragePolicyRequest) (*dfspb.SetStoragePolicyResponse, error) {
	pol, ok := namespace.PolicyByName(r.GetPolicyName())
	if !ok {
		var names []string
		for _, p := range namespace.StoragePolicies {
			names = append(names, p.Name)
		}
		return nil, errInvalid("setStoragePolicy %s: Cannot find a block policy with the name %s (known: %s)", r.GetSrc(), r.GetPolicyName(), strings.Join(names, ", "))
	}
	return &dfspb.SetStoragePolicyResponse{}, s.nn.setStoragePolicy(ctx, r.GetSrc(), pol.ID)
}

func (s *clientRPC) UnsetStoragePolicy(ctx context.Context, r *dfspb.UnsetStoragePolicyRequest) (*dfspb.UnsetStoragePolicyResponse, error) {
	return &dfspb.UnsetStoragePolicyResponse{}, s.nn.setStoragePolicy(ctx, r.GetSrc(), namespace.PolicyUnspecified)
}

func (s *clientRPC) GetStoragePolicy(ctx context.Context, r *dfspb.GetStoragePolicyRequest) (*dfspb.GetStoragePolicyResponse, error) {
	p, err := cleanPath("getStoragePolicy", r.GetPath())
	if err != nil {
		return nil, err
	}
	nn := s.nn
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	id, err := nn.state.Tree().GetStoragePolicy(callerOf(ctx), p)
	if err != nil {
		return nil, statusOf(err)
	}
	resp := &dfspb.GetStoragePolicyResponse{}
	if pol, ok := namespace.PolicyByID(id); ok {
		resp.StoragePolicy = policyProto(pol)
	}
	return resp, nil
}

func (s *clientRPC) GetStoragePolicies(ctx context.Context, r *dfspb.GetStoragePoliciesRequest) (*dfspb.GetStoragePoliciesResponse, error) {
	resp := &dfspb.GetStoragePoliciesResponse{}
	for _, p := range namespace.StoragePolicies {
		resp.Policies = append(resp.Policies, policyProto(p))
	}
	return resp, nil
}

// snapshotBlockLocked locates a block of a snapshot file: the replicas
// are those of the block in the block map (the live file's, or kept for
// snapshots), the length the frozen one, so that a reader stops where the
// file ended when the snapshot was taken even if the block grew since.
func (nn *NameNode) snapshotBlockLocked(frozen *blockmap.Block, off int64, client topology.Location) *dfspb.LocatedBlock {
	live := nn.state.Blocks().Get(frozen.ID)
	if live == nil {
		live = frozen // cannot happen while the reference counts hold; then no locations
	}
	lb := nn.locatedBlockLocked(live, off, client)
	lb.Block.NumBytes = frozen.NumBytes
	return lb
}
