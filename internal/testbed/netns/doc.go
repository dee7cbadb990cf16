// Package netns lets one process reach into the testbed's network
// namespaces without starting a process per connection: a socket created by
// a thread that has entered a namespace stays in that namespace for its
// whole life, so Listen and Dial enter it on a locked OS thread, create the
// socket, and return to the process's own namespace. `smarth testbed check`
// uses this to run senders and receivers in different hosts' namespaces
// from one process, and the testbed uses it to ask the namenode inside the
// testbed which datanodes registered.
//
// It also answers whether a pid lives in a namespace, so that teardown only
// ever signals processes inside the testbed's own namespaces.
//
// What it leaves to others: creating and deleting namespaces (iproute2, run
// by internal/testbed).
package netns
