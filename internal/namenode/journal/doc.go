// Package journal makes the namenode's metadata durable: an append-only edit
// log with group commit, plus checkpoint images, in one directory.
//
// Records are opaque payloads numbered by a transaction id (txid) and framed
// with their length and a CRC32C. Appending is cheap and done under the
// caller's lock, so the log order is the order in which the caller applied
// the operations; Sync, called after the lock is released, makes every
// record up to a txid durable with one write shared by all callers
// waiting at that moment (HDFS FSEditLog's group commit). An operation is
// acknowledged only after its Sync returns. On OS that write is direct and
// synchronous (O_DIRECT|O_DSYNC, see directFile) unless OS.Buffered asks
// for HDFS's page cache write and fdatasync, or the file system refuses
// direct I/O.
//
// A checkpoint rolls the log to a new segment at txid T, writes an image of
// the caller's state at T (temp file, fsync, rename, fsync dir), and then
// removes the segments and images the new image makes redundant. Load reads
// the newest image and replays the records after it; a torn or corrupt
// record at the very end of the last segment (an append that never
// finished, so was never acknowledged) is cut off, anywhere else it is an
// error.
//
// Files go through the FS interface: OS for real directories, MemFS for
// tests, which simulates a crash by keeping only what was synced.
//
// It decides nothing about what the records mean; the namenode encodes its
// operations and its image records itself.
package journal
