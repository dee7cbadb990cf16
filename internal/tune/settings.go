package tune

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Level says where a setting takes effect.
type Level string

const (
	Socket Level = "socket" // setsockopt on each data connection
	Client Level = "client" // the writing client's data protocol choice
	Sysctl Level = "sysctl" // host-wide, only with explicit consent
)

// Setting is one tunable.
type Setting struct {
	Name  string
	Level Level
	Unit  string // bytes, us, packets, name, triple
	Min   int64  // numeric range (a triple: each of its numbers)
	Max   int64
	Multi int64  // value must be a multiple of this (0 = any)
	Zero  string // what 0 means, if 0 is allowed outside [Min, Max]
	Doc   string
}

// Settings is the declared catalogue, in a stable order.
func Settings() []Setting {
	const g = 1 << 30
	return []Setting{
		{Name: "so_rcvbuf", Level: Socket, Unit: "bytes", Min: 4096, Max: g, Zero: "kernel autotuning", Doc: "SO_RCVBUF; a fixed size turns receive autotuning off"},
		{Name: "so_sndbuf", Level: Socket, Unit: "bytes", Min: 4096, Max: g, Zero: "kernel autotuning", Doc: "SO_SNDBUF; a fixed size turns send autotuning off"},
		{Name: "so_busy_poll", Level: Socket, Unit: "us", Min: 0, Max: 1_000_000, Doc: "SO_BUSY_POLL: busy-wait on the device queue on read; needs a NAPI driver, raising it needs CAP_NET_ADMIN"},
		{Name: "tcp_congestion", Level: Socket, Unit: "name", Doc: "TCP_CONGESTION: one of net.ipv4.tcp_available_congestion_control"},
		{Name: "tcp_notsent_lowat", Level: Socket, Unit: "bytes", Min: 1, Max: g, Zero: "kernel default", Doc: "TCP_NOTSENT_LOWAT: unsent bytes before the socket stops being writable (sender side)"},
		{Name: "packet_size", Level: Client, Unit: "bytes", Min: 512, Max: 16 << 20, Multi: 512, Zero: "64 KiB", Doc: "data bytes per data-transfer packet (a multiple of bytes_per_checksum 512)"},
		{Name: "window", Level: Client, Unit: "packets", Min: 1, Max: 1024, Zero: "80", Doc: "packets in flight per pipeline (classic writes)"},
		{Name: "net.core.busy_read", Level: Sysctl, Unit: "us", Min: 0, Max: 1_000_000, Doc: "default SO_BUSY_POLL of every socket (the paper's passive wait)"},
		{Name: "net.core.busy_poll", Level: Sysctl, Unit: "us", Min: 0, Max: 1_000_000, Doc: "busy-poll time for poll/select"},
		{Name: "net.core.rmem_default", Level: Sysctl, Unit: "bytes", Min: 4096, Max: g, Doc: "default receive buffer of non-TCP sockets (the paper's watermark)"},
		{Name: "net.ipv4.tcp_rmem", Level: Sysctl, Unit: "triple", Min: 4096, Max: g, Doc: "TCP receive buffer min, default, max"},
		{Name: "net.ipv4.tcp_wmem", Level: Sysctl, Unit: "triple", Min: 4096, Max: g, Doc: "TCP send buffer min, default, max"},
	}
}

// Lookup finds a setting by name.
func Lookup(name string) (Setting, bool) {
	i := slices.IndexFunc(Settings(), func(s Setting) bool { return s.Name == name })
	if i < 0 {
		return Setting{}, false
	}
	return Settings()[i], true
}

// Profile is a named set of settings; values are strings so that names
// (a congestion algorithm) and numbers share one map. A setting not named
// is left as the kernel or client has it.
type Profile struct {
	Name     string            `json:"name"`
	Settings map[string]string `json:"settings"`
}

// Default is the empty profile: nothing changed.
func Default() Profile { return Profile{Name: "default", Settings: map[string]string{}} }

// LatencyBaseline is the tuned network-latency profile's busy polling
// (busy_read/busy_poll 50 us), per socket: the baseline the GA must beat.
func LatencyBaseline() Profile {
	return Profile{Name: "network-latency", Settings: map[string]string{"so_busy_poll": "50"}}
}

// Host is what validation needs from the machine: its /proc/sys root
// (a directory tree in tests).
type Host struct{ ProcSys string }

// LocalHost is this machine.
func LocalHost() Host { return Host{ProcSys: "/proc/sys"} }

// Congestion lists the congestion control algorithms the kernel offers.
func (h Host) Congestion() ([]string, error) {
	b, err := os.ReadFile(filepath.Join(h.ProcSys, "net/ipv4/tcp_available_congestion_control"))
	if err != nil {
		return nil, fmt.Errorf("reading available congestion controls: %w", err)
	}
	return strings.Fields(string(b)), nil
}

// DefaultCongestion is the congestion control a new socket gets
// (net.ipv4.tcp_congestion_control; per network namespace).
func (h Host) DefaultCongestion() (string, error) {
	b, err := os.ReadFile(filepath.Join(h.ProcSys, "net/ipv4/tcp_congestion_control"))
	if err != nil {
		return "", fmt.Errorf("reading the default congestion control: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Validate refuses unknown settings and values out of range, naming the
// accepted range.
func (p Profile) Validate(h Host) error {
	var errs []error
	for _, name := range p.Names() {
		if err := checkValue(h, name, p.Settings[name]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Names are the profile's setting names, sorted.
func (p Profile) Names() []string {
	names := make([]string, 0, len(p.Settings))
	for n := range p.Settings {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Level returns the profile's settings of one level.
func (p Profile) Level(l Level) map[string]string {
	out := map[string]string{}
	for n, v := range p.Settings {
		if s, ok := Lookup(n); ok && s.Level == l {
			out[n] = v
		}
	}
	return out
}

// Int is a numeric setting's value; ok false when unset.
func (p Profile) Int(name string) (int64, bool) {
	v, ok := p.Settings[name]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

func checkValue(h Host, name, v string) error {
	s, ok := Lookup(name)
	if !ok {
		return fmt.Errorf("unknown setting %q (known: %s)", name, strings.Join(settingNames(), ", "))
	}
	switch s.Unit {
	case "name":
		avail, err := h.Congestion()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if !slices.Contains(avail, v) {
			return fmt.Errorf("%s: %q is not available here (net.ipv4.tcp_available_congestion_control: %s)", name, v, strings.Join(avail, " "))
		}
		return nil
	case "triple":
		f := strings.Fields(v)
		if len(f) != 3 {
			return fmt.Errorf("%s: want three numbers \"min default max\", got %q", name, v)
		}
		var n [3]int64
		for i := range f {
			x, err := rangeCheck(s, f[i])
			if err != nil {
				return err
			}
			n[i] = x
		}
		if n[0] > n[1] || n[1] > n[2] {
			return fmt.Errorf("%s: want min <= default <= max, got %q", name, v)
		}
		return nil
	}
	_, err := rangeCheck(s, v)
	return err
}

func rangeCheck(s Setting, v string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: want a whole number of %s, got %q", s.Name, s.Unit, v)
	}
	if n == 0 && s.Zero != "" {
		return 0, nil
	}
	if n < s.Min || n > s.Max {
		zero := ""
		if s.Zero != "" {
			zero = " or 0 (" + s.Zero + ")"
		}
		return 0, fmt.Errorf("%s: %d %s is out of range [%d, %d]%s", s.Name, n, s.Unit, s.Min, s.Max, zero)
	}
	if s.Multi > 0 && n%s.Multi != 0 {
		return 0, fmt.Errorf("%s: %d is not a multiple of %d", s.Name, n, s.Multi)
	}
	return n, nil
}

func settingNames() []string {
	var out []string
	for _, s := range Settings() {
		out = append(out, s.Name)
	}
	return out
}

// ParseProfile reads "name:key=value,key=value" or a JSON profile file
// (when arg names an existing file), and validates it.
func ParseProfile(h Host, arg string) (Profile, error) {
	if b, err := os.ReadFile(arg); err == nil {
		return DecodeProfile(h, b)
	}
	p := Profile{Settings: map[string]string{}}
	name, rest, ok := strings.Cut(arg, ":")
	if !ok {
		name, rest = "custom", arg
	}
	p.Name = name
	for _, kv := range strings.Split(rest, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return Profile{}, fmt.Errorf("profile %q: %q is not key=value", arg, kv)
		}
		p.Settings[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return p, p.Validate(h)
}

// DecodeProfile decodes and validates a JSON profile.
func DecodeProfile(h Host, b []byte) (Profile, error) {
	var p Profile
	if err := json.Unmarshal(b, &p); err != nil {
		return Profile{}, fmt.Errorf("profile: %w", err)
	}
	if p.Name == "" {
		return Profile{}, errors.New("profile: name required")
	}
	if p.Settings == nil {
		p.Settings = map[string]string{}
	}
	return p, p.Validate(h)
}

// String renders "name{k=v ...}".
func (p Profile) String() string {
	parts := make([]string, 0, len(p.Settings))
	for _, n := range p.Names() {
		parts = append(parts, n+"="+p.Settings[n])
	}
	return p.Name + "{" + strings.Join(parts, " ") + "}"
}
