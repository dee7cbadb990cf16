// Package replog is the namenode's edit log replicated over a group of
// namenodes (issue 28, namenode high availability): the leader is the
// active namenode; an edit is acknowledged only once a majority of the
// group has it on disk; followers apply every edit and are hot standbys.
//
// # The library: HashiCorp raft
//
// Consensus is github.com/hashicorp/raft (Consul, Nomad, Vault), not a
// home-made protocol, with HashiCorp's raft-wal as the log store. It was
// chosen over go.etcd.io/raft/v3 because it brings, tested together,
// everything etcd's raft leaves to the user: a network transport (we
// only supply a mutual-TLS stream layer), durable log and term/vote
// storage, snapshots and their install on a follower that lags or lost
// its disk, leadership transfer, joint-consensus-free single-server
// membership changes (AddVoter/RemoveServer), pre-vote, and a leader that
// steps down when it has not heard from a majority for
// LeaderLeaseTimeout (check quorum). Its batching matches the namenode:
// pending applies are stored with one write and sent in one
// AppendEntries. etcd's raft would give finer control of the pipeline,
// but every one of those pieces would be ours to write and to get right.
// raft-wal replaced raft-boltdb after measuring: bbolt's commit costs two
// fsyncs (pages, then the meta page), raft-wal's one, and a raft round
// on this machine's disk became 2.5-4x faster. raft v1.7.3 is the newest
// release that links with raft-boltdb v2 (raft v1.8 moved to a
// go-metrics without the compat package). The module is a copy in
// third_party/raft with one change (third_party/raft/SMARTH.md): the
// leader sends a batch to its followers while it writes the batch to its
// own log, and counts itself towards the commit once its write is done
// (raft thesis 10.2.1), so a commit waits for the slower of two fsyncs,
// not their sum (Config.SerialLeaderStore turns it off).
//
// Failover: followers start an election after 0.4-0.8 s without the leader
// (HeartbeatTimeout 400 ms), pre-vote keeps a node that was only cut off
// from raising terms, and the election takes a round trip. A killed
// leader is replaced, and its successor acknowledges writes, in about a
// second (see the tests' figures).
//
// # Group commit and the leader's speculative state
//
// The namenode applies an operation to memory under its lock and logs
// it before releasing the lock, then waits for durability outside it, and
// acknowledges only after. Append and Sync keep that shape: Append (under
// the caller's lock) gives the record the next txid and adds it to the
// open batch; Sync proposes the open batch as one raft entry when a
// slot is free (MaxInflight entries wait for commit at once, a second
// only while the first holds fewer than OverlapBelow records; meanwhile
// appends gather in the next batch) and returns when the entry is
// committed. With GatherWait (the namenode's ha_group_commit: gather) a
// free slot first waits, briefly, for the writers the last commit
// released to append again (gather in replog.go). A batch is framed records (batch.go), decoded with every
// length bounded by the bytes present.
//
// A leader's memory therefore runs ahead of the log, so its own records
// must not be applied twice: each leader stint has a random token
// (taken only after a barrier has applied every entry of earlier terms),
// every batch carries it, and the FSM skips records bearing its own
// current token. Every other record, on followers and on a restarted
// node replaying its log, goes to FSM.Apply with its txid. When the
// stint ends, Sync waiters fail with ErrNotLeader (the outcome is then
// unknown: the next leader may still commit the record, so clients retry
// idempotently, as HDFS's retry cache allows) and LeadershipLost
// delivers a Lost. If every record the stint appended was seen committed,
// memory equals the log and the node simply follows. Otherwise
// (Diverged) memory may hold operations the group will never have: the
// node stops applying, and the caller must Close and reopen with empty
// state, which restores the newest snapshot and replays the log.
//
// Snapshots are the namenode's image. raft labels a snapshot with the
// last applied entry, so the caller's state must be exactly at that
// txid: on followers it always is; on a leader with records waiting for
// commit it is ahead, and the snapshot is refused until a quiet moment
// (raft retries each SnapshotInterval). Under unbroken load the leader's
// log grows until then; followers snapshot normally and a new leader
// serves the newest snapshot it has to a follower that needs one.
//
// # Fencing and what is linearizable
//
// Raft's term is the fencing epoch (HDFS's QJM epoch): a node accepts
// entries only from the leader of the highest term it has seen, so a
// deposed leader (killed, frozen with SIGSTOP, cut off) can append
// nothing that commits, and its waiting Syncs fail. Writes are
// linearizable: acknowledged only once committed. A read is linearizable
// after VerifyLeader returns nil (a majority accepted a barrier entry of
// this leader's term after the read began, so no newer leader had been
// elected, let alone acknowledged anything, before the read). A read served from a leader's memory without it may
// see records not yet committed (as on today's single namenode and on
// HDFS's active, whose reads may see edits before logSync) or, on a
// leader frozen and resumed, miss newer writes. Follower reads are not
// linearizable.
//
// # Security
//
// The raft port speaks mutual TLS 1.3 only: both ends present
// certificates from the cluster CA (internal/pki), so a host without one
// can neither vote nor append. The data directory is 0700 and its
// files 0600 (internal/diskperm); raft's and raft-wal's own 0755/0644
// are narrowed as they are created.
//
// # Upgrade path
//
// Config.Bootstrap with SeedFromFSM starts a group from an existing
// namenode's loaded state: it is written as the group's first snapshot,
// and the other nodes receive it by snapshot install.
package replog
