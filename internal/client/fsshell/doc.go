// Package fsshell is what `smarth fs` does, like Hadoop's FsShell behind
// `hdfs dfs`: put and get of files and directory trees (stdin/stdout with
// "-"), cat, ls in HDFS's columns, mkdir, rm, mv, stat formats, du,
// setrep with waiting, fsck summaries, and progress bars for large
// transfers. It decides formats and the order of client calls; the
// file system work is internal/client's, flag parsing is cmd/smarth's.
//
// Errors read "put: /x: file exists": the command, the path, the reason,
// and still wrap the client's sentinels for errors.Is.
package fsshell
