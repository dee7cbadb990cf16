package client

import (
	"context"
	"testing"
	"time"

	"smarth/internal/client/fakedfs"
)

// BenchmarkFileWriter uploads 8 MiB files through one fake datanode on
// loopback; -benchmem shows what the client's write path allocates per
// file (pooled packet buffers keep it far below the file size).
func BenchmarkFileWriter(b *testing.B) {
	dn := fakedfs.StartDatanode(b, "dn1")
	nn := fakedfs.NewNamenode(dn)
	nn.BlockSize = 4 << 20
	f, err := NewWithClient(Config{WriteMode: "classic", IOTimeout: 10 * time.Second, Seed: 1}, nn)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	data := testData(8<<20, 1)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		w, err := f.Create(context.Background(), "/bench", CreateOptions{Overwrite: true, Replication: 1})
		if err != nil {
			b.Fatal(err)
		}
		for off := 0; off < len(data); off += 1 << 20 {
			if _, err := w.Write(data[off : off+1<<20]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
