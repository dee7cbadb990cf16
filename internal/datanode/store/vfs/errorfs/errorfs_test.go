package errorfs

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"smarth/internal/datanode/store/vfs"
)

func newFS(t *testing.T) (*FS, string) {
	dir := t.TempDir()
	return Wrap(vfs.OS), dir
}

func TestReadFailsFromOffset(t *testing.T) {
	fs, dir := newFS(t)
	name := filepath.Join(dir, "blk_1")
	want := bytes.Repeat([]byte("0123456789"), 100)
	if err := vfs.WriteFile(fs, name, want, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := fs.Add(Rule{Ops: OpRead, Path: Glob("blk_*"), Err: syscall.EIO, From: 500})

	// Wholly before the fault: untouched.
	b := make([]byte, 100)
	if n, err := f.ReadAt(b, 400); n != 100 || err != nil || !bytes.Equal(b, want[400:500]) {
		t.Fatalf("ReadAt before the fault: %d, %v", n, err)
	}
	// Across it: the bytes before it, then EIO.
	n, err := f.ReadAt(b, 450)
	if n != 50 || !errors.Is(err, syscall.EIO) || !bytes.Equal(b[:50], want[450:500]) {
		t.Fatalf("ReadAt across the fault at 500: %d bytes, %v; want 50 and EIO", n, err)
	}
	// Read follows the file position.
	got, err := io.ReadAll(f)
	if len(got) != 500 || !errors.Is(err, syscall.EIO) || !bytes.Equal(got, want[:500]) {
		t.Fatalf("ReadAll: %d bytes, %v; want 500 and EIO", len(got), err)
	}
	if in.Hits() != 2 {
		t.Fatalf("hits %d, want 2", in.Hits())
	}
	in.Remove()
	if n, err := f.ReadAt(b, 900); n != 100 || err != nil {
		t.Fatalf("after Remove: %d, %v", n, err)
	}
}

func TestWriteFailsAfterBytes(t *testing.T) {
	fs, dir := newFS(t)
	name := filepath.Join(dir, "data", "blk_2")
	if err := fs.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		t.Fatal(err)
	}
	fs.Add(Rule{Ops: OpWrite, Path: Under(filepath.Join(dir, "data")), Err: syscall.ENOSPC, From: 1000})
	f, err := fs.OpenFile(name, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(make([]byte, 600), 0); err != nil {
		t.Fatal(err)
	}
	n, err := f.WriteAt(make([]byte, 600), 600)
	var pe *os.PathError
	if n != 400 || !errors.Is(err, syscall.ENOSPC) || !errors.As(err, &pe) || pe.Path != name {
		t.Fatalf("write across 1000: %d, %v; want 400 and ENOSPC naming %s", n, err, name)
	}
	if fi, _ := os.Stat(name); fi.Size() != 1000 {
		t.Fatalf("file is %d bytes, want the 1000 before the fault", fi.Size())
	}
	// Another file outside the directory is not affected.
	other := filepath.Join(dir, "other")
	if err := vfs.WriteFile(fs, other, make([]byte, 2000), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestFlipIsSilent(t *testing.T) {
	fs, dir := newFS(t)
	name := filepath.Join(dir, "blk_3")
	want := bytes.Repeat([]byte{0xaa}, 4096)
	if err := os.WriteFile(name, want, 0o600); err != nil {
		t.Fatal(err)
	}
	in := fs.Add(Rule{Ops: OpRead, Path: Glob("blk_3"), Flip: true, From: 1234})
	got, err := vfs.ReadFile(fs, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || got[1234] != 0xaa^0x10 || !bytes.Equal(got[:1234], want[:1234]) || !bytes.Equal(got[1235:], want[1235:]) {
		t.Fatalf("read with a flip at 1234: byte %#x, len %d", got[1234], len(got))
	}
	if in.Hits() != 1 {
		t.Fatalf("hits %d, want 1", in.Hits())
	}
	// The disk still holds the right bytes; only what reads return lies.
	if b, _ := os.ReadFile(name); !bytes.Equal(b, want) {
		t.Fatal("the flip changed the file")
	}
	// Opens and stats are not faulted by a flip rule.
	if _, err := fs.Stat(name); err != nil {
		t.Fatal(err)
	}
}

func TestGoneDiskFailsEverything(t *testing.T) {
	fs, dir := newFS(t)
	vol := filepath.Join(dir, "vol")
	if err := fs.MkdirAll(filepath.Join(vol, "rbw"), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := fs.OpenFile(filepath.Join(vol, "rbw", "blk_4"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := fs.Add(Rule{Ops: OpAll, Path: Under(vol), Err: syscall.EIO})
	checks := map[string]error{}
	_, checks["stat"] = fs.Stat(vol)
	_, checks["readdir"] = fs.ReadDir(vol)
	_, checks["open"] = fs.Open(filepath.Join(vol, "rbw", "blk_4"))
	_, checks["create"] = fs.CreateTemp(filepath.Join(vol, "rbw"), "x-")
	_, checks["write"] = f.Write([]byte("x"))
	checks["sync"] = f.Sync()
	checks["rename"] = fs.Rename(filepath.Join(dir, "a"), filepath.Join(vol, "b"))
	checks["remove"] = fs.Remove(filepath.Join(vol, "rbw", "blk_4"))
	checks["mkdir"] = fs.MkdirAll(filepath.Join(vol, "x"), 0o700)
	checks["truncate"] = fs.Truncate(filepath.Join(vol, "rbw", "blk_4"), 0)
	_, _, checks["statfs"] = fs.Statfs(vol)
	for what, err := range checks {
		if !errors.Is(err, syscall.EIO) {
			t.Errorf("%s on the gone volume: %v, want EIO", what, err)
		}
	}
	if in.Hits() != int64(len(checks)) {
		t.Errorf("hits %d, want %d", in.Hits(), len(checks))
	}
	// Outside the volume all is well.
	if _, err := fs.Stat(dir); err != nil {
		t.Fatal(err)
	}
	in.Remove()
	if _, err := fs.Stat(vol); err != nil {
		t.Fatalf("after Remove: %v", err)
	}
}

func TestOpenKinds(t *testing.T) {
	fs, dir := newFS(t)
	name := filepath.Join(dir, "blk_5")
	if err := os.WriteFile(name, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	fs.Add(Rule{Ops: OpOpenRead, Err: syscall.EIO})
	if _, err := fs.Open(name); !errors.Is(err, syscall.EIO) {
		t.Fatalf("open for reading: %v, want EIO", err)
	}
	f, err := fs.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("open for writing is not open-read: %v", err)
	}
	f.Close()
	if fd, ok := f.(vfs.Fder); !ok || fd.Fd() == 0 {
		t.Fatal("a wrapped file should give its descriptor")
	}
}

func TestFullDiskStatfs(t *testing.T) {
	fs, dir := newFS(t)
	capacity, avail, err := fs.Statfs(dir)
	if err != nil || capacity <= 0 || avail <= 0 {
		t.Fatalf("statfs %s: %d, %d, %v", dir, capacity, avail, err)
	}
	in := fs.Add(Rule{Ops: OpStatfs | OpWrite, Path: Under(dir), Full: true})
	c2, a2, err := fs.Statfs(dir)
	if err != nil || c2 != capacity || a2 != 0 {
		t.Fatalf("statfs of a full disk: %d, %d, %v; want %d, 0, nil", c2, a2, err, capacity)
	}
	// Full does not fault writes: pair it with an ENOSPC rule for that.
	if err := vfs.WriteFile(fs, filepath.Join(dir, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	in.Remove()
	if _, a3, _ := fs.Statfs(dir); a3 == 0 {
		t.Fatal("statfs still reports the disk full after Remove")
	}
}
