package datanode

import (
	"strings"
	"testing"

	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

func multiOp(id uint64, client string) *dfspb.WriteBlockOp {
	return &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: 1}, ClientName: client,
		Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE, Mode: dfspb.WriteMode_MULTI_PIPELINE}
}

// TestFNFABeforeDownstreamFinished holds the link from the first datanode to
// the second shut: the first node must still store the whole block and send
// FIRST_NODE_FINISH_ACK while no packet has been acked by the pipeline.
func TestFNFABeforeDownstreamFinished(t *testing.T) {
	nn := startFakeNameNode(t)
	g := newGate()
	defer g.release()
	dn1, log1 := startDataNode(t, nn, "", func(c *Config) { c.Dial = g.dial })
	dn2, log2 := startDataNode(t, nn, "", nil)
	data := randomData(20*pkt+5, 21)
	p, resp := openPipeline(t, multiOp(400, "smarth-client-a"), dn1, dn2)
	if err := datatransfer.ResponseError(resp); err != nil {
		t.Fatal(err)
	}
	if err := p.send(data); err != nil {
		t.Fatal(err)
	}
	p.finish2()
	waitFor(t, "FNFA from the first datanode", p.gotFNFA)
	if n := p.ackCount(); n != 0 {
		t.Fatalf("%d pipeline acks before the downstream got anything", n)
	}
	if _, ok := dn2.store.Get(400); ok {
		if r, _ := dn2.store.Get(400); r.Length > 0 {
			t.Fatalf("downstream already has %d bytes", r.Length)
		}
	}
	g.release()
	p.lastAckOK(t, 2)
	acks, fnfa := p.result()
	if fnfa != 0 || len(acks) != int(p.seq) {
		t.Fatalf("FNFA at ack %d of %d, want first of %d", fnfa, len(acks), p.seq)
	}
	mustRead(t, dn2, 400, 1, data)
	if l := findLogLine(t, log1.String(), "block received"); l["mode"] != "MULTI_PIPELINE" {
		t.Fatalf("first node's line: %v", l)
	}
	findLogLine(t, log2.String(), "block received")
}

// TestFNFAAfterLongLead: the first datanode's lead over a shut downstream
// is bounded by per_client_buffer (64 MiB by default), not by the classic
// ack queue: a block of more packets than that queue holds (256) must
// still be stored whole and FNFA'd before the pipeline acks anything.
func TestFNFAAfterLongLead(t *testing.T) {
	nn := startFakeNameNode(t)
	g := newGate()
	defer g.release()
	dn1, _ := startDataNode(t, nn, "", func(c *Config) { c.Dial = g.dial })
	dn2, _ := startDataNode(t, nn, "", nil)
	data := randomData((ackQueueSize+64)*pkt, 23)
	p, resp := openPipeline(t, multiOp(405, "smarth-client-long"), dn1, dn2)
	if err := datatransfer.ResponseError(resp); err != nil {
		t.Fatal(err)
	}
	sent := make(chan error, 1)
	go func() {
		err := p.send(data)
		p.finish2()
		sent <- err
	}()
	waitFor(t, "FNFA from the first datanode after a lead of more packets than the classic ack queue", p.gotFNFA)
	if n := p.ackCount(); n != 0 {
		t.Fatalf("%d pipeline acks before the downstream got anything", n)
	}
	g.release()
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	p.lastAckOK(t, 2)
	mustRead(t, dn2, 405, 1, data)
}

// TestPerClientBufferBound: with the downstream link shut, the first
// datanode buffers at most per_client_buffer bytes of the client's data and
// then stops reading (the client is pushed back by TCP), so it cannot have
// stored the whole block.
func TestPerClientBufferBound(t *testing.T) {
	nn := startFakeNameNode(t)
	g := newGate()
	defer g.release()
	const bound = 4 * (pkt + 1024)
	dn1, _ := startDataNode(t, nn, "", func(c *Config) { c.Dial = g.dial; c.PerClientBuffer = bound })
	dn2, _ := startDataNode(t, nn, "", nil)
	data := randomData(64*pkt, 22)
	p, resp := openPipeline(t, multiOp(410, "smarth-client-b"), dn1, dn2)
	if err := datatransfer.ResponseError(resp); err != nil {
		t.Fatal(err)
	}
	sent := make(chan error, 1)
	go func() {
		err := p.send(data)
		p.finish2()
		sent <- err
	}()
	waitFor(t, "the first datanode's buffer for the client to fill", func() bool { return dn1.bufferHigh.Load() > bound-pkt-1024 })
	if p.gotFNFA() {
		t.Fatal("FNFA although the buffer bound keeps the block from being stored")
	}
	// The disk stage writes the packets already queued behind it (at most
	// maxBatchBytes) in one system call before it hands them to the
	// forwarder, whose budget then stops it: the store may run ahead of
	// the buffer by one batch (memory does not: those packets were queued
	// already), but not to the whole block (64 packets).
	if r, _ := dn1.store.Get(410); r.Length > bound+maxBatchBytes+3*pkt {
		t.Fatalf("first node stored %d bytes with the downstream shut, a %d-byte buffer and %d-byte disk batches", r.Length, bound, maxBatchBytes)
	}
	g.release()
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	p.lastAckOK(t, 2)
	if !p.gotFNFA() {
		t.Fatal("no FNFA")
	}
	if hw := dn1.bufferHigh.Load(); hw > bound {
		t.Fatalf("buffered %d bytes, bound %d", hw, bound)
	}
	mustRead(t, dn2, 410, 1, data)
}

// TestOnePipelinePerClient: a datanode is in at most one open pipeline of a
// client (seed 000 III.C).
func TestOnePipelinePerClient(t *testing.T) {
	nn := startFakeNameNode(t)
	dn1, _ := startDataNode(t, nn, "", nil)
	dn2, _ := startDataNode(t, nn, "", nil)
	dn3, _ := startDataNode(t, nn, "", nil)
	data := randomData(3*pkt, 23)
	open, resp := openPipeline(t, multiOp(420, "c1"), dn1, dn2)
	if err := datatransfer.ResponseError(resp); err != nil {
		t.Fatal(err)
	}
	open.send(data)

	_, resp = openPipeline(t, multiOp(421, "c1"), dn1)
	if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_ERROR_BUSY || !strings.Contains(resp.GetMessage(), "at most one open pipeline") {
		t.Fatalf("second pipeline of c1 through dn1: %v", resp)
	}
	_, resp = openPipeline(t, multiOp(422, "c1"), dn3, dn2)
	if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_ERROR_BUSY || resp.GetFirstBadLink() != dataAddr(dn2.Info()) {
		t.Fatalf("second pipeline of c1 through dn2 (downstream): %v", resp)
	}
	other, resp := openPipeline(t, multiOp(423, "c2"), dn1, dn2)
	if err := datatransfer.ResponseError(resp); err != nil {
		t.Fatalf("another client: %v", err)
	}
	other.send(data)
	if err := other.finish(); err != nil {
		t.Fatal(err)
	}
	other.lastAckOK(t, 2)

	if err := open.finish(); err != nil {
		t.Fatal(err)
	}
	open.lastAckOK(t, 2)
	// Once the pipeline has fully acked, the client may use the nodes again.
	next, resp := openPipeline(t, multiOp(424, "c1"), dn1, dn2)
	if err := datatransfer.ResponseError(resp); err != nil {
		t.Fatalf("next pipeline after the first completed: %v", err)
	}
	next.send(data)
	if err := next.finish(); err != nil {
		t.Fatal(err)
	}
	next.lastAckOK(t, 2)
}

// TestFNFAWithoutDownstream: a single-node multi-pipeline write still gets
// its FNFA, before the final pipeline ack.
func TestFNFAWithoutDownstream(t *testing.T) {
	nn := startFakeNameNode(t)
	dn, _ := startDataNode(t, nn, "", nil)
	data := randomData(3*pkt, 24)
	p, resp := openPipeline(t, multiOp(430, "c1"), dn)
	if err := datatransfer.ResponseError(resp); err != nil {
		t.Fatal(err)
	}
	p.send(data)
	if err := p.finish(); err != nil {
		t.Fatal(err)
	}
	p.lastAckOK(t, 1)
	acks, fnfa := p.result()
	if fnfa < 0 || fnfa >= len(acks) {
		t.Fatalf("FNFA at %d of %d acks, want before the last", fnfa, len(acks))
	}
}
