package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestReadFailsOverCorruptReplicaAndReportsIt(t *testing.T) {
	c := newFake(t, 3, "classic")
	data := testData(2*testBlock+100, 20)
	if err := put(t, c.fs, "/f", data, CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	blocks, _ := c.nn.FileBlocks("/f")
	c.dns[0].Corrupt(blocks[1].GetBlockId()) // the closest replica of block 2
	if got := readAll(t, c.fs, "/f"); !bytes.Equal(got, data) {
		t.Fatal("read returned different bytes")
	}
	want := []string{fmt.Sprintf("%d@dn1", blocks[1].GetBlockId())}
	if got := c.nn.BadReports(); len(got) != 1 || got[0] != want[0] {
		t.Fatalf("bad replica reports %v, want %v", got, want)
	}
}

func TestReadFailsOverDeadDatanode(t *testing.T) {
	c := newFake(t, 3, "classic")
	data := testData(3*testBlock, 21)
	if err := put(t, c.fs, "/f", data, CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := c.fs.Open(context.Background(), "/f")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, testBlock/2)
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatal(err)
	}
	c.dns[0].Kill() // the replica being read from
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(buf, rest...), data) {
		t.Fatal("bytes differ after failing over")
	}
	// ReadAt on the same reader skips the dead node too.
	p := make([]byte, 1000)
	if _, err := r.ReadAt(p, 2*testBlock+5); err != nil || !bytes.Equal(p, data[2*testBlock+5:2*testBlock+1005]) {
		t.Fatalf("ReadAt after failover: %v", err)
	}
}

func TestReadAllReplicasCorruptClearError(t *testing.T) {
	c := newFake(t, 3, "classic")
	data := testData(testBlock, 22)
	if err := put(t, c.fs, "/f", data, CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	blocks, _ := c.nn.FileBlocks("/f")
	for _, d := range c.dns {
		d.Corrupt(blocks[0].GetBlockId())
	}
	r, err := c.fs.Open(context.Background(), "/f")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = io.ReadAll(r)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "no replica could be read") || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("err = %v", err)
	}
	for _, n := range []string{"dn1", "dn2", "dn3"} {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error does not name %s: %v", n, err)
		}
	}
}

func TestReadEOFSeekAndEmpty(t *testing.T) {
	c := newFake(t, 3, "classic")
	if err := put(t, c.fs, "/e", nil, CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := c.fs.Open(context.Background(), "/e")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := r.Read(make([]byte, 10)); n != 0 || err != io.EOF {
		t.Fatalf("empty file read: %d %v", n, err)
	}
	data := testData(testBlock+3, 23)
	if err := put(t, c.fs, "/g", data, CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err = c.fs.Open(context.Background(), "/g")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Seek(testBlock-2, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(b, data[testBlock-2:]) {
		t.Fatalf("read across the block boundary after Seek: %v", err)
	}
	if n, err := r.ReadAt(make([]byte, 10), int64(len(data))-4); n != 4 || err != io.EOF {
		t.Fatalf("ReadAt past the end: %d %v", n, err)
	}
}

func TestLeaseRenewedWhileWriting(t *testing.T) {
	c := newFake(t, 3, "classic")
	c.fs.cfg.LeaseRenewal = 5 * time.Millisecond
	w, err := c.fs.Create(context.Background(), "/l", CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "two lease renewals", func() bool { return len(c.nn.Calls("RenewLease")) >= 2 })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// ReadFrom fills packets from short reads and WriteTo streams packets;
// both are what io.Copy picks.
func TestReadFromAndWriteTo(t *testing.T) {
	c := newFake(t, 3, "classic")
	data := testData(2*testBlock+333, 24)
	w, err := c.fs.Create(context.Background(), "/rf", CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := w.ReadFrom(iotest.HalfReader(bytes.NewReader(data)))
	if err != nil || n != int64(len(data)) {
		t.Fatalf("ReadFrom: %d %v", n, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := c.fs.Open(context.Background(), "/rf")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Seek(100, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if n, err := r.WriteTo(&out); err != nil || n != int64(len(data)-100) || !bytes.Equal(out.Bytes(), data[100:]) {
		t.Fatalf("WriteTo: %d %v, equal %v", n, err, bytes.Equal(out.Bytes(), data[100:]))
	}
}
