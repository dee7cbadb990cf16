package tunemeasure

import (
	"fmt"
	"slices"
	"strings"

	"smarth/internal/tune"
	"smarth/internal/tune/ga"
)

// Spaces names the declared search spaces.
func Spaces() []string { return []string{"socket", "sysctl", "noop"} }

// NewSpace builds a search space. The packet size is not searched: it is
// part of the transmission profile (seed 001 tunes the receiver for a
// given overall size and packet size). Each gene's first value is the
// default, so the all-zero genome is the default profile.
//
//   - socket: per-socket buffers, busy poll, congestion control, not-sent
//     watermark, and the client's in-flight window.
//   - sysctl: the paper's host-wide settings (busy_read, busy_poll,
//     rmem_default); needs --sysctl.
//   - noop: two genes whose values change nothing — the control that must
//     come out "no significant difference".
func NewSpace(name string, h tune.Host) (ga.Space, error) {
	switch name {
	case "socket":
		cc, err := h.Congestion()
		if err != nil {
			return nil, err
		}
		// The gene's first value is the default, which ProfileOf leaves
		// unset: it must be the kernel's default, not a fixed name (a
		// host whose default is bbr would otherwise be reported as
		// running cubic).
		def, err := h.DefaultCongestion()
		if err != nil {
			return nil, err
		}
		cc = slices.DeleteFunc(cc, func(s string) bool { return s == def })
		return ga.Space{
			{Name: "so_rcvbuf", Values: []string{"0", "65536", "262144", "1048576", "4194304"}},
			{Name: "so_sndbuf", Values: []string{"0", "65536", "262144", "1048576", "4194304"}},
			{Name: "so_busy_poll", Values: []string{"0", "20", "50", "100"}},
			{Name: "tcp_congestion", Values: append([]string{def}, cc...)},
			{Name: "tcp_notsent_lowat", Values: []string{"0", "16384", "131072", "1048576"}},
			{Name: "window", Values: []string{"0", "8", "32", "160"}},
		}, nil
	case "sysctl":
		return SysctlSpace(false), nil
	case "noop":
		return ga.Space{
			{Name: "noop_a", Values: []string{"0", "1", "2", "3"}},
			{Name: "noop_b", Values: []string{"0", "1", "2", "3"}},
		}, nil
	}
	return nil, fmt.Errorf("unknown search space %q (known: %s)", name, strings.Join(Spaces(), ", "))
}

// ProfileOf turns a genome into a settings profile. Values equal to the
// gene's default (index 0) are left out, so the kernel keeps its own; noop
// genes set nothing at all.
func ProfileOf(space ga.Space, g ga.Genome) tune.Profile {
	p := tune.Profile{Name: "ga-" + g.Key(), Settings: map[string]string{}}
	for i, gene := range space {
		if g[i] == 0 || strings.HasPrefix(gene.Name, "noop_") {
			continue
		}
		p.Settings[gene.Name] = gene.Values[g[i]]
	}
	if len(p.Settings) == 0 && !strings.HasPrefix(space[0].Name, "noop_") {
		p.Name = "default"
	}
	return p
}

// SysctlSpace is the sysctl search space. On one host it is the paper's
// settings: busy_read, busy_poll (the passive wait) and rmem_default (the
// watermark). perNetns keeps only sysctls a network namespace has its own
// writable copy of, for a testbed whose receiving host is a namespace:
// busy_read and busy_poll are host-wide (absent inside a namespace, and on
// veth they could not take effect: no NAPI), and rmem_default/rmem_max
// are shown read-only inside one (the host's values, mode 0444), so there
// the space is the TCP receive buffer range tcp_rmem, within which
// autotuning grows the receive buffer.
func SysctlSpace(perNetns bool) ga.Space {
	if perNetns {
		return ga.Space{
			{Name: "net.ipv4.tcp_rmem", Values: []string{"kernel", "4096 131072 6291456", "4096 1048576 33554432", "4096 4194304 33554432", "4096 65536 262144", "4096 16384 65536"}},
		}
	}
	return ga.Space{
		// Index 0 ("kernel") leaves the value as the host has it.
		{Name: "net.core.busy_read", Values: []string{"kernel", "0", "20", "50", "100", "1000"}},
		{Name: "net.core.busy_poll", Values: []string{"kernel", "0", "20", "50", "100", "1000"}},
		{Name: "net.core.rmem_default", Values: []string{"kernel", "65536", "212992", "1048576", "4194304"}},
	}
}
