// Package layering holds no code, only a test that keeps the package graph
// the shape docs/architecture.md draws ("Packages and layers"): the test
// reads that section's tables, which give every package of the module a
// layer (vocabulary, pure decisions, wire, engines, harnesses, cmd from
// the bottom up), and allows a package to import only packages of lower
// layers and the packages of its own layer its row names. It fails on any
// other import, on a package without a row, on a row without a package and
// on a listed import the code no longer makes, so the doc and the graph
// are one source. Folders show layers: a package may not sit under the
// folder of a lower layer's package unless only tests import it. Whatever the rows say, daemons never depend on each
// other (they meet only through internal/rpc and internal/datatransfer),
// the namenode never on the client, and neither the client, MapReduce nor
// the process launchers on a daemon.
package layering
