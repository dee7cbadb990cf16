package datanode

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"hash/crc32"
	"testing"
	"time"

	"smarth/internal/blocktoken"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

func askChecksum(t *testing.T, dn *DataNode, op *dfspb.BlockChecksumOp) *dfspb.OpResponse {
	t.Helper()
	c, err := dialRaw(dn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if err := datatransfer.WriteOp(c, op); err != nil {
		t.Fatal(err)
	}
	resp, err := datatransfer.ReadResponse(bufio.NewReader(c))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// crcMD5 is the MD5 of the big-endian CRC32C of each 512-byte chunk.
func crcMD5(data []byte) []byte {
	var crcs []byte
	for i := 0; i < len(data); i += 512 {
		crcs = binary.BigEndian.AppendUint32(crcs, crc32.Checksum(data[i:min(i+512, len(data))], crc32.MakeTable(crc32.Castagnoli)))
	}
	m := md5.Sum(crcs)
	return m[:]
}

// TestBlockChecksum: BLOCK_CHECKSUM answers the MD5 of the chunk CRCs
// over the bytes asked for (the last partial chunk recomputed when the
// replica is longer), refuses more than the replica holds, and needs a
// read token.
func TestBlockChecksum(t *testing.T) {
	nn := startFakeNameNode(t)
	dn, _ := startDataNode(t, nn, "", nil)
	data := randomData(3000, 7)
	writeBlock(t, 600, 1, data, dn)
	tok := testToken(600, 1, blocktoken.Read)
	for _, n := range []int{3000, 1024, 1000, 0} {
		resp := askChecksum(t, dn, &dfspb.BlockChecksumOp{Block: &dfspb.ExtendedBlock{BlockId: 600, GenerationStamp: 1, NumBytes: int64(n)}, Token: tok})
		sum := resp.GetChecksum()
		if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_SUCCESS || sum.GetBytesPerCrc() != 512 ||
			sum.GetCrcPerBlock() != uint64((n+511)/512) || !bytes.Equal(sum.GetMd5(), crcMD5(data[:n])) {
			t.Fatalf("checksum of the first %d bytes: %v", n, resp)
		}
	}
	resp := askChecksum(t, dn, &dfspb.BlockChecksumOp{Block: &dfspb.ExtendedBlock{BlockId: 600, GenerationStamp: 1, NumBytes: 5000}, Token: tok})
	if resp.GetStatus() == dfspb.OpStatus_OP_STATUS_SUCCESS {
		t.Fatal("checksum of more bytes than the replica holds succeeded")
	}
	resp = askChecksum(t, dn, &dfspb.BlockChecksumOp{Block: &dfspb.ExtendedBlock{BlockId: 600, GenerationStamp: 1, NumBytes: 3000}})
	wantTokenRefused(t, resp, "no token")
}
