// Package namenode is the metadata server of the smarth file system: the
// namespace, the block map, leases, datanode liveness, replica placement,
// re-replication, safe mode, and the client speed records of SMARTH.
//
// Shape (HDFS's FSNamesystem, cut into pure parts):
//
//   - namespace/ and blockmap/ are pure state machines; fsstate/ joins
//     them with the cache pools and directives into the state the edit
//     log and images rebuild, and holds the edit-log records (one type per
//     kind), their codec and the image. This package holds one lock
//     (NameNode.mu) around that state and everything else it tracks:
//     RPC, identity, leases, datanodes, replication, safe mode, caching.
//   - Every mutation builds a record (&fsstate.Create{...}), applies it in
//     memory under the lock (fsstate.State.Apply, the same code replay
//     runs), appends its encoding to the edit log (journal/) under the
//     same lock, and is acknowledged only after journal.Sync, which runs
//     outside the lock so that concurrent mutations share one fdatasync
//     (group commit). The record carries times, ids and stamps, so replay
//     rebuilds the identical state.
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
//     CacheAccess's affinity is the caller's learned estimate for the app
//     (cachemgr/affinity.go, cache_affinity_source learned) once enough
//     reads back it, else the request's when >= 0, else
//     cache_affinity[app], else 0. Cache pools and directives are
//     namespace edits (fsstate's cache records), which cachemgr asks this
//     package to authorize, log and apply (views.go).
//   - High availability (ha.go, issue 28; off unless ha_id is set): the
//     edit log is then replog/, a raft group of namenodes, behind the
//     same editLog interface as journal/; the leader is the active
//     namenode, the others apply its committed edits and refuse client
//     calls with HDFS's StandbyException (internal/rpc/standby) while
//     serving the datanode protocol.
//
// The RPC contract is internal/rpc/dfspb (ClientProtocol and
// DatanodeProtocol on one port, over gRPC and internal/ipc). identity.go
// establishes the caller (docs/security.md): in secure mode the signed
// credential under metadata key "smarth-auth" names the user, in simple
// mode the asserted "smarth-user" is trusted ("smarth" when missing), as
// Hadoop's simple auth; a proxy user may act for another
// ("smarth-proxy-user"). Groups are resolved here, never taken from the
// caller: the config's groups table, else the user's OS groups on the
// namenode's host, else none. The HTTP port serves the web console
// (console/: the overview at /, the file browser and manager, the
// journal, /healthz, /conf), Prometheus metrics at /metrics and WebHDFS.
// cachemgr/ and console/ read this package through interfaces they
// define, implemented in views.go.
//
// It leaves to others: storing bytes (datanode), pipelines and retries
// (client), and starting processes (cmd/smarth, cluster launcher).
package namenode
