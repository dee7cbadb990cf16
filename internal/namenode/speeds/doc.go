// Package speeds keeps the transfer speeds that writing clients report to
// the namenode (SMARTH, seed 000 section III.B): for every (client,
// datanode) pair a recent speed, an exponentially weighted moving average
// over the latest block transfers, and a historical one, all bytes over all
// time. SpeedAware placement reads the recent speeds; `smarth admin speeds`
// and the web UI show both.
//
// It decides how samples combine and when a silent client is forgotten; it
// leaves the measuring to the client and the use to internal/placement. It
// has its own lock, so client heartbeats never wait for the namespace lock.
package speeds
