// Package demo is `smarth demo`, the README's first command: on a machine
// with nothing but Go it starts a local cluster, uploads a generated file,
// lists it, reads it back and checks its SHA-256, runs a WordCount job when
// the MapReduce runtime is present, and takes the cluster down again.
//
// It decides only the story and its output: each step says what it does
// and what came out. Starting and stopping the cluster is internal/cluster;
// the file system is internal/client.
//
// It follows no paper: it shows the Hadoop baseline working end to end
// (hdfs dfs -put/-ls/-get and the WordCount example), the ground every
// improvement in DESIGN.md is measured against.
package demo
