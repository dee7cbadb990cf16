//go:build !unix

package datatransfer

import (
	"errors"
	"net"
	"os"
)

var errNoFDPassing = errors.New("passing descriptors needs a unix system")

// SendFDs fails: descriptors pass over unix sockets only.
func SendFDs(*net.UnixConn, ...*os.File) error { return errNoFDPassing }

// ReceiveFDs fails: descriptors pass over unix sockets only.
func ReceiveFDs(*net.UnixConn, ...string) ([]*os.File, error) { return nil, errNoFDPassing }
