package client_test

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"strconv"
	"testing"

	"smarth/internal/client"
	"smarth/internal/testcluster"
)

// md5md5crc32c computes HDFS's file checksum straight from the bytes:
// per block, the MD5 of its big-endian CRC32C chunk checksums; then the MD5
// of those; serialised as int bytesPerCRC, long crcPerBlock (the first
// block's chunk count when there is more than one block), the MD5.
func md5md5crc32c(data []byte, blockSize, bpc int) (string, string) {
	table := crc32.MakeTable(crc32.Castagnoli)
	var md5s []byte
	var cpb int64
	nblocks := (len(data) + blockSize - 1) / blockSize
	for i := 0; i < nblocks; i++ {
		blk := data[i*blockSize : min((i+1)*blockSize, len(data))]
		var crcs []byte
		for j := 0; j < len(blk); j += bpc {
			crcs = binary.BigEndian.AppendUint32(crcs, crc32.Checksum(blk[j:min(j+bpc, len(blk))], table))
		}
		if i == 0 && nblocks > 1 {
			cpb = int64(len(crcs) / 4)
		}
		m := md5.Sum(crcs)
		md5s = append(md5s, m[:]...)
	}
	// HDFS digests its whole DataOutputBuffer array: zeros up to a
	// capacity that starts at 32 and doubles.
	capacity := 32
	for capacity < len(md5s) {
		capacity *= 2
	}
	sum := md5.Sum(append(md5s, make([]byte, capacity-len(md5s))...))
	out := binary.BigEndian.AppendUint32(nil, uint32(bpc))
	out = binary.BigEndian.AppendUint64(out, uint64(cpb))
	return "MD5-of-" + itoa(cpb) + "MD5-of-" + itoa(int64(bpc)) + "CRC32C", hex.EncodeToString(append(out, sum[:]...))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestFileChecksum: the file checksum is HDFS's MD5MD5CRC32C — checked
// against vectors computed by an independent implementation (a
// table-driven CRC32C and MD5 in Python following Hadoop's
// FileChecksumHelper, including its digest of the whole 32-byte-doubling
// DataOutputBuffer) and against the computation from the bytes here; an
// empty file gives HDFS's well-known empty checksum; a dead replica is
// skipped; the value is the same after a namenode restart.
func TestFileChecksum(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20})
	f := c.Client(t)
	ctx := context.Background()
	small := make([]byte, 1000)
	for i := range small {
		small[i] = byte(i*7 + 3)
	}
	big := make([]byte, 5<<19+1000) // 3 blocks, the last partial
	for i := range big {
		big[i] = byte(i % 251)
	}
	two := big[:2<<20] // 2 whole blocks: the MD5s fill HDFS's buffer exactly
	files := []struct {
		path      string
		data      []byte
		algorithm string
		hex       string // from the independent implementation
	}{
		{"/c/small", small, "MD5-of-0MD5-of-512CRC32C", "000002000000000000000000673b15f4ec4c7adc24b5005ff3929acd"},
		{"/c/big", big, "MD5-of-2048MD5-of-512CRC32C", "00000200000000000000080014903904e13eacc51a3d8d4b6aaf3905"},
		{"/c/two", two, "MD5-of-2048MD5-of-512CRC32C", "000002000000000000000800a391fea09c9b538b4d0e11582913a91a"},
		// HDFS's answer for a file without blocks: MD5 of nothing.
		{"/c/empty", nil, "MD5-of-0MD5-of-0CRC32", "00000000000000000000000070bc8f4b72a86921468bf8e8441dce51"},
	}
	for _, fl := range files {
		w, err := f.Create(ctx, fl.path, client.CreateOptions{Replication: 3})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(fl.data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if len(fl.data) > 0 {
			alg, hx := md5md5crc32c(fl.data, 1<<20, 512)
			if alg != fl.algorithm || hx != fl.hex {
				t.Fatalf("%s: the test's own computation gives %s %s; the vector says %s %s", fl.path, alg, hx, fl.algorithm, fl.hex)
			}
		}
	}
	check := func(when string) {
		t.Helper()
		for _, fl := range files {
			sum, err := f.FileChecksum(ctx, fl.path)
			if err != nil {
				t.Fatalf("%s: %s: %v", when, fl.path, err)
			}
			if sum.Algorithm() != fl.algorithm || sum.String() != fl.hex {
				t.Fatalf("%s: %s: checksum %s %s; want %s %s", when, fl.path, sum.Algorithm(), sum, fl.algorithm, fl.hex)
			}
		}
	}
	check("written")
	c.StopDataNode(0)
	check("with a datanode down")
	c.RestartNameNode()
	check("after a namenode restart")
	if _, err := f.FileChecksum(ctx, "/c"); err == nil {
		t.Fatal("checksum of a directory succeeded")
	}
}
