package client

import (
	"bytes"
	"testing"
	"time"
)

// In multipipeline-concurrent mode the next block starts on another first
// datanode without waiting for the current one's FNFA: with the first
// pipeline's datanodes not reading at all (no FNFA can come), the second
// block is opened on other datanodes and stored there in full. The file
// then completes byte-exact once the first pipeline reads again. The same
// hold stops multipipeline-paper at block 1 (the control below).
func TestConcurrentFirstHopsInFlight(t *testing.T) {
	c := newFake(t, 6, "multipipeline-concurrent") // n = 6/3 = 2 pipelines
	// Every datanode measured alike (as on one loopback): block 1's first
	// hop is no slower than any, so the next block may start at once.
	for _, d := range c.dns {
		c.fs.speeds.book.Seed(d.Info.GetId(), 100e6, time.Now())
	}
	var releases []func()
	for _, d := range c.dns[:3] { // pipeline 1 is dn1 dn2 dn3 in some order
		r := d.HoldReceive()
		releases = append(releases, r)
		t.Cleanup(r)
	}
	data := testData(3*testBlock+5, 21)
	done := asyncPut(t, c.fs, "/c", data)
	var second uint64
	waitFor(t, "block 2 stored in full on a first datanode of dn4-dn6 while block 1's pipeline reads nothing", func() bool {
		blocks, _ := c.nn.FileBlocks("/c")
		if len(blocks) < 2 {
			return false
		}
		second = blocks[1].GetBlockId()
		for _, d := range c.dns[3:] {
			if got, _, _, ok := d.Replica(second); ok && len(got) == testBlock {
				return true
			}
		}
		return false
	})
	blocks, _ := c.nn.FileBlocks("/c")
	for _, d := range c.dns[:3] {
		if got, _, fin, ok := d.Replica(blocks[0].GetBlockId()); ok && (fin || len(got) == testBlock) {
			t.Fatalf("%s has block 1 whole while it read nothing", d.Info.GetId())
		}
	}
	for _, r := range releases {
		r()
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	c.checkReplicas(t, "/c", data)
	if got := readAll(t, c.fs, "/c"); !bytes.Equal(got, data) {
		t.Fatal("read back differs")
	}
}

// Algorithm 4 with several blocks in flight at once: a first or a middle
// datanode dies half-way through its block while the other pipeline is
// sending too; each time the file completes byte-identical on every
// replica, and the dead node leaves the pipeline.
func TestConcurrentRecovery(t *testing.T) {
	for i, name := range []string{"first node", "middle node"} {
		t.Run(name, func(t *testing.T) {
			c := newFake(t, 6, "multipipeline-concurrent")
			c.dns[i].KillAfter(testBlock / 2)
			data := testData(5*testBlock+99, uint64(30+i))
			if err := put(t, c.fs, "/f", data, CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			c.checkReplicas(t, "/f", data)
			if got := readAll(t, c.fs, "/f"); !bytes.Equal(got, data) {
				t.Fatal("read back differs")
			}
			if len(c.nn.Calls("UpdatePipeline")) == 0 {
				t.Fatalf("no pipeline was recovered after %s died", c.dns[i].Info.GetId())
			}
		})
	}
}

// Blocks far larger than the sockets' buffers, so acknowledgements arrive
// while a pipeline's sender is still writing its block: the sender must
// keep its place in the shrinking ack queue (losing it skips a packet, and
// the datanode's refusal sends the pipeline through recovery). The put
// must complete (within a minute, against seconds normally) with no
// pipeline recovered, and the replicas hold the file.
func TestConcurrentLargeBlocks(t *testing.T) {
	c := newFake(t, 6, "multipipeline-concurrent")
	c.nn.BlockSize = 4 << 20
	for _, d := range c.dns {
		c.fs.speeds.book.Seed(d.Info.GetId(), 100e6, time.Now())
	}
	data := testData(3*(4<<20)+4097, 41)
	done := asyncPut(t, c.fs, "/big", data)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the put of 3 blocks of 4 MiB did not complete within a minute")
	}
	c.checkReplicas(t, "/big", data)
	if up := c.nn.Calls("UpdatePipeline"); len(up) != 0 {
		t.Fatalf("a write without faults recovered pipelines: %v", up)
	}
}
