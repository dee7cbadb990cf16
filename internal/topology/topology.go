package topology

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// DefaultRack is the rack of a node that nobody placed anywhere.
const DefaultRack = "/default-rack"

// Distances between two places, as HDFS counts them: the number of hops up
// and down a two-level tree (node → rack → root).
const (
	SameNode  = 0
	SameRack  = 2
	OtherRack = 4
)

// Location names a host and the rack it sits in. A host matches another if
// either its name or its IP is equal, because clients know themselves by
// either.
type Location struct {
	Host string
	IP   string
	Rack string // "" when unknown (a client outside the cluster)
}

// SameHost reports whether a and b are the same machine.
func SameHost(a, b Location) bool {
	return (a.Host != "" && (a.Host == b.Host || a.Host == b.IP)) ||
		(a.IP != "" && (a.IP == b.IP || a.IP == b.Host))
}

// Distance is the HDFS network distance between a and b. A location whose
// rack is unknown is treated as off-cluster: every node is equally far from it
// unless it is the same host.
func Distance(a, b Location) int {
	switch {
	case SameHost(a, b):
		return SameNode
	case a.Rack != "" && a.Rack == b.Rack:
		return SameRack
	default:
		return OtherRack
	}
}

// Resolver maps hostnames and IPs, of datanodes and clients alike, to racks:
// from a static table (HDFS's TableMapping) and, for addresses the table
// does not name, from a script (HDFS's ScriptBasedMapping) whose answers are
// cached. Safe for concurrent use.
type Resolver struct {
	racks       map[string]string // hostname or IP → rack; read-only after NewResolver
	defaultRack string

	// The script, when set by NewMapping; fixed after it.
	script  string
	timeout time.Duration
	now     func() time.Time

	mu      sync.Mutex
	cache   map[string]scriptAnswer // guarded by mu: the script's answers by address
	lastErr error                   // guarded by mu: the script's latest failure, until ScriptError
}

// NewResolver checks every rack name and returns a resolver. An empty
// defaultRack means DefaultRack.
func NewResolver(racks map[string]string, defaultRack string) (*Resolver, error) {
	if defaultRack == "" {
		defaultRack = DefaultRack
	}
	if err := ValidateRack(defaultRack); err != nil {
		return nil, fmt.Errorf("default rack: %w", err)
	}
	m := make(map[string]string, len(racks))
	for host, rack := range racks {
		if err := ValidateRack(rack); err != nil {
			return nil, fmt.Errorf("rack of %q: %w", host, err)
		}
		m[host] = rack
	}
	return &Resolver{racks: m, defaultRack: defaultRack}, nil
}

// Rack resolves a datanode's rack: the mapping by hostname, then by IP, then
// the rack the datanode reported about itself (if valid), then the default.
func (r *Resolver) Rack(hostname, ip, reported string) string {
	if rack, ok := r.Lookup(hostname, ip); ok {
		return rack
	}
	if reported != "" && ValidateRack(reported) == nil {
		return reported
	}
	return r.defaultRack
}

// ValidateRack accepts names like "/rack-a" or "/dc1/rack-a": absolute, no
// empty components, no trailing slash.
func ValidateRack(rack string) error {
	if !strings.HasPrefix(rack, "/") || len(rack) < 2 {
		return fmt.Errorf("invalid rack %q: must start with \"/\", like \"/rack-a\"", rack)
	}
	for _, c := range strings.Split(rack[1:], "/") {
		if c == "" {
			return fmt.Errorf("invalid rack %q: empty component", rack)
		}
	}
	return nil
}
