// Package memcache holds whole finalized block replicas in memory for a
// datanode, as HDFS's FsDatasetCache does (centralized cache management,
// and the in-memory caching of seed 003): the block's data and the CRC32C
// checksums of its meta file, so a read of a cached replica is served
// without touching the disk.
//
// What it decides: how much memory is in use (never more than the
// capacity: a block is reserved before it is filled, and its bytes stay
// counted until its memory is really returned), which blocks are cached
// (only fully filled ones the caller committed), and when memory can be
// returned (the last reader lets go). What it leaves to others: which
// blocks to cache (the namenode's cache manager), reading and verifying the
// replica (the datanode fills a reservation and commits it only after every
// chunk matched its checksum), and noticing that a replica changed (the
// datanode calls Uncache when the store reports a change).
//
// # Memory: anonymous mmap, mlock when allowed
//
// Each block lives in its own anonymous private mapping (mmap with
// MAP_ANONYMOUS), not in a Go slice from make:
//   - the Go garbage collector neither scans nor accounts for it, so a few
//     GiB of cached blocks cost no GC work and do not double GOGC's heap
//     target;
//   - uncaching returns the memory to the kernel at once (munmap), instead
//     of whenever the runtime scavenger gets to it — the capacity the
//     namenode plans with is real memory;
//   - the block is then mlocked, as HDFS does, so the kernel cannot swap
//     it out and a "cached" read can never turn into a disk read. HDFS maps
//     the block file itself and mlocks that; we copy instead because the
//     copy is what we verify (a later change of the file on disk cannot
//     reach the cached bytes) and because it needs no open file per block.
//
// mlock needs CAP_IPC_LOCK or an RLIMIT_MEMLOCK at least the capacity
// (often only 8 MiB for ordinary users). HDFS refuses to start without it;
// we keep caching without the lock instead (Stats.Unlocked counts such
// blocks and the datanode warns once), because on the machines this runs
// on there is no swap, so unlocked anonymous memory cannot be paged out
// either and the only difference is a guarantee, not the behaviour.
//
// Readers hold a reference (Get, then Block.Release); Uncache removes a
// block from the cache at once but its mapping is unmapped only when the
// last reader releases it, so a read in progress never sees freed memory.
package memcache
