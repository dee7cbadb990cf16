package namenode

import (
	"testing"
	"time"
)

// The placement estimate: scheduled blocks count until received, received
// ones until the next heartbeat, and a scheduled block never received is
// forgotten after scheduledTimeout.
func TestSpaceEstimate(t *testing.T) {
	var s spaceEstimate
	now := time.Unix(1000, 0)
	s.schedule(1, 100, now)
	s.schedule(2, 100, now)
	s.schedule(2, 100, now) // the same block again (a retried addBlock) counts once
	if got := s.remaining(1000); got != 800 {
		t.Fatalf("two blocks of 100 scheduled on 1000: %d, want 800", got)
	}
	s.receivedReplica(1, 60) // a block that came out shorter than its size
	if got := s.remaining(1000); got != 840 {
		t.Fatalf("one received with 60 bytes: %d, want 840", got)
	}
	s.heartbeat(now.Add(time.Second)) // the heartbeat's 1000 now includes the 60 bytes
	if got := s.remaining(940); got != 840 {
		t.Fatalf("after a heartbeat reporting 940: %d, want 840 (block 2 still scheduled)", got)
	}
	s.heartbeat(now.Add(scheduledTimeout + 2*time.Second))
	if got := s.remaining(940); got != 940 {
		t.Fatalf("block 2 never received, past scheduledTimeout: %d, want 940", got)
	}
}
