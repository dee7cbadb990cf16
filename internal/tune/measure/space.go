package measure

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
		cc = slices.DeleteFunc(cc, func(s string) bool { return s == "cubic" })
		return ga.Space{
			{Name: "so_rcvbuf", Values: []string{"0", "65536", "262144", "1048576", "4194304"}},
			{Name: "so_sndbuf", Values: []string{"0", "65536", "262144", "1048576", "4194304"}},
			{Name: "so_busy_poll", Values: []string{"0", "20", "50", "100"}},
			{Name: "tcp_congestion", Values: append([]string{"cubic"}, cc...)},
			{Name: "tcp_notsent_lowat", Values: []string{"0", "16384", "131072", "1048576"}},
			{Name: "window", Values: []string{"0", "8", "32", "160"}},
		}, nil
	case "sysctl":
		return ga.Space{
			{Name: "net.core.busy_read", Values: []string{"0", "20", "50", "100", "1000"}},
			{Name: "net.core.busy_poll", Values: []string{"0", "20", "50", "100", "1000"}},
			{Name: "net.core.rmem_default", Values: []string{"212992", "65536", "1048576", "4194304"}},
		}, nil
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
