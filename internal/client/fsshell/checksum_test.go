package fsshell_test

import (
	"bytes"
	"context"
	"testing"

	"smarth/internal/client/fsshell"
)

// TestChecksumCommand: hdfs dfs -checksum's output lines; the value is
// the independently computed vector of client's TestFileChecksum.
func TestChecksumCommand(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i*7 + 3)
	}
	e.sh.Stdin = bytes.NewReader(data)
	must(t, e.sh.Put(ctx, []string{"-"}, "/k/f", fsshell.PutOptions{}))
	e.reset()
	must(t, e.sh.Checksum(ctx, []string{"/k/f", "/k"}))
	want := "/k/f\tMD5-of-0MD5-of-512CRC32C\t000002000000000000000000673b15f4ec4c7adc24b5005ff3929acd\n/k\tNONE\t\n"
	if e.out.String() != want {
		t.Fatalf("checksum printed %q; want %q", e.out, want)
	}
	if err := e.sh.Checksum(ctx, []string{"/k/nope"}); err == nil || err.Error() != "checksum: `/k/nope': No such file or directory" {
		t.Fatalf("checksum of a missing file: %v", err)
	}
}
