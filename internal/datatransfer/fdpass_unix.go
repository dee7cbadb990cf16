//go:build unix

package datatransfer

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
)

// SendFDs sends one byte on c with files' descriptors attached
// (SCM_RIGHTS): the peer gets descriptors of its own for the same open
// files, with the same access mode (a file opened read-only stays so).
func SendFDs(c *net.UnixConn, files ...*os.File) error {
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	oob := syscall.UnixRights(fds...)
	n, oobn, err := c.WriteMsgUnix([]byte{0}, oob, nil)
	runtime.KeepAlive(files) // the descriptors must stay open until sent
	if err == nil && (n != 1 || oobn != len(oob)) {
		err = fmt.Errorf("sending descriptors: wrote %d byte(s) and %d of %d control bytes", n, oobn, len(oob))
	}
	return err
}

// ReceiveFDs reads the byte SendFDs sent and returns the descriptors that
// came with it, one for each name (names are for messages only). No byte,
// another number of descriptors or a truncated control message is an
// error, and every descriptor that did arrive is closed: the caller never
// holds descriptors it did not ask for.
func ReceiveFDs(c *net.UnixConn, names ...string) ([]*os.File, error) {
	var b [1]byte
	// Room for exactly the descriptors expected: more are cut off by the
	// kernel (MSG_CTRUNC, and the extra ones closed), not left open here.
	oob := make([]byte, syscall.CmsgSpace(len(names)*4))
	n, oobn, flags, _, err := c.ReadMsgUnix(b[:], oob)
	var fds []int
	var perr error
	if oobn > 0 {
		var msgs []syscall.SocketControlMessage
		if msgs, perr = syscall.ParseSocketControlMessage(oob[:oobn]); perr == nil {
			for i := range msgs {
				rights, err := syscall.ParseUnixRights(&msgs[i])
				if err != nil {
					perr = err
					continue
				}
				fds = append(fds, rights...)
			}
		}
	}
	switch {
	case err == nil && n == 0:
		err = io.ErrUnexpectedEOF
	case errors.Is(err, io.EOF):
		err = io.ErrUnexpectedEOF
	case err == nil && flags&syscall.MSG_CTRUNC != 0:
		err = fmt.Errorf("%w: descriptors cut off (more than the %d expected)", ErrProtocol, len(names))
	case err == nil && perr != nil:
		err = fmt.Errorf("%w: control message: %v", ErrProtocol, perr)
	case err == nil && len(fds) != len(names):
		err = fmt.Errorf("%w: %d descriptor(s) received, %d expected", ErrProtocol, len(fds), len(names))
	}
	if err != nil {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return nil, err
	}
	files := make([]*os.File, len(fds))
	for i, fd := range fds {
		files[i] = os.NewFile(uintptr(fd), names[i])
	}
	return files, nil
}
