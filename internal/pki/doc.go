// Package pki holds the wire's TLS switch: the config keys every daemon
// shares (tls, tls_cert_file, tls_key_file, tls_ca_file), the server and
// client tls.Configs made from them, listeners and gRPC options that use
// them, and a small certificate authority that the local cluster and the
// testbed run to give each daemon a certificate.
//
// What it decides: one switch for all of a daemon's sockets (gRPC, the
// data-transfer protocol, the shuffle, every HTTP server), TLS 1.3 only
// (no suite choices to get wrong), ECDSA P-256 keys, which names a
// certificate covers (127.0.0.1, localhost and the daemon's configured
// host), and that clients verify servers against the cluster's CA, never
// the system roots: a cluster's CA vouches for its own daemons only.
//
// What it leaves to others: who the caller is. Identity stays with
// internal/auth (tokens) and internal/blocktoken; TLS here protects those
// credentials and the data in flight from eavesdroppers and
// man-in-the-middle. Clients present no certificates (see
// docs/security.md, "Not protected yet").
package pki
