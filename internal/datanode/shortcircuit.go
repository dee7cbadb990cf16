package datanode

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"smarth/internal/blocktoken"
	"smarth/internal/datanode/store"
	"smarth/internal/datatransfer"
	"smarth/internal/diskperm"
	"smarth/internal/rpc/dfspb"
)

// Short-circuit local reads (docs/security.md, "Short-circuit local
// reads"), HDFS's design. A client on this host sends
// REQUEST_SHORT_CIRCUIT_FDS with the block and its read token over the
// unix socket at domain_socket_path; this node checks the token exactly as
// for READ_BLOCK, opens the finalized replica's block and meta files
// read-only and passes the two descriptors back (SCM_RIGHTS). The client
// verifies the checksums from the meta file and copies the block with the
// kernel: no byte crosses a socket or passes through this process.
//
// Why it is safe: the replica files stay 0600 and the daemon's; a
// descriptor is given only for the replica the token names, after the
// data port's check, and only read-only (a write through it fails, and
// reopening it through /proc/PID/fd checks the file's mode again). The
// socket is open to every local user, as HDFS's is: the token is the
// authorization. The peer's uid and pid (SO_PEERCRED) are logged with
// every grant and refusal.

// maxSocketPath is the longest unix socket path: sun_path is 108 bytes on
// Linux, the last one the terminating NUL.
const maxSocketPath = 107

// validateSocketPath checks domain_socket_path's form (its directories
// are checked at start, when they exist).
func validateSocketPath(p string) error {
	switch {
	case p == "":
		return nil
	case !filepath.IsAbs(p):
		return fmt.Errorf("domain_socket_path: %q must be an absolute path", p)
	case strings.HasSuffix(p, "/"):
		return fmt.Errorf("domain_socket_path: %q must not end in a slash (it names a socket, not a directory)", p)
	case len(datatransfer.SocketPath(p, 65535)) > maxSocketPath:
		return fmt.Errorf("domain_socket_path: %q is %d bytes with a port in it; a unix socket path has at most %d", p, len(datatransfer.SocketPath(p, 65535)), maxSocketPath)
	}
	return nil
}

// listenDomainSocket creates the short-circuit socket for the data port:
// its directory (0755, if missing), the check that no one but root and
// this daemon's user can replace anything on the way to it, and the
// socket itself, 0666 whatever the umask.
func (d *DataNode) listenDomainSocket(dataPort int) (*net.UnixListener, error) {
	path := datatransfer.SocketPath(d.cfg.DomainSocketPath, dataPort)
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		// Clients of other users must reach the socket; the umask may
		// have taken their search bit away.
		if err := os.Chmod(dir, 0o755); err != nil {
			return nil, err
		}
	}
	if err := diskperm.CheckSocketDirs(path); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("%s exists and is not a socket; not removing it", path)
		}
		// A socket left by a datanode that was killed is removed; one a
		// live process still serves is not taken over.
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s is in use by another process (give each datanode its own socket with %s in the path)", path, datatransfer.PortToken)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	// Every local user may ask (the token decides), as HDFS's socket.
	if err := os.Chmod(path, 0o666); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// serveShortCircuit accepts connections on the domain socket; each asks
// for one replica's descriptors.
func (d *DataNode) serveShortCircuit(ln *net.UnixListener) {
	for {
		nc, ok := d.accept(ln, "domain socket")
		if !ok {
			return
		}
		c := nc.(*net.UnixConn) // what a UnixListener accepts
		// Every peer of this socket is on this host: it gets the data
		// port's share of one host, and one more waits for none (the
		// client reads over TCP instead).
		select {
		case d.scSlots <- struct{}{}:
		default:
			d.metrics.shortCircuitRefusals.Inc()
			c.Close()
			continue
		}
		if !d.track(c) {
			<-d.scSlots
			continue
		}
		d.goRun(func() {
			defer func() { <-d.scSlots }()
			d.serveShortCircuitConn(c)
		})
	}
}

// serveShortCircuitConn answers one REQUEST_SHORT_CIRCUIT_FDS.
func (d *DataNode) serveShortCircuitConn(c *net.UnixConn) {
	defer d.untrack(c)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(d.cfg.IOTimeout))
	peer := peerOf(c)
	op, err := datatransfer.ReadShortCircuitOp(c)
	if err != nil {
		if errors.Is(err, datatransfer.ErrProtocol) {
			d.metrics.shortCircuitRefusals.Inc()
			d.log.Warn("bad short-circuit request", "peer", peer, "err", err)
			_ = d.writeResponse(c, errResponse(dfspb.OpStatus_OP_STATUS_ERROR_INVALID, err.Error()))
		}
		return
	}
	b := op.GetBlock()
	name := store.BlockName(b.GetBlockId(), b.GetGenerationStamp())
	files, resp := d.shortCircuitFiles(op, peer)
	if resp != nil {
		d.metrics.shortCircuitRefusals.Inc()
		if resp.GetStatus() != dfspb.OpStatus_OP_STATUS_ERROR_ACCESS_TOKEN { // checkAccess has logged it
			d.log.Info("short-circuit read refused", "block", name, "client", op.GetClientName(), "peer", peer, "err", resp.GetMessage())
		}
		_ = d.writeResponse(c, resp)
		return
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	if err := d.writeResponse(c, &dfspb.OpResponse{}); err != nil {
		return
	}
	if err := datatransfer.SendFDs(c, files...); err != nil {
		d.log.Warn("short-circuit descriptors not sent", "block", name, "peer", peer, "err", err)
		return
	}
	d.metrics.shortCircuitGrants.Inc()
	// Every grant, as HDFS's clienttrace line: who got which replica.
	d.log.Info("short-circuit read granted", "op", datatransfer.OpRequestShortCircuitFds.String(), "block", name,
		"length", b.GetNumBytes(), "client", op.GetClientName(), "peer", peer)
}

// shortCircuitFiles checks a request and opens the replica's block and
// meta files, or says why not.
func (d *DataNode) shortCircuitFiles(op *dfspb.ShortCircuitFdsOp, peer string) ([]*os.File, *dfspb.OpResponse) {
	b := op.GetBlock()
	id, gs := b.GetBlockId(), b.GetGenerationStamp()
	want := blocktoken.Want{BlockID: id, GS: gs, Mode: blocktoken.Read}
	if resp := d.checkAccess(datatransfer.OpRequestShortCircuitFds.String(), op.GetToken(), want, peer); resp != nil {
		return nil, resp
	}
	h, err := d.store.Open(id, gs)
	if err != nil {
		return nil, errResponse(storeStatus(err), err.Error())
	}
	// Only a finalized replica at the token's stamp: its bytes no longer
	// change, so what the client verifies now stays what it reads. It
	// must hold the located length the client will read.
	if h.State != store.Finalized || h.GS != gs || b.GetNumBytes() < 0 || b.GetNumBytes() > h.Visible {
		h.Close()
		return nil, errResponse(dfspb.OpStatus_OP_STATUS_ERROR_INVALID, fmt.Sprintf(
			"%s is %s with %d bytes; short-circuit reads serve a finalized replica at stamp %d holding the %d bytes asked for",
			h.Name(), h.State, h.Visible, gs, b.GetNumBytes()))
	}
	data, ok := h.Data.(*os.File)
	meta, ok2 := h.Meta.(*os.File)
	if !ok || !ok2 {
		h.Close()
		return nil, errResponse(statusError, h.Name()+"'s files have no descriptors to pass (the store is not on the OS's file system)")
	}
	return []*os.File{data, meta}, nil
}

// peerOf names the process at the other end of a unix connection by its
// uid and pid (SO_PEERCRED), for the logs.
func peerOf(c *net.UnixConn) string {
	raw, err := c.SyscallConn()
	if err != nil {
		return "unknown"
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || cerr != nil {
		return "unknown"
	}
	return fmt.Sprintf("uid=%d pid=%d", cred.Uid, cred.Pid)
}
