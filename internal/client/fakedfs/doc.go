// Package fakedfs is a test double of a smarth cluster for the client's
// tests: a namenode that allocates blocks deterministically and records
// every call, and datanodes that speak the real data-transfer protocol
// (pipelines, acks, FNFA, recovery, TRANSFER_BLOCK, reads) with faults on
// command (die after N bytes, hold acks, corrupt reads). It decides
// nothing for production code and is imported only by tests.
package fakedfs
