package client

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// waitFor polls cond every few milliseconds for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitForWithin(t, 10*time.Second, what, cond)
}

// waitForWithin is waitFor for a condition that takes several timeouts of
// the code under test to come true, which a loaded machine stretches.
func waitForWithin(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond) // poll interval of a condition with a deadline
	}
}

func asyncPut(t *testing.T, f *FileSystem, path string, data []byte) chan error {
	done := make(chan error, 1)
	go func() { done <- put(t, f, path, data, CreateOptions{}) }()
	return done
}

// After the first datanode's FNFA the next block starts on other nodes
// while the first pipeline still waits for its acks; at most
// live/replication pipelines are open.
func TestMultiPipelineOverlapAndLimit(t *testing.T) {
	c := newFake(t, 6, "multipipeline") // n = 6/3 = 2 pipelines
	release1 := c.dns[2].HoldAcks()     // last node of pipeline 1 (dn1 dn2 dn3)
	release2 := c.dns[5].HoldAcks()     // last node of pipeline 2 (dn4 dn5 dn6)
	t.Cleanup(release1)
	t.Cleanup(release2)
	var released atomic.Bool
	var thirdEarly atomic.Bool
	c.nn.OnAddBlock(func(n int) {
		if n == 3 && !released.Load() {
			thirdEarly.Store(true)
		}
	})
	data := testData(3*testBlock+5, 10)
	done := asyncPut(t, c.fs, "/m", data)
	waitFor(t, "block 2 stored on its first datanode (FNFA sent)", func() bool {
		adds := c.nn.Calls("AddBlock")
		if len(adds) < 2 {
			return false
		}
		blocks, _ := c.nn.FileBlocks("/m")
		got, _, fin, ok := c.dns[3].Replica(blocks[1].GetBlockId())
		return ok && fin && len(got) == testBlock
	})
	adds := c.nn.Calls("AddBlock")
	if adds[1] != "AddBlock exclude=[] busy=[dn1 dn2 dn3]" {
		t.Fatalf("second AddBlock %q: must name the open first pipeline's nodes busy", adds[1])
	}
	released.Store(true)
	release1()
	release2()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if thirdEarly.Load() {
		t.Fatal("a third pipeline was requested while two were open (limit live/replication = 2)")
	}
	c.checkReplicas(t, "/m", data)
	if got := readAll(t, c.fs, "/m"); !bytes.Equal(got, data) {
		t.Fatal("read back differs")
	}
}

// Every block's transfer to its first datanode is recorded and reported
// to the namenode (ClientHeartbeat).
func TestMultiPipelineSpeedRecordsReported(t *testing.T) {
	c := newFake(t, 3, "multipipeline")
	data := testData(2*testBlock, 11)
	if err := put(t, c.fs, "/s", data, CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "speed samples at the namenode", func() bool { return len(c.nn.Samples()) >= 2 })
	for _, s := range c.nn.Samples() {
		// Algorithm 2 may put any of the three first.
		id := s.GetDatanodeId()
		if (id != "dn1" && id != "dn2" && id != "dn3") || s.GetBytes() != testBlock || s.GetNanos() <= 0 {
			t.Fatalf("sample %v: want a first datanode and %d bytes", s, testBlock)
		}
		if v, ok := c.fs.speeds.book.Speed(id); !ok || v <= 0 {
			t.Fatalf("local speed record for %s: %v %v", id, v, ok)
		}
	}
}

// Algorithm 4: kill the first datanode of an open pipeline, a middle one,
// and one of an already-FNFA'd pipeline that is still forwarding; each
// time the file completes byte-identical.
func TestMultiPipelineRecovery(t *testing.T) {
	t.Run("first node of the open pipeline", func(t *testing.T) {
		c := newFake(t, 6, "multipipeline")
		c.dns[0].KillAfter(testBlock / 2)
		data := testData(3*testBlock+99, 12)
		if err := put(t, c.fs, "/f", data, CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		c.checkReplicas(t, "/f", data)
		if got := readAll(t, c.fs, "/f"); !bytes.Equal(got, data) {
			t.Fatal("read back differs")
		}
	})
	t.Run("middle node of the open pipeline", func(t *testing.T) {
		c := newFake(t, 6, "multipipeline")
		c.dns[1].KillAfter(testBlock / 2)
		data := testData(3*testBlock+99, 13)
		if err := put(t, c.fs, "/f", data, CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		c.checkReplicas(t, "/f", data)
		if up := c.nn.Calls("UpdatePipeline"); len(up) != 1 || strings.Contains(up[0], "dn2") {
			t.Fatalf("UpdatePipeline %v: dn2 must leave the pipeline", up)
		}
	})
	t.Run("node of an FNFA'd pipeline still forwarding", func(t *testing.T) {
		c := newFake(t, 6, "multipipeline")
		release := c.dns[2].HoldAcks() // pipeline 1 (dn1 dn2 dn3) cannot drain
		t.Cleanup(release)
		data := testData(3*testBlock+99, 14)
		done := asyncPut(t, c.fs, "/f", data)
		waitFor(t, "pipeline 2 opened after pipeline 1's FNFA", func() bool { return len(c.nn.Calls("AddBlock")) >= 2 })
		c.dns[1].Kill() // dn2, in the FNFA'd pipeline
		release()       // dn3 acks again, as part of the rebuilt pipeline
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		counts := c.checkReplicas(t, "/f", data)
		up := c.nn.Calls("UpdatePipeline")
		if len(up) == 0 || !slices.ContainsFunc(up, func(s string) bool { return strings.Contains(s, "nodes=[dn1 dn3]") }) {
			t.Fatalf("UpdatePipeline %v: pipeline 1 must be rebuilt on dn1 dn3", up)
		}
		if counts[0] != 2 {
			t.Fatalf("replicas %v", counts)
		}
	})
}

// Multi-pipeline with one pipeline at a time (3 datanodes, replication 3)
// writes the same bytes as classic.
func TestMultiPipelineSingleSlotMatchesClassic(t *testing.T) {
	for _, mode := range []string{"classic", "multipipeline"} {
		c := newFake(t, 3, mode)
		data := testData(5*testBlock/2, 15)
		if err := put(t, c.fs, "/x", data, CreateOptions{}); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		c.checkReplicas(t, "/x", data)
		if got := readAll(t, c.fs, "/x"); !bytes.Equal(got, data) {
			t.Fatalf("%s: read back differs", mode)
		}
	}
	_ = context.Background
}
