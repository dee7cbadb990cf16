package ipc

import (
	"errors"
	"net"
	"testing"
)

// A server stopped before it began serving says so with ErrServerStopped,
// which a daemon closed right after it started takes as a clean stop,
// and closes the listener it was given.
func TestServeAfterStop(t *testing.T) {
	s := NewServer(ServerOptions{})
	s.Stop()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(lis); !errors.Is(err, ErrServerStopped) {
		t.Fatalf("Serve after Stop: %v; want ErrServerStopped", err)
	}
	if _, err := lis.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("the listener is still open after Serve refused it: %v", err)
	}
}
