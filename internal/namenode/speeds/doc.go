// Package speeds keeps the transfer speeds that writing clients report to
// the namenode (SMARTH, seed 000 section III.B). The paper keeps them per
// client; here they belong to the client's host, its network position as
// the namenode sees it, so every process writing from a host (each `smarth
// fs put` is one) benefits from what the ones before measured. For every
// (host, datanode) pair it keeps a recent speed, an exponentially weighted
// moving average over the latest block transfers, and a historical one, all
// bytes over all time. SpeedAware placement reads the recent speeds;
// `smarth admin speeds` and the web UI show both, one row per host and
// datanode.
//
// It decides how samples combine and when a record ages out (no sample
// within the TTL: the datanode counts as unmeasured again, so a node once
// measured slow is retried, but only then); it leaves the measuring to the
// client and the use to internal/placement. It has its own lock, so client
// heartbeats never wait for the namespace lock.
package speeds
