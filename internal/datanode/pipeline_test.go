package datanode

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"smarth/internal/datanode/store"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

func TestPipelineWriteAndRead(t *testing.T) {
	nn := startFakeNameNode(t)
	dn1, log1 := startDataNode(t, nn, "", nil)
	dn2, _ := startDataNode(t, nn, "", nil)
	dn3, _ := startDataNode(t, nn, "", nil)
	data := randomData(3<<20+777, 1) // not packet or chunk aligned
	writeBlock(t, 1, 1001, data, dn1, dn2, dn3)

	for _, dn := range []*DataNode{dn1, dn2, dn3} {
		if !nn.hasReceived(dn.ID(), 1, 1001, dfspb.ReceivedStatus_RECEIVING) || !nn.hasReceived(dn.ID(), 1, 1001, dfspb.ReceivedStatus_RECEIVED) {
			waitFor(t, "RECEIVING and RECEIVED reports from "+dn.ID(), func() bool {
				return nn.hasReceived(dn.ID(), 1, 1001, dfspb.ReceivedStatus_RECEIVED)
			})
		}
		r, ok := dn.store.Get(1)
		if !ok || r.State != store.Finalized || r.Length != int64(len(data)) {
			t.Fatalf("%s: replica %+v", dn.ID(), r)
		}
		mustRead(t, dn, 1, 1001, data)
	}
	// Ranged reads start at a chunk boundary at or before the offset.
	for _, rg := range [][2]int64{{1, 10}, {511, 2}, {65536 + 100, 200000}, {int64(len(data)) - 5, 5}, {int64(len(data)), 0}} {
		got, err := readBlock(dn2.DataAddr(), 1, 1001, rg[0], rg[1])
		if err != nil {
			t.Fatalf("read %v: %v", rg, err)
		}
		if !bytes.Equal(got, data[rg[0]:rg[0]+rg[1]]) {
			t.Fatalf("read %v: data differs", rg)
		}
	}
	// The block-receive line carries the documented keys.
	line := findLogLine(t, log1.String(), "block received")
	for _, k := range []string{"block", "gs", "bytes", "start", "end", "duration", "mib_per_s", "mbit_per_s", "stage", "mode", "upstream", "client", "cpu_seconds"} {
		if _, ok := line[k]; !ok {
			t.Errorf("block received line lacks %q: %v", k, line)
		}
	}
	if line["bytes"].(float64) != float64(len(data)) || line["stage"] != "PIPELINE_SETUP_CREATE" || line["mode"] != "CLASSIC" {
		t.Errorf("block received line: %v", line)
	}
	// Metrics are served.
	resp, err := http.Get("http://" + dn1.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, m := range []string{"smarth_datanode_bytes_written_total", "smarth_datanode_blocks_read_total", "smarth_datanode_packet_ack_latency_seconds"} {
		if !strings.Contains(string(body), m) {
			t.Errorf("/metrics lacks %s", m)
		}
	}
	// The console: volume, replicas (the block just written), cache; health; config.
	for path, want := range map[string]string{"/": "<td>finalized</td><td class=n>1</td>", "/healthz": "ok", "/conf": "data_dir"} {
		resp, err := http.Get("http://" + dn1.HTTPAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %s, want %q in\n%s", path, resp.Status, want, body)
		}
	}
}

func findLogLine(t *testing.T, logs, msg string) map[string]any {
	t.Helper()
	for _, l := range strings.Split(logs, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == msg {
			return m
		}
	}
	t.Fatalf("no %q log line in:\n%s", msg, logs)
	return nil
}

func TestReadErrors(t *testing.T) {
	nn := startFakeNameNode(t)
	dn, _ := startDataNode(t, nn, "", nil)
	data := randomData(10000, 2)
	writeBlock(t, 5, 10, data, dn)
	cases := []struct {
		name       string
		id, gs     uint64
		off, n     int64
		want       dfspb.OpStatus
		msgContain string
	}{
		{"unknown block", 6, 10, 0, 1, dfspb.OpStatus_OP_STATUS_ERROR_NOT_FOUND, "no replica of blk_6_10"},
		{"newer gs requested", 5, 11, 0, 1, dfspb.OpStatus_OP_STATUS_ERROR_NOT_FOUND, "older than the requested generation stamp 11"},
		{"past the end", 5, 10, 9000, 2000, dfspb.OpStatus_OP_STATUS_ERROR_INVALID, "outside blk_5_10"},
		{"negative offset", 5, 10, -1, 5, dfspb.OpStatus_OP_STATUS_ERROR_INVALID, "outside"},
	}
	for _, c := range cases {
		_, err := readBlock(dn.DataAddr(), c.id, c.gs, c.off, c.n)
		var se *datatransfer.StatusError
		if !errors.As(err, &se) || se.Status != c.want || !strings.Contains(se.Message, c.msgContain) {
			t.Errorf("%s: got %v, want %s containing %q", c.name, err, c.want, c.msgContain)
		}
	}
}

func TestRestartReportsReplicas(t *testing.T) {
	nn := startFakeNameNode(t)
	dir := t.TempDir()
	dn, _ := startDataNode(t, nn, dir, nil)
	id := dn.ID()
	writeBlock(t, 7, 1, randomData(5000, 3), dn)
	// An unfinished write leaves an RBW replica.
	p, _ := openPipeline(t, &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 8, GenerationStamp: 1},
		Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE, ClientName: "c"}, dn)
	if err := p.send(randomData(3000, 4)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "first packet acked", func() bool { return p.ackedThrough() >= 0 })
	p.conn.Close()
	dn.Close()

	dn2, _ := startDataNode(t, nn, dir, nil)
	if dn2.ID() != id {
		t.Fatalf("id changed across restart: %s → %s", id, dn2.ID())
	}
	waitFor(t, "block report after restart", func() bool {
		nn.mu.Lock()
		defer nn.mu.Unlock()
		return nn.reportCount[id] >= 2
	})
	nn.mu.Lock()
	rep := nn.reports[id]
	nn.mu.Unlock()
	states := map[uint64]dfspb.ReplicaState{}
	for _, b := range rep {
		states[b.GetBlock().GetBlockId()] = b.GetState()
	}
	if states[7] != dfspb.ReplicaState_FINALIZED || states[8] != dfspb.ReplicaState_RBW {
		t.Fatalf("block report after restart: %v", rep)
	}
}

func TestMalformedInput(t *testing.T) {
	nn := startFakeNameNode(t)
	dn, _ := startDataNode(t, nn, "", nil)
	// A garbage op request gets a clear INVALID response.
	c, err := dialRaw(dn)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte{0, 7, 80, 0, 0, 0, 0})
	resp, err := datatransfer.ReadResponse(c)
	if err != nil || resp.GetStatus() != dfspb.OpStatus_OP_STATUS_ERROR_INVALID || !strings.Contains(resp.GetMessage(), "version 7") {
		t.Fatalf("garbage op: %v %v", resp, err)
	}
	c.Close()

	// A packet with a wrong checksum: ERROR_CHECKSUM and the replica is gone.
	op := &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 20, GenerationStamp: 1}, Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE, ClientName: "c"}
	p, _ := openPipeline(t, op, dn)
	pkt := datatransfer.NewPacket(4096, 512)
	pkt.Append(randomData(4096, 5))
	pkt.Seal(0, 0, 0)
	wire := bytes.Clone(pkt.Wire())
	pkt.Release()
	wire[len(wire)-10] ^= 1
	p.conn.Write(wire)
	acks, _ := p.result()
	if len(acks) != 1 || acks[0].Statuses[0] != dfspb.OpStatus_OP_STATUS_ERROR_CHECKSUM {
		t.Fatalf("acks after a bad checksum: %+v", acks)
	}
	waitFor(t, "corrupt incoming replica discarded", func() bool { _, ok := dn.store.Get(20); return !ok })

	// A packet out of sequence: ERROR_INVALID.
	op.Block, op.Token = &dfspb.ExtendedBlock{BlockId: 21, GenerationStamp: 1}, nil
	p, _ = openPipeline(t, op, dn)
	p.seq = 5
	p.send(randomData(100, 6))
	acks, _ = p.result()
	if len(acks) != 1 || acks[0].Statuses[0] != dfspb.OpStatus_OP_STATUS_ERROR_INVALID {
		t.Fatalf("acks after a bad seqno: %+v", acks)
	}

	// Writing a block that is already finalized here: ERROR_EXISTS.
	writeBlock(t, 22, 1, randomData(100, 7), dn)
	op.Block, op.Token = &dfspb.ExtendedBlock{BlockId: 22, GenerationStamp: 1}, nil
	_, resp = openPipeline(t, op, dn)
	if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_ERROR_EXISTS {
		t.Fatalf("rewrite of a finalized block: %v", resp)
	}
	// Recovery of a replica this node does not have: ERROR_NOT_FOUND.
	op.Block, op.Token = &dfspb.ExtendedBlock{BlockId: 23, GenerationStamp: 1}, nil
	op.Stage, op.LatestGs = dfspb.WriteStage_PIPELINE_SETUP_STREAMING_RECOVERY, 2
	_, resp = openPipeline(t, op, dn)
	if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_ERROR_NOT_FOUND {
		t.Fatalf("recovery of an unknown block: %v", resp)
	}
}

// TestHeartbeatAndSyncPackets: a keep-alive packet travels the pipeline and
// is acked with seqno -1 by every node; a sync packet is acked as usual.
func TestHeartbeatAndSyncPackets(t *testing.T) {
	nn := startFakeNameNode(t)
	dn1, _ := startDataNode(t, nn, "", nil)
	dn2, _ := startDataNode(t, nn, "", nil)
	data := randomData(2*pkt, 12)
	op := &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 50, GenerationStamp: 1}, ClientName: "c", Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE}
	p, resp := openPipeline(t, op, dn1, dn2)
	if err := datatransfer.ResponseError(resp); err != nil {
		t.Fatal(err)
	}
	p.send(data[:pkt])
	hb := datatransfer.NewPacket(0, 512)
	hb.Seal(pkt, datatransfer.HeartbeatSeqno, datatransfer.FlagHeartbeat)
	p.conn.Write(hb.Wire())
	hb.Release()
	sp := datatransfer.NewPacket(pkt, 512)
	sp.Append(data[pkt:])
	sp.Seal(pkt, p.seq, datatransfer.FlagSync)
	p.conn.Write(sp.Wire())
	sp.Release()
	p.seq++
	p.off += pkt
	if err := p.finish(); err != nil {
		t.Fatal(err)
	}
	p.lastAckOK(t, 2)
	acks, _ := p.result()
	var seqs []int64
	for _, a := range acks {
		seqs = append(seqs, a.Seqno)
		if len(a.Statuses) != 2 {
			t.Fatalf("ack %+v", a)
		}
	}
	if want := []int64{0, -1, 1, 2}; !slices.Equal(seqs, want) {
		t.Fatalf("ack seqnos %v, want %v", seqs, want)
	}
	mustRead(t, dn2, 50, 1, data)
}

// TestReadReplicaBeingWritten: readers see a replica being written up to
// its acknowledged length, with the checksum of a partial last chunk
// computed for exactly the bytes sent.
func TestReadReplicaBeingWritten(t *testing.T) {
	nn := startFakeNameNode(t)
	dn, _ := startDataNode(t, nn, "", nil)
	data := randomData(3000, 13)
	w, err := dn.store.CreateRBW(60, 1, 512, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	sums := make([]byte, datatransfer.ChunkCount(len(data), 512)*4)
	datatransfer.PutChecksums(sums, data, 512)
	if err := w.Write(0, data, sums); err != nil {
		t.Fatal(err)
	}
	w.SetVisible(1700) // acked so far; 1700 is inside the fourth chunk
	got, err := readBlock(dn.DataAddr(), 60, 1, 0, 1700)
	if err != nil || !bytes.Equal(got, data[:1700]) {
		t.Fatalf("read of an RBW replica: %v", err)
	}
	if _, err := readBlock(dn.DataAddr(), 60, 1, 0, 1701); err == nil {
		t.Fatal("read past the acknowledged length succeeded")
	}
}
