package datanode

import (
	"os"
	"strings"
	"sync"
	"testing"

	"smarth/internal/datanode/store/vfs"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// stallFS holds the first write of any block file until released: the
// disk stage of the datanode using it falls behind its receive stage.
type stallFS struct {
	vfs.FS
	once    sync.Once
	release chan struct{}
}

type stallFile struct {
	vfs.File
	fs *stallFS
}

func (s *stallFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := s.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.Contains(name, "blk_") || strings.HasSuffix(name, ".meta") {
		return f, err
	}
	return &stallFile{File: f, fs: s}, nil
}

func (f *stallFile) WriteAt(b []byte, off int64) (int, error) {
	f.fs.once.Do(func() { <-f.fs.release })
	return f.File.WriteAt(b, off)
}

// When the disk falls behind, the packets queued behind it are written
// together (far fewer block-file writes than packets), every packet is
// still acked in order and the block reads back intact. The first node's
// first disk write is held until its receive stage has forwarded every
// packet (the downstream node has them all), so the queue is full when
// the disk moves again.
func TestSlowDiskBatchesQueuedPackets(t *testing.T) {
	nn := startFakeNameNode(t)
	sfs := &stallFS{FS: vfs.OS, release: make(chan struct{})}
	dn1, log1 := startDataNode(t, nn, "", func(c *Config) { c.FS = sfs })
	dn2, _ := startDataNode(t, nn, "", nil)
	const id, packets = 140, 24
	data := randomData(packets*datatransfer.DefaultPacketDataLen, 15)

	op := &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: 1},
		ClientName: "test-client", Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE, Mode: dfspb.WriteMode_CLASSIC}
	p, resp := openPipeline(t, op, dn1, dn2)
	if err := datatransfer.ResponseError(resp); err != nil {
		t.Fatal(err)
	}
	if err := p.send(data); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the downstream node to store every packet (the first node forwarded them all)", func() bool {
		r, ok := dn2.store.Get(id)
		return ok && r.Length == int64(len(data))
	})
	if p.ackCount() != 0 {
		t.Fatalf("%d acks while the first node's disk is held", p.ackCount())
	}
	close(sfs.release)
	if err := p.finish(); err != nil {
		t.Fatal(err)
	}
	p.lastAckOK(t, 2)
	acks, _ := p.result()
	for i, a := range acks {
		if a.Seqno != int64(i) {
			t.Fatalf("ack %d is for packet %d: acks out of order", i, a.Seqno)
		}
	}
	mustRead(t, dn1, id, 1, data)
	line := findLogLine(t, log1.String(), "block received")
	stored, _ := line["packets"].(float64)
	writes, ok := line["disk_writes"].(float64)
	if !ok {
		t.Fatalf("block received line has no disk_writes: %v", line)
	}
	if stored != packets || writes > packets/4 {
		t.Fatalf("first node stored %v packets in %v block-file writes; want %d packets in at most %d", stored, writes, packets, packets/4)
	}
}
