package tune

import (
	"errors"
	"fmt"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// State is one setting of a socket as read back from the kernel.
type State struct {
	Setting string `json:"setting"`
	Want    string `json:"want"`
	Got     string `json:"got"`
	InForce bool   `json:"in_force"`
	Note    string `json:"note,omitempty"`
}

// Apply sets the profile's socket settings on c and reads each back.
// Refusals (no permission, missing module) become States that are not in
// force; only a socket without a file descriptor is an error.
func Apply(c syscall.Conn, p Profile) ([]State, error) {
	return onFD(c, func(fd int) []State {
		var out []State
		for _, name := range p.Names() {
			if s, ok := Lookup(name); ok && s.Level == Socket {
				out = append(out, setAndRead(fd, name, p.Settings[name]))
			}
		}
		return out
	})
}

// Inspect reads the profile's socket settings back without changing them
// (the transfer log records what was in force at the end of a transfer:
// with autotuning the buffers have grown by then).
func Inspect(c syscall.Conn, p Profile) ([]State, error) {
	return onFD(c, func(fd int) []State {
		var out []State
		for _, name := range p.Names() {
			if s, ok := Lookup(name); ok && s.Level == Socket {
				out = append(out, readBack(fd, name, p.Settings[name], nil))
			}
		}
		return out
	})
}

func onFD(c syscall.Conn, f func(fd int) []State) ([]State, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var out []State
	if err := rc.Control(func(fd uintptr) { out = f(int(fd)) }); err != nil {
		return nil, err
	}
	return out, nil
}

func setAndRead(fd int, name, want string) State {
	n, _ := strconv.Atoi(want)
	var err error
	switch name {
	case "so_rcvbuf":
		if n > 0 {
			err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, n)
		}
	case "so_sndbuf":
		if n > 0 {
			err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, n)
		}
	case "so_busy_poll":
		err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_BUSY_POLL, n)
	case "tcp_congestion":
		err = unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, want)
	case "tcp_notsent_lowat":
		if n > 0 {
			err = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, n)
		}
	}
	return readBack(fd, name, want, err)
}

// readBack reads the setting and decides whether the wanted value is in
// force; setErr is the error of setting it, if it was set.
func readBack(fd int, name, want string, setErr error) State {
	st := State{Setting: name, Want: want}
	n, _ := strconv.Atoi(want)
	var got int
	var err error
	switch name {
	case "so_rcvbuf", "so_sndbuf":
		opt := map[string]int{"so_rcvbuf": unix.SO_RCVBUF, "so_sndbuf": unix.SO_SNDBUF}[name]
		got, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, opt)
		st.Got = strconv.Itoa(got)
		st.InForce, st.Note = bufferInForce(fd, name, n, got)
	case "so_busy_poll":
		got, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_BUSY_POLL)
		st.Got = strconv.Itoa(got)
		st.InForce, st.Note = busyPollInForce(fd, n, got)
	case "tcp_congestion":
		var s string
		s, err = unix.GetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION)
		st.Got, st.InForce = s, s == want
	case "tcp_notsent_lowat":
		got, err = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT)
		st.Got = strconv.Itoa(got)
		st.InForce = n == 0 || got == n
	}
	switch {
	case setErr != nil:
		st.InForce, st.Note = false, refusal(name, setErr)
	case err != nil:
		st.InForce, st.Note = false, "getsockopt: "+err.Error()
	}
	return st
}

// bufferInForce: Linux doubles a set buffer size for its bookkeeping and
// clamps it at net.core.[rw]mem_max; a clamped buffer is not the one asked
// for. Wanting 0 (autotuning) is in force while the socket has no
// SOCK_*BUF_LOCK, which only setting a size sets — so it is, unless this
// socket was given a size.
func bufferInForce(fd int, name string, want, got int) (bool, string) {
	if want == 0 {
		return true, "kernel autotuning"
	}
	if got >= 2*want {
		return true, ""
	}
	return false, fmt.Sprintf("kernel clamped %d to %d (net.core.%cmem_max)", want, got/2, name[3])
}

// busyPollInForce: busy polling spins on the NAPI context the socket's
// packets arrived on. Loopback and veth have none (SO_INCOMING_NAPI_ID 0),
// so there the option is stored but does nothing.
func busyPollInForce(fd, want, got int) (bool, string) {
	if got != want {
		return false, fmt.Sprintf("read back %d", got)
	}
	if want == 0 {
		return true, ""
	}
	napi, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_INCOMING_NAPI_ID)
	if err != nil {
		return false, "SO_INCOMING_NAPI_ID: " + err.Error()
	}
	if napi == 0 {
		return false, "no NAPI id on this socket (loopback/veth driver): busy polling has no effect"
	}
	return true, "napi_id " + strconv.Itoa(napi)
}

func refusal(name string, err error) string {
	switch {
	case errors.Is(err, unix.EPERM) && name == "so_busy_poll":
		return "refused: raising SO_BUSY_POLL needs CAP_NET_ADMIN"
	case errors.Is(err, unix.EPERM):
		return "refused: no permission (" + err.Error() + ")"
	case errors.Is(err, unix.ENOENT) && name == "tcp_congestion":
		return "refused: congestion control module not available"
	}
	return "refused: " + err.Error()
}

// AllInForce reports whether every state is in force, and the first that
// is not.
func AllInForce(states []State) (bool, State) {
	for _, s := range states {
		if !s.InForce {
			return false, s
		}
	}
	return true, State{}
}
