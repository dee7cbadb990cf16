package datatransfer

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"

	"smarth/internal/rpc/dfspb"
)

func TestOpRoundTrip(t *testing.T) {
	msgs := []proto.Message{
		&dfspb.WriteBlockOp{
			Block:      &dfspb.ExtendedBlock{BlockId: 7, GenerationStamp: 1001, NumBytes: 42},
			Targets:    []*dfspb.DatanodeInfo{{Id: "dn2", IpAddr: "127.0.0.1", DataPort: 9000}},
			ClientName: "c1",
			Stage:      dfspb.WriteStage_PIPELINE_SETUP_CREATE,
			Mode:       dfspb.WriteMode_MULTI_PIPELINE,
			LatestGs:   1002,
		},
		&dfspb.ReadBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 9}, Offset: 100, Length: 5000},
		&dfspb.TransferBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 3}, ClientName: "c"},
		&dfspb.BlockChecksumOp{Block: &dfspb.ExtendedBlock{BlockId: 4, NumBytes: 1000}, ClientName: "c"},
	}
	wantOps := []Op{OpWriteBlock, OpReadBlock, OpTransferBlock, OpBlockChecksum}
	var buf bytes.Buffer
	for _, m := range msgs {
		if err := WriteOp(&buf, m); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range msgs {
		op, got, err := ReadOp(&buf)
		if err != nil {
			t.Fatalf("ReadOp %d: %v", i, err)
		}
		if op != wantOps[i] || !proto.Equal(got, want) {
			t.Errorf("op %d: got %s %v, want %s %v", i, op, got, wantOps[i], want)
		}
	}
	if _, _, err := ReadOp(&buf); err != io.EOF {
		t.Errorf("ReadOp on empty stream: %v, want io.EOF", err)
	}
	if err := WriteOp(&buf, &dfspb.OpResponse{}); err == nil {
		t.Error("WriteOp accepted a message with no opcode")
	}
}

func TestReadOpRejects(t *testing.T) {
	cases := map[string][]byte{
		"bad version":  {0, 2, 80, 0, 0, 0, 0},
		"unknown op":   {0, 1, 99, 0, 0, 0, 0},
		"huge header":  {0, 1, 80, 0x10, 0, 0, 1},
		"bad protobuf": {0, 1, 81, 0, 0, 0, 2, 0xff, 0xff},
	}
	for name, b := range cases {
		if _, _, err := ReadOp(bytes.NewReader(b)); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: got %v, want ErrProtocol", name, err)
		}
	}
	if _, _, err := ReadOp(bytes.NewReader([]byte{0, 1, 80, 0, 0, 0, 9, 1})); err != io.ErrUnexpectedEOF {
		t.Errorf("truncated header: got %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestResponseRoundTrip(t *testing.T) {
	want := &dfspb.OpResponse{Status: dfspb.OpStatus_OP_STATUS_ERROR, Message: "connect 10.0.0.2:9866: refused", FirstBadLink: "10.0.0.2:9866"}
	var buf bytes.Buffer
	if err := WriteResponse(&buf, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadResponse(&buf)
	if err != nil || !proto.Equal(got, want) {
		t.Fatalf("got %v %v, want %v", got, err, want)
	}
	err = ResponseError(got)
	var se *StatusError
	if !errors.As(err, &se) || se.FirstBadLink != "10.0.0.2:9866" {
		t.Fatalf("ResponseError = %v", err)
	}
	if msg := err.Error(); msg != "datanode error: connect 10.0.0.2:9866: refused (first bad link 10.0.0.2:9866)" {
		t.Errorf("message %q", msg)
	}
	if ResponseError(&dfspb.OpResponse{}) != nil {
		t.Error("success response gave an error")
	}
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestPacketRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, 511, 512, 513, 4096, DefaultPacketDataLen - 1, DefaultPacketDataLen}
	var wire bytes.Buffer
	var want [][]byte
	for i, n := range sizes {
		data := randBytes(r, n)
		want = append(want, data)
		p := NewPacket(DefaultPacketDataLen, DefaultBytesPerChecksum)
		if got := p.Append(data); got != n {
			t.Fatalf("Append took %d of %d", got, n)
		}
		flags := Flags(0)
		if i == len(sizes)-1 {
			flags = FlagLast
		}
		p.Seal(int64(i*1000), int64(i), flags)
		wire.Write(p.Wire())
		p.Release()
	}
	pr := NewPacketReader(bufio.NewReaderSize(&wire, 64<<10))
	for i, data := range want {
		p, err := pr.Next()
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		h := p.Header
		if h.Seqno != int64(i) || h.Offset != int64(i*1000) || h.Last() != (i == len(want)-1) || h.BytesPerChecksum != 512 {
			t.Errorf("packet %d header %+v", i, h)
		}
		if !bytes.Equal(p.Data(), data) {
			t.Errorf("packet %d data differs", i)
		}
		if err := p.Verify(); err != nil {
			t.Errorf("packet %d: %v", i, err)
		}
		p.Release()
	}
	if _, err := pr.Next(); err != io.EOF {
		t.Errorf("after last packet: %v, want io.EOF", err)
	}
}

func TestPacketAppendStopsAtCapacity(t *testing.T) {
	p := NewPacket(1000, 512)
	defer p.Release()
	if n := p.Append(make([]byte, 600)); n != 600 {
		t.Fatalf("first append %d", n)
	}
	if n := p.Append(make([]byte, 600)); n != 400 || p.Free() != 0 {
		t.Fatalf("second append %d, free %d", n, p.Free())
	}
}

func TestPacketVerifyFindsCorruptChunk(t *testing.T) {
	p := NewPacket(4096, 512)
	p.Append(bytes.Repeat([]byte("abcdefgh"), 512))
	p.Seal(8192, 3, 0)
	wire := bytes.Clone(p.Wire())
	p.Release()
	wire[len(wire)-1000] ^= 0x40 // in the data, chunk 6 (4096-1000 = 3096)
	q, err := NewPacketReader(bytes.NewReader(wire)).Next()
	if err != nil {
		t.Fatal(err)
	}
	var ce *ChecksumError
	if err := q.Verify(); !errors.As(err, &ce) || ce.Offset != 8192+6*512 {
		t.Fatalf("Verify = %v, want mismatch at offset %d", err, 8192+6*512)
	}
}

func TestPacketHeaderRejects(t *testing.T) {
	cases := map[string]PacketHeader{
		"too long":        {DataLen: MaxPacketDataLen + 1, BytesPerChecksum: 512},
		"zero chunk":      {DataLen: 1, BytesPerChecksum: 0},
		"one-byte chunk":  {DataLen: MaxPacketDataLen, BytesPerChecksum: 1},
		"63-byte chunk":   {DataLen: 1, BytesPerChecksum: MinBytesPerChecksum - 1},
		"huge chunk":      {BytesPerChecksum: MaxBytesPerChecksum + 1},
		"negative offset": {Offset: -1, BytesPerChecksum: 512},
		"negative seqno":  {Seqno: -1, BytesPerChecksum: 512},
		"heartbeat data":  {DataLen: 1, Seqno: -1, Flags: FlagHeartbeat, BytesPerChecksum: 512},
		"heartbeat seqno": {Seqno: 4, Flags: FlagHeartbeat, BytesPerChecksum: 512},
		"unknown flags":   {Flags: 0x80, BytesPerChecksum: 512},
	}
	for name, h := range cases {
		var b [PacketHeaderLen]byte
		h.Put(b[:])
		if _, err := DecodePacketHeader(b[:]); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: got %v, want ErrProtocol", name, err)
		}
	}
	// Controls: the limits themselves are accepted.
	for _, h := range []PacketHeader{{DataLen: MaxPacketDataLen, BytesPerChecksum: MinBytesPerChecksum}, {DataLen: 1, BytesPerChecksum: MaxBytesPerChecksum}} {
		var b [PacketHeaderLen]byte
		h.Put(b[:])
		if _, err := DecodePacketHeader(b[:]); err != nil {
			t.Errorf("%+v: %v", h, err)
		}
	}
	hb := PacketHeader{Seqno: HeartbeatSeqno, Flags: FlagHeartbeat, BytesPerChecksum: 512}
	var b [PacketHeaderLen]byte
	hb.Put(b[:])
	if got, err := DecodePacketHeader(b[:]); err != nil || got != hb {
		t.Errorf("heartbeat: %+v %v", got, err)
	}
}

func TestPacketReaderLimits(t *testing.T) {
	p := NewPacket(2048, 512)
	p.Append(make([]byte, 2048))
	p.Seal(0, 0, 0)
	wire := bytes.Clone(p.Wire())
	p.Release()
	pr := NewPacketReader(bytes.NewReader(wire))
	pr.MaxDataLen = 1024
	if _, err := pr.Next(); !errors.Is(err, ErrProtocol) {
		t.Errorf("MaxDataLen: %v", err)
	}
	pr = NewPacketReader(bytes.NewReader(wire))
	pr.BytesPerChecksum = 1024
	if _, err := pr.Next(); !errors.Is(err, ErrProtocol) {
		t.Errorf("BytesPerChecksum: %v", err)
	}
	pr = NewPacketReader(bytes.NewReader(wire[:100]))
	if _, err := pr.Next(); err != io.ErrUnexpectedEOF {
		t.Errorf("truncated: %v", err)
	}
}

func TestAckRoundTrip(t *testing.T) {
	acks := []Ack{
		{Kind: AckPipeline, Seqno: 0, Statuses: []dfspb.OpStatus{0, 0, 0}},
		{Kind: AckPipeline, Seqno: HeartbeatSeqno, Statuses: []dfspb.OpStatus{0}},
		{Kind: AckPipeline, Seqno: 5, Statuses: []dfspb.OpStatus{0, dfspb.OpStatus_OP_STATUS_ERROR_CHECKSUM}},
		{Kind: AckFirstNodeFinish, Seqno: 1024, Statuses: []dfspb.OpStatus{0}},
	}
	var buf bytes.Buffer
	for _, a := range acks {
		if err := WriteAck(&buf, a); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range acks {
		got, err := ReadAck(&buf)
		if err != nil {
			t.Fatalf("ack %d: %v", i, err)
		}
		if got.Kind != want.Kind || got.Seqno != want.Seqno || len(got.Statuses) != len(want.Statuses) {
			t.Fatalf("ack %d: got %+v want %+v", i, got, want)
		}
	}
	if (Ack{Statuses: []dfspb.OpStatus{0, 0, 1}}).FirstFailed() != 2 {
		t.Error("FirstFailed")
	}
	bad := map[string][]byte{
		"kind":      {2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0},
		"no status": {0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		"fnfa n=2":  {1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0},
		"seqno -2":  {0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 1, 0},
	}
	for name, b := range bad {
		if _, err := ReadAck(bytes.NewReader(b)); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: got %v, want ErrProtocol", name, err)
		}
	}
}
