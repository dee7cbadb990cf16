// Package tput is the small TCP throughput test behind `smarth testbed
// check`: a sender streams bytes to a receiver for a fixed time, and the
// receiver, which sees what really arrived, counts the bytes after a
// warm-up (TCP slow start and the shaper's initial burst) and reports them
// with the time they took. That is goodput: TCP payload, without the IP,
// TCP and Ethernet headers the shaper also counts (66 of a full-size
// frame's 1514 bytes). Result.WireRate adds them back from the sender's
// MSS, giving the rate the link carried, which is what compares with a
// configured link rate.
//
// What it decides: the wire format of the test (a 16-byte header from the
// sender, a 24-byte report from the receiver) and how the window is timed.
// It leaves running it inside namespaces, and comparing with the
// configured rates, to internal/testbed.
package tput
