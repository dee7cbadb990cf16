package fsshell_test

import (
	"bytes"
	"context"
	"strings"
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
	// A directory is an error, as hdfs dfs -checksum's
	// PathIsDirectoryException; the files beside it are still printed.
	err := e.sh.Checksum(ctx, []string{"/k/f", "/k"})
	want := "/k/f\tMD5-of-0MD5-of-512CRC32C\t000002000000000000000000673b15f4ec4c7adc24b5005ff3929acd\n"
	if e.out.String() != want || err == nil || !strings.Contains(e.err.String(), "checksum: `/k': Is a directory") {
		t.Fatalf("checksum printed %q, err %v (%q); want %q and /k: Is a directory", e.out, err, e.err, want)
	}
	if err := e.sh.Checksum(ctx, []string{"/k/nope"}); err == nil || err.Error() != "checksum: `/k/nope': No such file or directory" {
		t.Fatalf("checksum of a missing file: %v", err)
	}
}
