// Package ipc is a lean RPC transport for the namenode, in the spirit of
// Hadoop IPC: one TCP (or TLS) connection per client process, on which
// calls are length-prefixed frames carrying a call id, the method name, the
// call's metadata, its deadline as a relative timeout and the protobuf
// request; replies carry the call id, a gRPC status code and message, and
// the protobuf response, in whatever order the handlers finish.
//
// It carries the generated gRPC services unchanged: Server implements
// grpc.ServiceRegistrar and runs each method's generated handler with the
// server's unary interceptor, delivering metadata as incoming
// metadata.MD and the remote address as a peer.Peer; Conn implements
// grpc.ClientConnInterface and returns status errors with gRPC's codes.
// Only unary methods are carried.
//
// Why not gRPC's own transport: on the namenode's small calls HTTP/2 costs
// more CPU than the namespace operation (HPACK, flow control, a reader and
// a writer goroutine handing frames around per call on each side). Here a
// connection has one reader goroutine per side; calls go to a pool of
// reused handler goroutines; replies (and requests) queued while one is
// being written leave together in the next write (writer.go), so a group
// commit's replies cost one system call.
//
// Mux lets gRPC and this transport share one port, TLS or not: it
// terminates TLS (ALPN "h2" or ALPN) and routes by the first bytes.
//
// Every length read from the network is checked against a limit before
// anything is allocated for it (frame.go); FuzzDecode covers the decoders.
// What one peer can make the server hold is bounded: MaxInFlight calls per
// connection, each holding its slot until its reply is written (a client
// that does not read stalls only itself); metadata checked as grpc-go
// checks it and a cache of 8 entries of at most 512 bytes; a 60 s write
// deadline on both ends (WriteTimeout); 60 s for the rest of a frame once
// its length arrived; idle connections sent away after IdleTimeout (2-3
// minutes). Across connections: at most MaxCalls (1024) calls handled at
// once, a reader waiting for a slot while they are taken (server.go), and
// Mux bounds the connections open on its port, gRPC's and IPC's together
// (DefaultMaxConns: 4096) and per peer address (DefaultMaxConnsPerHost:
// 1024), closing the ones beyond at accept. A Server
// given a listener of its own has no connection bound.
//
// Cancellation: a connection that breaks or that the client closes
// cancels the contexts of its calls, as gRPC's transport does. A caller
// that gives up (its context ends) stops waiting, but there is no cancel
// frame: as in Hadoop IPC the server finishes the call. The namenode's
// handlers are short and wait on locks and the journal's group commit,
// not on their context, so a cancel would save no work while costing a
// per-call registry on the server's hot path.
package ipc
