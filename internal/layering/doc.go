// Package layering holds no code, only a test that keeps the package graph
// the shape docs/architecture.md draws: vocabulary and pure decisions at
// the bottom, wire formats above them, engines (daemons and the client)
// above those, harnesses on top, and cmd/smarth over everything. Daemons
// never import each other; they meet only through internal/rpc and
// internal/datatransfer.
package layering
