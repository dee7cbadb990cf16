package webhdfs

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"smarth/internal/fsattr"
	"smarth/internal/rpc/dfspb"
)

// ACLs, snapshots, storage policies, truncate and concat: thin
// translations to the namenode's RPCs of the same names.

// ---------------------------------------------------------------- ACLs

func aclEntryString(e *dfspb.AclEntry) string {
	return fsattr.ACLEntry{Scope: fsattr.ACLScope(e.GetScope()), Type: fsattr.ACLType(e.GetType()),
		Name: e.GetName(), Perm: uint16(e.GetPermissions())}.String()
}

func (c *call) getACLStatus() error {
	r, err := c.h.cfg.RPC.GetAclStatus(c.ctx, &dfspb.GetAclStatusRequest{Src: c.path})
	if err != nil {
		return err
	}
	s := r.GetResult()
	entries := []string{}
	for _, e := range s.GetEntries() {
		entries = append(entries, aclEntryString(e))
	}
	return c.json(map[string]any{"AclStatus": map[string]any{
		"entries": entries, "owner": s.GetOwner(), "group": s.GetGroup(), "stickyBit": s.GetSticky(),
		"permission": strconv.FormatUint(uint64(s.GetPermission()&0o7777), 8),
	}})
}

// aclSpec parses aclspec= as hdfs dfs -setfacl takes a spec; withPerm is
// false for REMOVEACLENTRIES, whose entries name no permissions.
func (c *call) aclSpec(withPerm bool) ([]*dfspb.AclEntry, error) {
	s := c.p.Str("aclspec")
	if s == "" {
		return nil, paramError("aclspec", "an ACL spec is required, e.g. user:bob:rwx,group::r-x")
	}
	spec, err := fsattr.ParseACLSpec(s, withPerm)
	if err != nil {
		return nil, paramError("aclspec", err.Error())
	}
	out := make([]*dfspb.AclEntry, 0, len(spec))
	for _, e := range spec {
		out = append(out, &dfspb.AclEntry{Scope: dfspb.AclEntryScope(e.Scope), Type: dfspb.AclEntryType(e.Type), Name: e.Name, Permissions: uint32(e.Perm)})
	}
	return out, nil
}

func (c *call) setACL() error {
	spec, err := c.aclSpec(true)
	if err != nil {
		return err
	}
	if _, err := c.h.cfg.RPC.SetAcl(c.ctx, &dfspb.SetAclRequest{Src: c.path, AclSpec: spec}); err != nil {
		return err
	}
	return c.ok()
}

func (c *call) modifyACLEntries() error {
	spec, err := c.aclSpec(true)
	if err != nil {
		return err
	}
	if _, err := c.h.cfg.RPC.ModifyAclEntries(c.ctx, &dfspb.ModifyAclEntriesRequest{Src: c.path, AclSpec: spec}); err != nil {
		return err
	}
	return c.ok()
}

func (c *call) removeACLEntries() error {
	spec, err := c.aclSpec(false)
	if err != nil {
		return err
	}
	if _, err := c.h.cfg.RPC.RemoveAclEntries(c.ctx, &dfspb.RemoveAclEntriesRequest{Src: c.path, AclSpec: spec}); err != nil {
		return err
	}
	return c.ok()
}

func (c *call) removeDefaultACL() error {
	if _, err := c.h.cfg.RPC.RemoveDefaultAcl(c.ctx, &dfspb.RemoveDefaultAclRequest{Src: c.path}); err != nil {
		return err
	}
	return c.ok()
}

func (c *call) removeACL() error {
	if _, err := c.h.cfg.RPC.RemoveAcl(c.ctx, &dfspb.RemoveAclRequest{Src: c.path}); err != nil {
		return err
	}
	return c.ok()
}

// ---------------------------------------------------------------- snapshots

func (c *call) snapshotName(name string) (string, error) {
	s := c.p.Str(name)
	if s == "" {
		return "", paramError(name, "a snapshot name is required")
	}
	return s, nil
}

func (c *call) allowSnapshot() error {
	if _, err := c.h.cfg.RPC.AllowSnapshot(c.ctx, &dfspb.AllowSnapshotRequest{SnapshotRoot: c.path}); err != nil {
		return err
	}
	return c.ok()
}

func (c *call) disallowSnapshot() error {
	if _, err := c.h.cfg.RPC.DisallowSnapshot(c.ctx, &dfspb.DisallowSnapshotRequest{SnapshotRoot: c.path}); err != nil {
		return err
	}
	return c.ok()
}

func (c *call) createSnapshot() error {
	r, err := c.h.cfg.RPC.CreateSnapshot(c.ctx, &dfspb.CreateSnapshotRequest{SnapshotRoot: c.path, SnapshotName: c.p.Str("snapshotname")})
	if err != nil {
		return err
	}
	return c.json(pathJSON(r.GetSnapshotPath()))
}

func (c *call) deleteSnapshot() error {
	name, err := c.snapshotName("snapshotname")
	if err != nil {
		return err
	}
	if _, err := c.h.cfg.RPC.DeleteSnapshot(c.ctx, &dfspb.DeleteSnapshotRequest{SnapshotRoot: c.path, SnapshotName: name}); err != nil {
		return err
	}
	return c.ok()
}

func (c *call) renameSnapshot() error {
	from, err := c.snapshotName("oldsnapshotname")
	if err != nil {
		return err
	}
	to, err := c.snapshotName("snapshotname")
	if err != nil {
		return err
	}
	_, err = c.h.cfg.RPC.RenameSnapshot(c.ctx, &dfspb.RenameSnapshotRequest{SnapshotRoot: c.path, SnapshotOldName: from, SnapshotNewName: to})
	if err != nil {
		return err
	}
	return c.ok()
}

// diffTypes maps the report's labels to Hadoop's DiffType names.
var diffTypes = map[string]string{"M": "MODIFY", "+": "CREATE", "-": "DELETE", "R": "RENAME"}

// diffPath is a report path as Hadoop's JSON carries it: relative to the
// snapshot root, without "./" ("" for the root itself).
func diffPath(p string) string {
	if p == "." {
		return ""
	}
	return strings.TrimPrefix(p, "./")
}

func (c *call) snapshotDiff() error {
	from, to := c.p.Str("oldsnapshotname"), c.p.Str("snapshotname")
	r, err := c.h.cfg.RPC.GetSnapshotDiffReport(c.ctx, &dfspb.GetSnapshotDiffReportRequest{SnapshotRoot: c.path, FromSnapshot: from, ToSnapshot: to})
	if err != nil {
		return err
	}
	d := r.GetDiffReport()
	list := []map[string]any{}
	for _, e := range d.GetDiffReportEntries() {
		m := map[string]any{"type": diffTypes[e.GetModificationLabel()], "sourcePath": diffPath(e.GetFullpath())}
		if e.GetTargetPath() != "" {
			m["targetPath"] = diffPath(e.GetTargetPath())
		}
		list = append(list, m)
	}
	return c.json(map[string]any{"SnapshotDiffReport": map[string]any{
		"diffList": list, "fromSnapshot": d.GetFromSnapshot(), "toSnapshot": d.GetToSnapshot(), "snapshotRoot": d.GetSnapshotRoot(),
	}})
}

func (c *call) snapshottable() ([]*dfspb.SnapshottableDirectoryStatus, error) {
	r, err := c.h.cfg.RPC.GetSnapshottableDirListing(c.ctx, &dfspb.GetSnapshottableDirListingRequest{})
	if err != nil {
		return nil, err
	}
	return r.GetSnapshottableDirs(), nil
}

func (c *call) snapshottableDirs() error {
	dirs, err := c.snapshottable()
	if err != nil {
		return err
	}
	list := []map[string]any{}
	for _, d := range dirs {
		st := d.GetDirStatus()
		p := st.GetPath()
		list = append(list, map[string]any{
			"dirStatus": FileStatus(st, p[strings.LastIndexByte(p, '/')+1:]), "parentFullPath": d.GetParentFullPath(),
			"snapshotNumber": d.GetSnapshotNumber(), "snapshotQuota": d.GetSnapshotQuota(),
		})
	}
	return c.json(map[string]any{"SnapshottableDirectoryList": list})
}

// snapshotList answers GETSNAPSHOTLIST for a snapshottable directory from
// the namenode's listing of them (snapshot ids are the order of the names).
func (c *call) snapshotList() error {
	dirs, err := c.snapshottable()
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if d.GetDirStatus().GetPath() != c.path {
			continue
		}
		list := []map[string]any{}
		for i, name := range d.GetSnapshotNames() {
			list = append(list, map[string]any{"dirStatus": FileStatus(d.GetDirStatus(), name),
				"fullPath": strings.TrimSuffix(c.path, "/") + "/.snapshot/" + name, "snapshotID": i, "deletionStatus": "ACTIVE"})
		}
		return c.json(map[string]any{"SnapshotList": list})
	}
	if _, err := c.stat(c.path); err != nil {
		return err
	}
	return Exception("SnapshotException", fmt.Sprintf("Directory is not a snapshottable directory: %s", c.path))
}

// ---------------------------------------------------------------- storage policies

func policyJSON(p *dfspb.BlockStoragePolicy) map[string]any {
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return map[string]any{
		"id": p.GetPolicyId(), "name": p.GetName(), "storageTypes": nonNil(p.GetCreationPolicy()),
		"creationFallbacks": nonNil(p.GetCreationFallbackPolicy()), "replicationFallbacks": nonNil(p.GetReplicationFallbackPolicy()),
		"copyOnCreateFile": p.GetCopyOnCreateFile(),
	}
}

func (c *call) allStoragePolicies() error {
	r, err := c.h.cfg.RPC.GetStoragePolicies(c.ctx, &dfspb.GetStoragePoliciesRequest{})
	if err != nil {
		return err
	}
	list := []map[string]any{}
	for _, p := range r.GetPolicies() {
		list = append(list, policyJSON(p))
	}
	return c.json(map[string]any{"BlockStoragePolicies": map[string]any{"BlockStoragePolicy": list}})
}

// hotPolicyID is HDFS's default policy, which applies where none is set.
const hotPolicyID = 7

func (c *call) getStoragePolicy() error {
	r, err := c.h.cfg.RPC.GetStoragePolicy(c.ctx, &dfspb.GetStoragePolicyRequest{Path: c.path})
	if err != nil {
		return err
	}
	p := r.GetStoragePolicy()
	if p == nil {
		all, err := c.h.cfg.RPC.GetStoragePolicies(c.ctx, &dfspb.GetStoragePoliciesRequest{})
		if err != nil {
			return err
		}
		for _, q := range all.GetPolicies() {
			if q.GetPolicyId() == hotPolicyID {
				p = q
			}
		}
	}
	return c.json(map[string]any{"BlockStoragePolicy": policyJSON(p)})
}

func (c *call) setStoragePolicy() error {
	name := c.p.Str("storagepolicy")
	if name == "" {
		return paramError("storagepolicy", "Policy name cannot be null or empty")
	}
	if _, err := c.h.cfg.RPC.SetStoragePolicy(c.ctx, &dfspb.SetStoragePolicyRequest{Src: c.path, PolicyName: name}); err != nil {
		return err
	}
	return c.ok()
}

func (c *call) unsetStoragePolicy() error {
	if _, err := c.h.cfg.RPC.UnsetStoragePolicy(c.ctx, &dfspb.UnsetStoragePolicyRequest{Src: c.path}); err != nil {
		return err
	}
	return c.ok()
}

// ---------------------------------------------------------------- truncate, concat

// truncate answers {"boolean": true} when the file is already at its new
// length, false while the last block is being recovered to it (HDFS).
func (c *call) truncate() error {
	if c.p.Str("newlength") == "" {
		return paramError("newlength", "newlength is required")
	}
	n, err := c.p.Long("newlength", 0, 0)
	if err != nil {
		return err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	r, err := c.h.cfg.RPC.Truncate(c.ctx, &dfspb.TruncateRequest{Path: c.path, NewLength: n, ClientName: "webhdfs-" + c.user + "-" + hex.EncodeToString(b[:])})
	if err != nil {
		return err
	}
	return c.json(boolean(r.GetReady()))
}

func (c *call) concat() error {
	var srcs []string
	for _, s := range strings.Split(c.p.Str("sources"), ",") {
		if s == "" {
			continue
		}
		p, err := CleanPath("sources", s)
		if err != nil {
			return err
		}
		srcs = append(srcs, p)
	}
	if len(srcs) == 0 {
		return paramError("sources", "no source paths")
	}
	if _, err := c.h.cfg.RPC.Concat(c.ctx, &dfspb.ConcatRequest{Target: c.path, Srcs: srcs}); err != nil {
		return err
	}
	return c.ok()
}
