// Package namespace is the namenode's directory tree: directories and files
// with owner, group, permission bits and times; files with their replication,
// block size, list of blocks and, while being written, the client holding
// the lease.
//
// It decides whether an operation is allowed and what it does: path syntax
// (absolute, no empty, ".", ".." components, no ":" or NUL), that parents
// are directories, HDFS permission checks (traverse, parent write, sticky
// bit, owner-only chmod, superuser-only chown, superuser bypass), and HDFS
// rename semantics (a directory destination means "move into it"; an
// existing file destination is an error), times (setTimes, and when an
// open should record an access time), name and space quotas (with their
// usage cached on the quota directory), and extended attributes
// (namespaces, flags, limits). Every operation is deterministic
// given the tree, its arguments and the time passed in, so that replaying
// the namenode's edit log rebuilds exactly the same tree, inode ids included.
//
// It leaves to others: durability (the namenode logs each successful
// operation before acknowledging it), leases and their expiry, block
// replicas (package blockmap; the tree only holds the file's ordered
// *blockmap.Block list), and locking (the namenode holds its lock around
// every call). The model is HDFS's FSDirectory and FSPermissionChecker.
package namespace
