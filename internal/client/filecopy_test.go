package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyBatchSizes runs f with the default batch, with batches smaller
// than a block and not packet aligned (they end inside packets' data and
// across block boundaries), and with one batch larger than the file.
func copyBatchSizes(t *testing.T, f func(t *testing.T)) {
	for _, size := range []int{copyBatchBytes, 100_000, 4 << 20} {
		t.Run(fmt.Sprintf("batch=%d", size), func(t *testing.T) {
			old := copyBatchBytes
			copyBatchBytes = size
			t.Cleanup(func() { copyBatchBytes = old })
			f(t)
		})
	}
}

// copyTo opens p, seeks to from and copies the rest with CopyToFile into
// a new local file that already holds prefix; it returns the local file's
// content, the count and the error.
func copyTo(t *testing.T, fs *FileSystem, p string, from int64, prefix []byte) ([]byte, int64, error) {
	t.Helper()
	r, err := fs.Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Seek(from, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	dst, err := os.Create(filepath.Join(t.TempDir(), "copy"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := dst.Write(prefix); err != nil {
		t.Fatal(err)
	}
	n, cerr := r.CopyToFile(dst, nil)
	if pos, err := dst.Seek(0, io.SeekCurrent); err != nil || pos != int64(len(prefix))+n {
		t.Fatalf("destination offset %d (%v) after copying %d bytes behind a %d-byte prefix", pos, err, n, len(prefix))
	}
	got, err := os.ReadFile(dst.Name())
	if err != nil {
		t.Fatal(err)
	}
	return got, n, cerr
}

func TestCopyToFileByteExactAcrossBlocks(t *testing.T) {
	copyBatchSizes(t, func(t *testing.T) {
		c := newFake(t, 3, "classic")
		data := testData(3*testBlock+777, 30)
		if err := put(t, c.fs, "/f", data, CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, from := range []int64{0, 100, testBlock - 1, 3 * testBlock} {
			got, n, err := copyTo(t, c.fs, "/f", from, []byte("HEAD"))
			if err != nil || n != int64(len(data))-from {
				t.Fatalf("from %d: copied %d of %d: %v", from, n, int64(len(data))-from, err)
			}
			if want := append([]byte("HEAD"), data[from:]...); !bytes.Equal(got, want) {
				t.Fatalf("from %d: local file (%d bytes) differs from the remote bytes (%d)", from, len(got), len(want))
			}
		}
	})
}

func TestCopyToFileFailsOverCorruptReplica(t *testing.T) {
	copyBatchSizes(t, func(t *testing.T) {
		c := newFake(t, 3, "classic")
		data := testData(2*testBlock+100, 31)
		if err := put(t, c.fs, "/f", data, CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		blocks, _ := c.nn.FileBlocks("/f")
		c.dns[0].Corrupt(blocks[1].GetBlockId()) // the closest replica of block 2
		got, n, err := copyTo(t, c.fs, "/f", 0, nil)
		if err != nil || n != int64(len(data)) || !bytes.Equal(got, data) {
			t.Fatalf("copied %d of %d, equal %v: %v", n, len(data), bytes.Equal(got, data), err)
		}
		if got := c.nn.BadReports(); len(got) != 1 || !strings.HasSuffix(got[0], "@dn1") {
			t.Fatalf("bad replica reports %v, want block 2 on dn1", got)
		}
	})
}

// With every replica of block 2 corrupt, the copy fails naming the block
// and each node, and the local file holds exactly block 1: verified
// bytes, no zeros from the reservation and nothing of block 2.
func TestCopyToFileAllReplicasCorrupt(t *testing.T) {
	copyBatchSizes(t, func(t *testing.T) {
		c := newFake(t, 3, "classic")
		data := testData(3*testBlock, 32)
		if err := put(t, c.fs, "/f", data, CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		blocks, _ := c.nn.FileBlocks("/f")
		for _, d := range c.dns {
			d.Corrupt(blocks[1].GetBlockId())
		}
		got, n, err := copyTo(t, c.fs, "/f", 0, nil)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "no replica could be read") || !strings.Contains(err.Error(), "checksum mismatch") {
			t.Fatalf("err = %v", err)
		}
		for _, name := range []string{"dn1", "dn2", "dn3"} {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("error does not name %s: %v", name, err)
			}
		}
		if n != testBlock || !bytes.Equal(got, data[:testBlock]) {
			t.Fatalf("copied %d bytes, local file %d bytes (equal to block 1: %v); want exactly block 1 (%d)",
				n, len(got), bytes.Equal(got, data[:min(len(got), testBlock)]), testBlock)
		}
	})
}

// A destination that cannot be written fails the copy with the local
// file's name and the system's reason, not a remote error.
func TestCopyToFileWriteErrorNamesFile(t *testing.T) {
	c := newFake(t, 3, "classic")
	data := testData(2*testBlock, 33)
	if err := put(t, c.fs, "/f", data, CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "ro")
	if err := os.WriteFile(name, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dst, err := os.Open(name) // read only
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	r, err := c.fs.Open(context.Background(), "/f")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, err := r.CopyToFile(dst, nil)
	if err == nil || n != 0 || !strings.Contains(err.Error(), "writing "+name) || !strings.Contains(err.Error(), "bad file descriptor") {
		t.Fatalf("copied %d: err = %v", n, err)
	}
}
