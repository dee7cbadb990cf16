// Package client is smarth's file system client: the Go API that the CLI
// (`smarth fs`), the MapReduce runtime, benchmarks and tests use to talk
// to a namenode (gRPC ClientProtocol) and to datanodes (the streaming
// data-transfer protocol of internal/datatransfer).
//
// What it decides:
//   - Error mapping: namenode status codes become *PathError values that
//     wrap io/fs sentinels (fs.ErrNotExist, fs.ErrExist, fs.ErrPermission,
//     fs.ErrInvalid) or this package's (ErrNotEmpty, ErrNotDir, ErrIsDir,
//     ErrNoDatanodes, ...), with messages like "open /a/b: no such file or
//     directory".
//   - Writing: FileWriter cuts bytes into 64 KiB packets with a CRC32C per
//     512-byte chunk, computed in the caller's goroutine into a pooled
//     buffer, and hands them to a pipeline.Stream whose Strategy is
//     Classic (HDFS) or Multi (SMARTH, seed 000 sections III-IV). Close
//     waits for every acknowledgement and completes the file, retrying
//     Complete while replicas are not yet reported. A file is never
//     complete unless Close returned nil. Abort deletes the file.
//   - Leases: one renewal goroutine per FileSystem while files are open.
//   - Speed records (SMARTH): each block's transfer time to its first
//     datanode is sent to the namenode every 3 s (ClientHeartbeat).
//   - Reading: FileReader picks the closest replica the namenode lists,
//     verifies every packet's checksums, fails over to the next replica on
//     an error or mismatch (reporting mismatches with ReportBadBlocks),
//     remembers failed nodes per reader and fetches locations again when
//     all replicas of a block failed. ReadAt is safe for concurrent use.
//
// What it leaves to others: placement and replication (namenode), the
// wire encoding (internal/datatransfer), pipeline mechanics and recovery
// (internal/client/pipeline).
package client
