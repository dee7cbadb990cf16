package datanode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"smarth/internal/blocktoken"
	"smarth/internal/datatransfer"
	"smarth/internal/rpc/dfspb"
)

// socketDir is a fresh directory with a short path: a unix socket's path
// has at most 107 bytes, and t.TempDir's grow with the test's name.
func socketDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startShortCircuitNode starts a datanode with domain_socket_path under
// a fresh directory (missing, so the datanode makes it).
func startShortCircuitNode(t *testing.T) *DataNode {
	t.Helper()
	nn := startFakeNameNode(t)
	sock := filepath.Join(socketDir(t), "sockets", "dn_"+datatransfer.PortToken+".sock")
	dn, _ := startDataNode(t, nn, "", func(c *Config) { c.DomainSocketPath = sock })
	return dn
}

// askFds sends op on dn's domain socket and returns the response and, on
// success, the files passed with it.
func askFds(t *testing.T, dn *DataNode, op *dfspb.ShortCircuitFdsOp) (*dfspb.OpResponse, []*os.File) {
	t.Helper()
	c, err := net.Dial("unix", dn.DomainSocket())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	uc := c.(*net.UnixConn)
	_ = uc.SetDeadline(time.Now().Add(20 * time.Second))
	if op.ClientName == "" {
		op.ClientName = "test-client"
	}
	if err := datatransfer.WriteShortCircuitOp(uc, op); err != nil {
		t.Fatal(err)
	}
	resp, err := datatransfer.ReadResponse(uc)
	if err != nil {
		t.Fatalf("reading the short-circuit response: %v", err)
	}
	if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_SUCCESS {
		// Nothing may follow a refusal: the next read is the hang-up.
		if files, err := datatransfer.ReceiveFDs(uc, "data", "meta"); err == nil {
			t.Fatalf("refused (%v) but %d descriptors came anyway", datatransfer.ResponseError(resp), len(files))
		}
		return resp, nil
	}
	files, err := datatransfer.ReceiveFDs(uc, "data", "meta")
	if err != nil {
		t.Fatalf("granted but no descriptors: %v", err)
	}
	t.Cleanup(func() {
		for _, f := range files {
			f.Close()
		}
	})
	return resp, files
}

func block(id, gs uint64, n int) *dfspb.ExtendedBlock {
	return &dfspb.ExtendedBlock{BlockId: id, GenerationStamp: gs, NumBytes: int64(n)}
}

// A local client with the block's read token gets descriptors of the
// replica's two files: the block's bytes and checksums that match them.
// The descriptors are read-only, and the files on disk stay the daemon's
// alone; the socket, in a 0755 directory the datanode made, is 0666.
func TestShortCircuitGrantsReadOnlyReplicaFiles(t *testing.T) {
	dn := startShortCircuitNode(t)
	data := randomData(300_001, 3)
	writeBlock(t, 7, 1, data, dn)

	resp, files := askFds(t, dn, &dfspb.ShortCircuitFdsOp{Block: block(7, 1, len(data)), Token: testToken(7, 1, blocktoken.Read)})
	if err := datatransfer.ResponseError(resp); err != nil {
		t.Fatalf("refused: %v", err)
	}
	got, err := io.ReadAll(io.NewSectionReader(files[0], 0, 1<<30))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("block descriptor gave %d bytes (err %v), want the %d written", len(got), err, len(data))
	}
	meta, err := io.ReadAll(io.NewSectionReader(files[1], 0, 1<<30))
	if err != nil {
		t.Fatal(err)
	}
	bpc, err := datatransfer.ParseMetaHeader(meta)
	if err != nil {
		t.Fatal(err)
	}
	if i := datatransfer.VerifyChecksums(meta[datatransfer.MetaHeaderLen:], got, bpc); i >= 0 {
		t.Fatalf("meta descriptor's checksum %d does not match the block", i)
	}
	for _, f := range files {
		if _, err := f.WriteAt([]byte("x"), 0); !errors.Is(err, syscall.EBADF) {
			t.Errorf("writing through the passed descriptor of %s: %v, want EBADF (read-only)", f.Name(), err)
		}
		if err := f.Truncate(0); err == nil {
			t.Errorf("truncating %s through the passed descriptor succeeded", f.Name())
		}
	}
	mustRead(t, dn, 7, 1, data) // untouched
	// A grant is counted once its descriptors are sent, which is after the
	// client has them: wait for the count, then demand it is exactly one.
	waitFor(t, "the grant counted", func() bool { return counterValue(t, dn.metrics.shortCircuitGrants) >= 1 })
	if n := counterValue(t, dn.metrics.shortCircuitGrants); n != 1 {
		t.Errorf("short_circuit_grants_total = %v, want 1", n)
	}
	sock, err := os.Stat(dn.DomainSocket())
	if err != nil || sock.Mode().Perm() != 0o666 || sock.Mode().Type() != os.ModeSocket {
		t.Errorf("socket %s: %v %v, want a 0666 socket", dn.DomainSocket(), sock.Mode(), err)
	}
	if dir, err := os.Stat(filepath.Dir(dn.DomainSocket())); err != nil || dir.Mode().Perm() != 0o755 {
		t.Errorf("socket directory: %v %v, want 0755", dir.Mode(), err)
	}
	for _, r := range dn.store.Replicas() {
		h, err := dn.store.Open(r.BlockID, r.GS)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []interface{ Name() string }{h.Data, h.Meta} {
			if st, err := os.Stat(f.Name()); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("%s: %v %v, want 0600 (replicas at rest are the daemon's alone)", f.Name(), st.Mode(), err)
			}
		}
		h.Close()
	}
}

// The token is the authorization, as on the data port: a user who may
// read block 7 gets nothing of block 8, and neither does a request with
// no token, a write token or an expired one.
func TestShortCircuitRefusesWithoutTheBlocksReadToken(t *testing.T) {
	dn := startShortCircuitNode(t)
	writeBlock(t, 7, 1, randomData(70_000, 1), dn)
	secret := randomData(70_000, 2)
	writeBlock(t, 8, 1, secret, dn)

	expired := testKeys().Issue(blocktoken.Identifier{User: "test-user", BlockID: 8, GS: 1, Modes: blocktoken.Read},
		time.Now().Add(-blocktoken.DefaultLifetime-time.Minute))
	for name, tok := range map[string]*dfspb.BlockToken{
		"another block's token": testToken(7, 1, blocktoken.Read),
		"no token":              nil,
		"a write token":         testToken(8, 1, blocktoken.Write),
		"an expired token":      expired,
		"a forged token":        {Identifier: testToken(8, 1, blocktoken.Read).GetIdentifier(), Password: bytes.Repeat([]byte{1}, 32)},
	} {
		resp, _ := askFds(t, dn, &dfspb.ShortCircuitFdsOp{Block: block(8, 1, len(secret)), Token: tok})
		if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_ERROR_ACCESS_TOKEN {
			t.Errorf("%s: %v, want an access token refusal", name, datatransfer.ResponseError(resp))
		}
	}
	if n := counterValue(t, dn.metrics.shortCircuitRefusals); n != 5 {
		t.Errorf("short_circuit_refusals_total = %v, want 5", n)
	}
	if n := counterValue(t, dn.metrics.shortCircuitGrants); n != 0 {
		t.Errorf("short_circuit_grants_total = %v, want 0", n)
	}
}

// Only a finalized replica at the token's stamp, holding the bytes asked
// for, is handed out: a replica still being written may change under the
// reader's checksums.
func TestShortCircuitServesOnlyFinalizedReplicas(t *testing.T) {
	dn := startShortCircuitNode(t)
	data := randomData(100_000, 4)
	writeBlock(t, 7, 1, data, dn)
	op := &dfspb.WriteBlockOp{Block: &dfspb.ExtendedBlock{BlockId: 9, GenerationStamp: 1},
		ClientName: "test-client", Stage: dfspb.WriteStage_PIPELINE_SETUP_CREATE, Mode: dfspb.WriteMode_CLASSIC}
	p, resp := openPipeline(t, op, dn)
	if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_SUCCESS {
		t.Fatal(datatransfer.ResponseError(resp))
	}
	if err := p.send(randomData(64<<10, 5)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the open block's first packet acknowledged", func() bool { return p.ackedThrough() >= 0 })

	for name, c := range map[string]struct {
		b    *dfspb.ExtendedBlock
		want dfspb.OpStatus
	}{
		"a replica being written":         {block(9, 1, 64<<10), dfspb.OpStatus_OP_STATUS_ERROR_INVALID},
		"more bytes than the replica has": {block(7, 1, len(data)+1), dfspb.OpStatus_OP_STATUS_ERROR_INVALID},
		"a later stamp":                   {block(7, 2, len(data)), dfspb.OpStatus_OP_STATUS_ERROR_NOT_FOUND},
		"a block not here":                {block(11, 1, 10), dfspb.OpStatus_OP_STATUS_ERROR_NOT_FOUND},
	} {
		b := c.b
		resp, _ := askFds(t, dn, &dfspb.ShortCircuitFdsOp{Block: b, Token: testToken(b.GetBlockId(), b.GetGenerationStamp(), blocktoken.Read)})
		if resp.GetStatus() != c.want {
			t.Errorf("%s: %v, want status %v", name, datatransfer.ResponseError(resp), c.want)
		}
	}
}

// A request announcing a header longer than the bound is refused from
// its 7-byte prefix, and the datanode answers at once rather than
// waiting for the bytes announced.
func TestShortCircuitRefusesOversizedRequest(t *testing.T) {
	dn := startShortCircuitNode(t)
	c, err := net.Dial("unix", dn.DomainSocket())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	pre := binary.BigEndian.AppendUint16(nil, datatransfer.Version)
	pre = append(pre, byte(datatransfer.OpRequestShortCircuitFds))
	pre = binary.BigEndian.AppendUint32(pre, 1<<20)
	if _, err := c.Write(pre); err != nil {
		t.Fatal(err)
	}
	resp, err := datatransfer.ReadResponse(c)
	if err != nil {
		t.Fatalf("no answer to an oversized request: %v", err)
	}
	if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_ERROR_INVALID || !strings.Contains(resp.GetMessage(), "exceeds") {
		t.Errorf("answer %v, want an invalid-request refusal naming the bound", datatransfer.ResponseError(resp))
	}
}

// A socket path with a directory others may write is refused at start,
// with HDFS's message naming the directory; so is one that is not
// absolute, at the config check.
func TestShortCircuitRefusesUnsafeSocketDirectory(t *testing.T) {
	nn := startFakeNameNode(t)
	open := filepath.Join(socketDir(t), "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.NameNode, cfg.DataDir = nn.addr, t.TempDir()
	cfg.Auth = "simple"
	cfg.DataAddr, cfg.IPCAddr, cfg.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	cfg.DomainSocketPath = filepath.Join(open, "sockets", "dn_"+datatransfer.PortToken+".sock")
	d, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = d.Start()
	if err == nil {
		d.Close()
		t.Fatal("started with its socket under a world-writable directory")
	}
	if want := "the path component: '" + open + "' in"; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "is world-writable") ||
		!strings.Contains(err.Error(), "domain_socket_path") {
		t.Errorf("error %q, want domain_socket_path and %q ... is world-writable", err, want)
	}

	if err := os.Chmod(open, 0o770); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(open, &st); err != nil {
		t.Fatal(err)
	}
	if st.Gid == 0 {
		// A root-group directory passes (HDFS's rule): give it another.
		if err := os.Chown(open, -1, 65534); err != nil {
			t.Logf("group-writable case not run: %v", err)
			return
		}
	}
	d, err = New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err = d.Start(); err == nil {
		d.Close()
		t.Fatal("started with its socket under a group-writable directory")
	}
	if !strings.Contains(err.Error(), "is group-writable, and the group is not root") {
		t.Errorf("error %q, want the group-writable refusal", err)
	}

	cfg.DomainSocketPath = "sockets/dn.sock"
	if _, err := New(cfg, nil); err == nil || !strings.Contains(err.Error(), "domain_socket_path: \"sockets/dn.sock\" must be an absolute path") {
		t.Errorf("relative path: %v", err)
	}
}

// Close removes the socket, so that clients of a stopped datanode read
// over TCP at once; a socket left by a killed one is replaced at start.
func TestShortCircuitSocketRemovedAndReplaced(t *testing.T) {
	nn := startFakeNameNode(t)
	sock := filepath.Join(socketDir(t), "dn.sock")
	stale, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close() // a socket file nobody serves, as a kill -9 leaves it
	dn, _ := startDataNode(t, nn, "", func(c *Config) { c.DomainSocketPath = sock })
	if dn.DomainSocket() != sock {
		t.Fatalf("socket %q, want %q", dn.DomainSocket(), sock)
	}
	dn.Close()
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Close the socket is still there: %v", err)
	}
}
