// Package fsshell is what `smarth fs` does, like Hadoop's FsShell behind
// `hdfs dfs`: put and get of files and directory trees (stdin/stdout with
// "-"), cat/text/head/tail, ls in HDFS's columns, mkdir, rm, rmdir, mv,
// cp, touchz, test, find, stat formats, du, count, df, chmod/chown/chgrp,
// setrep with waiting, fsck summaries, and progress bars for large
// transfers. It decides formats and the order of client calls; the file
// system work is internal/client's, flag parsing is cmd/smarth's.
//
// Paths are resolved here as hdfs dfs resolves them: relative ones from
// the home directory /user/USER, hdfs:// and smarth:// URIs stripped to
// their path (cmd/smarth picks the namenode they name), globs expanded
// against the namespace (glob.go).
//
// Errors read as hdfs dfs words them, "put: `/x': File exists": the
// command, the path as the user typed it, HDFS's words for the kind, and
// they still wrap the client's sentinels for errors.Is.
package fsshell
