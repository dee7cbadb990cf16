package datatransfer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"

	"smarth/internal/rpc/dfspb"
)

// An op header or response that announces MaxHeaderLen and stops after a
// few bytes costs its reader what arrived, not the announced length; a
// whole header still decodes.
func TestReadAllocatesAsBytesArrive(t *testing.T) {
	op := binary.BigEndian.AppendUint16(nil, Version)
	op = append(op, byte(OpReadBlock))
	op = binary.BigEndian.AppendUint32(op, MaxHeaderLen)
	op = append(op, 0x0a)
	resp := binary.BigEndian.AppendUint32(nil, MaxHeaderLen)
	resp = append(resp, 0x08, 0x01)
	const rounds = 100
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range rounds {
		if _, _, err := ReadOp(bytes.NewReader(op)); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("truncated op: %v, want unexpected EOF", err)
		}
		if _, err := ReadResponse(bytes.NewReader(resp)); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("truncated response: %v, want unexpected EOF", err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / (2 * rounds); per > 4<<10 {
		t.Fatalf("a truncated message announcing %d bytes allocated %d bytes", MaxHeaderLen, per)
	}
	// A header larger than the first buffer arrives whole and decodes.
	big := &dfspb.ReadBlockOp{ClientName: string(bytes.Repeat([]byte("c"), 100_000))}
	b, err := AppendOp(nil, big)
	if err != nil {
		t.Fatal(err)
	}
	_, msg, err := ReadOp(bytes.NewReader(b))
	if err != nil || msg.(*dfspb.ReadBlockOp).GetClientName() != big.ClientName {
		t.Fatalf("a 100 kB header: %v", err)
	}
}
