package datanode

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"smarth/internal/blocktoken"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// sendOp writes op to dn and reads the response.
func sendOp(t *testing.T, dn *DataNode, op any) *dfspb.OpResponse {
	t.Helper()
	c, err := dialRaw(dn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	var werr error
	switch m := op.(type) {
	case *dfspb.ReadBlockOp:
		werr = datatransfer.WriteOp(c, m)
	case *dfspb.WriteBlockOp:
		werr = datatransfer.WriteOp(c, m)
	case *dfspb.TransferBlockOp:
		werr = datatransfer.WriteOp(c, m)
	}
	if werr != nil {
		t.Fatal(werr)
	}
	resp, err := datatransfer.ReadResponse(bufio.NewReader(c))
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	return resp
}

func wantTokenRefused(t *testing.T, resp *dfspb.OpResponse, why string) {
	t.Helper()
	if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_ERROR_ACCESS_TOKEN || !strings.Contains(resp.GetMessage(), why) {
		t.Fatalf("got %v %q, want an access-token refusal saying %q", resp.GetStatus(), resp.GetMessage(), why)
	}
}

// expiredToken is a genuine token (the namenode's keys) that expired an
// hour ago.
func expiredToken(id, gs uint64) *dfspb.BlockToken {
	m, _ := blocktoken.NewManager(0, 0, constReader{}, time.Now().Add(-11*time.Hour))
	return m.Issue(blocktoken.Identifier{BlockID: id, GS: gs, Modes: blocktoken.Read}, time.Now().Add(-11*time.Hour))
}

// Knowing a block id is not enough: a read needs the namenode's token for
// that very block and stamp, unexpired and unforged.
func TestReadNeedsToken(t *testing.T) {
	nn := startFakeNameNode(t)
	dn, _ := startDataNode(t, nn, "", nil)
	data := randomData(3000, 1)
	writeBlock(t, 400, 1, data, dn)
	writeBlock(t, 401, 1, data, dn)
	read := func(tok *dfspb.BlockToken) *dfspb.OpResponse {
		return sendOp(t, dn, &dfspb.ReadBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 400, GenerationStamp: 1}, Length: 100, Token: tok})
	}
	forged := testToken(400, 1, blocktoken.Read)
	forged.Password[3] ^= 0x40
	otherKeys, _ := blocktoken.NewManager(0, 0, nil, time.Now()) // someone else's namenode
	alien := otherKeys.Issue(blocktoken.Identifier{BlockID: 400, GS: 1, Modes: blocktoken.Read}, time.Now())

	wantTokenRefused(t, read(nil), "no token")
	wantTokenRefused(t, read(forged), "bad signature")
	wantTokenRefused(t, read(alien), "unknown block key")
	wantTokenRefused(t, read(expiredToken(400, 1)), "expired")
	wantTokenRefused(t, read(testToken(401, 1, blocktoken.Read)), "token is for block 401, not 400")
	wantTokenRefused(t, read(testToken(400, 1, blocktoken.Write)), "allows WRITE, not READ")
	if resp := read(testToken(400, 1, blocktoken.Read)); resp.GetStatus() != dfspb.OpStatus_OP_STATUS_SUCCESS {
		t.Fatalf("read with a good token: %v", datatransfer.ResponseError(resp))
	}
	mustRead(t, dn, 400, 1, data)
}

// A write needs a WRITE token, whatever the stage claims; a missing token
// is refused before any replica is created.
func TestWriteNeedsToken(t *testing.T) {
	nn := startFakeNameNode(t)
	dn, _ := startDataNode(t, nn, "", nil)
	op := &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 410, GenerationStamp: 1}, ClientName: "c",
		Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE, BytesPerChecksum: 512}
	wantTokenRefused(t, sendOp(t, dn, op), "no token")
	op.Token = testToken(410, 1, blocktoken.Read)
	wantTokenRefused(t, sendOp(t, dn, op), "allows READ, not WRITE")
	if _, ok := dn.store.Get(410); ok {
		t.Fatal("a refused write left a replica")
	}
}

// Keys roll on the namenode and reach the datanode in a heartbeat; a read
// in flight across the roll finishes, and tokens signed before the roll
// still open new reads.
func TestKeyRollKeepsReaders(t *testing.T) {
	nn := startFakeNameNode(t)
	dn, _ := startDataNode(t, nn, "", nil)
	data := randomData(40*datatransfer.DefaultPacketDataLen, 2)
	writeBlock(t, 420, 1, data, dn)
	before := testToken(420, 1, blocktoken.Read)

	c, err := dialRaw(dn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	datatransfer.WriteOp(c, &dfspb.ReadBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 420, GenerationStamp: 1}, Length: int64(len(data)), Token: before})
	br := bufio.NewReader(c)
	if resp, err := datatransfer.ReadResponse(br); err != nil || resp.GetStatus() != dfspb.OpStatus_OP_STATUS_SUCCESS {
		t.Fatalf("read: %v %v", resp, err)
	}
	pr := datatransfer.NewPacketReader(br)
	first, err := pr.Next()
	if err != nil {
		t.Fatal(err)
	}
	got := append([]byte(nil), first.Data()...)

	serial := dn.tokens.Serial()
	for i := 1; i <= 3; i++ {
		nn.mu.Lock()
		changed, err := nn.keys.Roll(time.Now().Add(time.Duration(i) * time.Hour))
		nn.mu.Unlock()
		if err != nil || !changed {
			t.Fatalf("roll %d: %v %v", i, changed, err)
		}
	}
	waitFor(t, "the datanode installed the rolled keys", func() bool { return dn.tokens.Serial() > serial })

	for {
		p, err := pr.Next()
		if err != nil {
			t.Fatalf("in-flight read after the roll, at %d bytes: %v", len(got), err)
		}
		got = append(got, p.Data()...)
		if p.Header.Last() || len(got) >= len(data) {
			break
		}
	}
	if string(got[:len(data)]) != string(data) {
		t.Fatal("in-flight read returned different bytes")
	}
	resp := sendOp(t, dn, &dfspb.ReadBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 420, GenerationStamp: 1}, Length: 10, Token: before})
	if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_SUCCESS {
		t.Fatalf("token from before the roll refused: %v", datatransfer.ResponseError(resp))
	}
}

// listenCounting is a TCP listener that counts the connections it gets:
// an address a datanode must never be made to dial.
func listenCounting(t *testing.T) (*dfspb.DatanodeInfo, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	return &dfspb.DatanodeInfo{Id: "evil", IpAddr: "127.0.0.1", DataPort: uint32(p)}, &n
}

// A client holding a genuine write token cannot make the datanode connect
// to an address the namenode did not put in the pipeline, neither as the
// next pipeline node nor as a copy target.
func TestNoDialOutsideToken(t *testing.T) {
	nn := startFakeNameNode(t)
	dn, _ := startDataNode(t, nn, "", nil)
	other, _ := startDataNode(t, nn, "", nil)
	evil, dialed := listenCounting(t)

	op := &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 430, GenerationStamp: 1}, ClientName: "c",
		Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE, BytesPerChecksum: 512,
		Targets: []*dfspb.DatanodeInfo{evil}, Token: testToken(430, 1, blocktoken.Write, other.Info())}
	wantTokenRefused(t, sendOp(t, dn, op), "does not name "+dataAddr(evil))

	writeBlock(t, 431, 1, randomData(1000, 3), dn)
	tr := &dfspb.TransferBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 431, GenerationStamp: 1, NumBytes: 1000},
		Targets: []*dfspb.DatanodeInfo{evil}, ClientName: "c", Token: testToken(431, 1, blocktoken.Copy, other.Info())}
	wantTokenRefused(t, sendOp(t, dn, tr), "does not name "+dataAddr(evil))
	tr.Token = testToken(431, 1, blocktoken.Read, evil) // a reader's token does not allow copies
	wantTokenRefused(t, sendOp(t, dn, tr), "allows READ, not COPY")
	if n := dialed.Load(); n != 0 {
		t.Fatalf("the datanode dialed the unnamed address %d times", n)
	}
	// The same transfer to a node the token names goes through.
	tr.Targets, tr.Token = []*dfspb.DatanodeInfo{other.Info()}, testToken(431, 1, blocktoken.Copy, other.Info())
	if resp := sendOp(t, dn, tr); resp.GetStatus() != dfspb.OpStatus_OP_STATUS_SUCCESS {
		t.Fatalf("transfer to a named target: %v", datatransfer.ResponseError(resp))
	}
}

// A finalized replica can be replaced (TRANSFER_RBW/FINALIZED) or
// reopened and truncated (streaming recovery) only with the token the
// namenode issues for that: COPY for the block's stamp, or WRITE for the
// new stamp of a recovery. A writer's ordinary token does neither.
func TestFinalizedReplicaNeedsCommandedToken(t *testing.T) {
	nn := startFakeNameNode(t)
	dn, _ := startDataNode(t, nn, "", nil)
	data := randomData(5000, 4)
	writeBlock(t, 440, 1, data, dn)
	writeTok := testToken(440, 1, blocktoken.Write)
	for _, stage := range []dfspb.WriteStage{dfspb.WriteStage_TRANSFER_RBW, dfspb.WriteStage_TRANSFER_FINALIZED} {
		op := &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 440, GenerationStamp: 2}, ClientName: "c",
			Stage: stage, BytesPerChecksum: 512, Token: testToken(440, 1, blocktoken.Write)}
		wantTokenRefused(t, sendOp(t, dn, op), "not 2")
		op.Token = testToken(440, 2, blocktoken.Write)
		wantTokenRefused(t, sendOp(t, dn, op), "allows WRITE, not COPY")
	}
	rec := &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 440, GenerationStamp: 1, NumBytes: 10}, ClientName: "c",
		Stage: dfspb.WriteStage_PIPELINE_SETUP_STREAMING_RECOVERY, LatestGs: 2, BytesPerChecksum: 512, Token: writeTok}
	wantTokenRefused(t, sendOp(t, dn, rec), "generation stamp 1, not 2")
	mustRead(t, dn, 440, 1, data) // untouched
}
