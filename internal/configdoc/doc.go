// Package configdoc writes docs/config.md, the reference of the daemons'
// config files, from the code that defines them: the keys and their types
// from the typed configs in internal/daemonconf (and the structs they
// inline: pki.Config, httpserver.Limits, container.Policy), each key's
// default from its daemon's DefaultConfig, and its meaning from the
// field's doc comment, read from the Go source with go/parser. So the
// page cannot drift from the code: the package's test regenerates it in
// memory and fails, naming the command that rewrites it, when the file
// on disk differs.
//
// What it leaves to others: what the keys do (the daemons), which keys a
// file may hold and how launchers write them (internal/daemonconf). It
// imports the four daemons for their defaults, so it sits with the
// harness, above the engines.
package configdoc

//go:generate go test -run TestConfigDocIsCurrent -update .
