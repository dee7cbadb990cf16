// Package webhdfs serves Hadoop's WebHDFS REST API (the "WebHDFS REST
// API" page of the Hadoop docs is the contract) on the namenode's HTTP
// port: /webhdfs/v1/<path>?op=..., JSON bodies shaped exactly as Hadoop's
// (FileStatus with the permission as an octal string, RemoteException
// with exception, javaClassName and message and the matching HTTP
// status), so Hadoop's WebHdfsFileSystem, Python's HdfsCLI, Spark and curl
// scripts work against smarth unchanged.
//
// The namenode side (Handler) answers metadata operations by calling the
// namenode's own ClientProtocol implementation in process, with the
// caller established as the gRPC server establishes it (Authority), so
// WebHDFS and RPC clients pass the same permission checks. Operations that
// move file bytes (CREATE, APPEND, OPEN, GETFILECHECKSUM) are redirected
// (307, or {"Location"} with noredirect=true) to a datanode's HTTP port,
// where package datanode/webhdfs moves the bytes through the ordinary
// client. The redirect carries a short-lived token the namenode signed for the
// authenticated user, never a user name a datanode would have to trust.
//
// This package decides the wire shapes and the authentication of HTTP
// callers; what an operation means is the namenode's business.
package webhdfs
