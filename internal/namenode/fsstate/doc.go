// Package fsstate is the namenode's replicated state machine: the
// namespace tree, the block map (ids, stamps, lengths, states; never
// replica locations, which datanodes report) and the cache pools and
// directives, together with the edit-log records that change them, their
// binary codec, and the image (checkpoint) that saves and restores them.
//
// Each record kind is a Go type of its own (Mkdirs, Create, AddBlock,
// Complete, Rename2, SetTypeQuota, ACL, CreateSnapshot, Truncate, ...)
// holding only its fields, with methods to encode, decode and apply
// itself; every kind is listed once, in the kinds map of records.go. Kind
// numbers and field layouts are on disk and never change (the golden files
// in testdata/golden pin them). A record carries everything its apply
// needs (times, ids, stamps), so applying it never consults a clock or a
// counter.
//
// Why a package of its own: it is the first step of namenode high
// availability. The leader builds a record, applies it with State.Apply
// (with the caller's permissions), and makes Encode(record) durable; a
// follower, or a restart replaying the edit log, hands the same bytes to
// State.ApplyEdit, which decodes them and runs the same apply code, so
// both reach the same state. When the records become raft log entries,
// only how they are made durable changes, not what they do. Image and
// LoadImage (EachImageRecord for streaming) are the state's snapshot.
//
// State has no lock: its owner serialises Apply, ApplyEdit and Image with
// its own reads (the namenode's NameNode.mu). Decoding input from disk is
// bounded before it allocates (dec.count, maxDecodedString); a corrupt
// record is an error naming what is wrong, never a panic.
//
// It leaves to the server (package namenode): RPC and identity, leases,
// datanodes and replica locations, replication, safe mode, the cache
// manager's plan, and the journal files themselves (package journal).
package fsstate
