// Package httpserver builds every daemon's HTTP server (consoles, REST,
// WebHDFS, logs, the shuffle) with the same bounds, so that no peer can
// hold an HTTP port open for free (issue 23, hole 6):
//
//   - a request's header must arrive within ReadHeaderTimeout (10 s), so
//     a client trickling its header (slowloris) is dropped;
//   - a kept-alive connection with no request is closed after IdleTimeout
//     (60 s, Hadoop's hadoop.http.idle_timeout.ms);
//   - a request body or a response that makes no progress for IOTimeout
//     (60 s) ends the connection. The deadline moves on with every read
//     and write that moves bytes, rather than bounding the whole exchange
//     as http.Server's ReadTimeout and WriteTimeout do, so a WebHDFS
//     download or upload of any size works while it moves, and a peer
//     that stops reading or sending is cut;
//   - the connections open on the port are bounded, all of them and those
//     of one peer address (internal/connlimit), so one host cannot take
//     the port, or the process's descriptors, from the others.
//
// What a request may see is the handlers' business; the security headers
// every console page carries are internal/webui's.
package httpserver
