// Package connlimit bounds the connections a listening port holds open:
// all of them, and those of one peer address, counted from accept to
// close. A connection beyond either bound is reset as soon as it is
// accepted, before any handshake or byte is read, so a flood from one host
// costs the server a descriptor for an instant and never shuts out the
// other hosts (issue 23, holes 6 and 7).
//
// Gate is the counting, shared by every kind of port: the namenode's RPC
// mux (internal/ipc) admits through one, and Listener wraps any
// net.Listener (the daemons' HTTP ports, the datanode's data port) with
// one. What a connection may then do, and for how long, is the server's
// business (timeouts live with the protocol: internal/httpserver for HTTP,
// io_timeout on the data port).
package connlimit
