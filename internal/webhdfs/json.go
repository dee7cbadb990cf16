package webhdfs

import (
	"strconv"

	"smarth/internal/rpc/dfspb"
)

// FileStatus is the JSON map of one file or directory, with the fields
// and types of Hadoop's JsonUtil.toJsonMap(HdfsFileStatus): numbers as
// numbers, the permission as an octal string (sticky bit included: "1777"),
// replication and block size 0 for directories.
func FileStatus(st *dfspb.FileStatus, suffix string) map[string]any {
	typ := "FILE"
	if st.GetType() == dfspb.FileType_DIRECTORY {
		typ = "DIRECTORY"
	}
	m := map[string]any{
		"pathSuffix":       suffix,
		"type":             typ,
		"length":           st.GetLength(),
		"owner":            st.GetOwner(),
		"group":            st.GetGroup(),
		"permission":       strconv.FormatUint(uint64(st.GetPermission()&0o7777), 8),
		"accessTime":       st.GetAccessTimeMs(),
		"modificationTime": st.GetModificationTimeMs(),
		"blockSize":        st.GetBlockSize(),
		"replication":      st.GetReplication(),
		"fileId":           st.GetFileId(),
		"childrenNum":      st.GetChildrenNum(),
		"storagePolicy":    0, // BLOCK_STORAGE_POLICY_ID_UNSPECIFIED
	}
	if typ == "DIRECTORY" {
		m["replication"], m["blockSize"] = 0, 0
	}
	// Fields the namespace grows (ACLs, snapshots, storage policies) are
	// read when the message has them, so this file need not change with
	// each: Hadoop sets aclBit and snapshotEnabled only when true.
	var msg any = st
	if a, ok := msg.(interface{ GetAclBit() bool }); ok && a.GetAclBit() {
		m["aclBit"] = true
	}
	if s, ok := msg.(interface{ GetSnapshotEnabled() bool }); ok && s.GetSnapshotEnabled() {
		m["snapshotEnabled"] = true
	}
	if p, ok := msg.(interface{ GetStoragePolicy() uint32 }); ok {
		m["storagePolicy"] = p.GetStoragePolicy()
	}
	return m
}

// boolean is {"boolean": b}.
func boolean(b bool) map[string]any { return map[string]any{"boolean": b} }

// pathJSON is {"Path": p}.
func pathJSON(p string) map[string]any { return map[string]any{"Path": p} }
