package webhdfs

import (
	"strconv"

	"smarth/internal/rpc/dfspb"
)

// HdfsFileStatus flags in dfs.proto's FileStatus.flags.
const (
	flagHasACL          = 1
	flagSnapshotEnabled = 8
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
	}
	if typ == "DIRECTORY" {
		m["replication"], m["blockSize"] = 0, 0
	}
	// Hadoop sets aclBit and snapshotEnabled only when true.
	if st.GetFlags()&flagHasACL != 0 {
		m["aclBit"] = true
	}
	if st.GetFlags()&flagSnapshotEnabled != 0 {
		m["snapshotEnabled"] = true
	}
	m["storagePolicy"] = st.GetStoragePolicy()
	return m
}

// boolean is {"boolean": b}.
func boolean(b bool) map[string]any { return map[string]any{"boolean": b} }

// pathJSON is {"Path": p}.
func pathJSON(p string) map[string]any { return map[string]any{"Path": p} }
