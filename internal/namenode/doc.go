// Package namenode is the metadata server of the smarth file system: the
// namespace, the block map, leases, datanode liveness, replica placement,
// re-replication, safe mode, and the client speed records of SMARTH.
//
// Shape (HDFS's FSNamesystem, cut into pure parts):
//
//   - namespace/ and blockmap/ are pure state machines; this package holds
//     one lock (NameNode.mu) around them and everything else it tracks.
//   - Every mutation is applied in memory under the lock, appended to the
//     edit log (journal/) under the same lock, and acknowledged only after
//     journal.Sync, which runs outside the lock so that concurrent
//     mutations share one fdatasync (group commit). The record carries
//     times, ids and stamps, so replay rebuilds the identical state.
//   - Replica locations are never persisted; datanodes report them
//     (full block reports, incremental received/deleted reports), and the
//     namenode starts in safe mode until enough blocks are reported.
//   - Decisions without I/O live in pure packages: placement.Policy
//     (RackAware, HDFS's default; SpeedAware, SMARTH Algorithm 1) and
//     speeds (recent and historical client-host→datanode speeds, kept
//     per host so every process on it learns from the ones before).
//   - Clients are placed by the topology mapping (clientplace.go): by the
//     address of their calls, then their reported name, outside the lock,
//     since a topology script may run.
//   - Commands to datanodes (transfer, invalidate, recover, cache,
//     uncache) are queued per datanode and delivered in heartbeat replies.
//   - In-memory caching (seed 003): cachemgr/ keeps a plan from the pure
//     internal/cache policies (cache_policy) and reconciles it with the
//     datanodes' cache reports; only a report counts as cached. A
//     CacheAccess's affinity is the request's when >= 0, else
//     cache_affinity[app], else 0. Cache pools and directives are
//     namespace edits (cachedirs.go), which cachemgr asks this package to
//     authorize, log and apply (views.go).
//
// The RPC contract is internal/rpc/dfspb (ClientProtocol and
// DatanodeProtocol on one gRPC port); the caller's identity is the gRPC
// metadata key "smarth-user" ("smarth" when missing), with optional
// comma-separated "smarth-groups" (default: a group named like the user).
// The HTTP port serves the web console (console/: the overview at /, the
// file browser and manager, the journal), Prometheus metrics at /metrics
// and WebHDFS. cachemgr/ and console/ read this package through
// interfaces they define, implemented in views.go.
//
// It leaves to others: storing bytes (datanode), pipelines and retries
// (client), and starting processes (cmd/smarth, cluster launcher).
package namenode
