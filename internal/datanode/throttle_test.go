package datanode

import (
	"testing"
	"time"

	"smarth/internal/rpc/dfspb"
)

// TestBalancerMoveIsThrottled: a balancer move (a transfer marked
// balance) goes through the datanode's balance_bandwidth throttle — all
// of the block's bytes are counted there — and the throttle granted them
// no faster than its rate: bytes - burst <= rate x span, from its own
// accounting (a slow machine only lengthens the span, so this cannot
// fail from load). A re-replication of the same size is not paced.
func TestBalancerMoveIsThrottled(t *testing.T) {
	const bw = 512 << 10 // bytes per second
	nn := startFakeNameNode(t)
	src, _ := startDataNode(t, nn, "", func(c *Config) { c.BalanceBandwidth = bw })
	dst, _ := startDataNode(t, nn, "", nil)
	other, _ := startDataNode(t, nn, "", nil)
	data := randomData(24*pkt, 31) // 1.5 MiB: about three seconds at bw, after the burst
	writeBlock(t, 400, 1, data, src)
	blk := &dfspb.ExtendedBlock{BlockId: 400, GenerationStamp: 1, NumBytes: int64(len(data))}

	// Re-replication: not the balancer's, not paced.
	nn.command(src.ID(), &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Transfer{Transfer: &dfspb.TransferCommand{
		Items: []*dfspb.TransferCommand_Item{{Block: blk, Targets: []*dfspb.DatanodeInfo{other.Info()}}}}}})
	waitFor(t, "the re-replicated copy reported RECEIVED", func() bool {
		return nn.hasReceived(other.ID(), 400, 1, dfspb.ReceivedStatus_RECEIVED)
	})
	if st := src.balance.stats(); st.Bytes != 0 {
		t.Fatalf("a re-replication went through the balancer's throttle: %+v", st)
	}

	nn.command(src.ID(), &dfspb.DatanodeCommand{Command: &dfspb.DatanodeCommand_Transfer{Transfer: &dfspb.TransferCommand{
		Items: []*dfspb.TransferCommand_Item{{Block: blk, Targets: []*dfspb.DatanodeInfo{dst.Info()}, Balance: true}}}}})
	waitFor(t, "the moved copy reported RECEIVED", func() bool {
		return nn.hasReceived(dst.ID(), 400, 1, dfspb.ReceivedStatus_RECEIVED)
	})
	mustRead(t, dst, 400, 1, data)
	st := src.balance.stats()
	if st.Bytes < int64(len(data)) {
		t.Fatalf("the throttle counted %d bytes of a %d-byte move", st.Bytes, len(data))
	}
	if st.Rate != bw {
		t.Fatalf("throttle rate %d, want balance_bandwidth %d", st.Rate, bw)
	}
	// Allow a millisecond of clock granularity per second.
	least := time.Duration(float64(st.Bytes-int64(st.Burst)) / float64(bw) * float64(time.Second))
	if st.Span < least-least/1000 {
		t.Fatalf("throttle granted %d bytes in %v: faster than %d B/s allows (at least %v after a %d-byte burst)", st.Bytes, st.Span, bw, least, st.Burst)
	}
	t.Logf("%d bytes moved in %v at balance_bandwidth %d B/s (%.0f B/s)", st.Bytes, st.Span, bw, float64(st.Bytes)/st.Span.Seconds())
}

// TestThrottleOffWithoutBandwidth: balance_bandwidth 0 is no bound.
func TestThrottleOffWithoutBandwidth(t *testing.T) {
	if newThrottle(0) != nil {
		t.Fatal("balance_bandwidth 0 made a throttle")
	}
	if got := (*throttle)(nil).stats(); got != (throttleStats{}) {
		t.Fatalf("a nil throttle's stats: %+v", got)
	}
}
