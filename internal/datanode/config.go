package datanode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"smarth/internal/auth"
	"smarth/internal/daemonconf"
	"smarth/internal/datanode/store"
	"smarth/internal/datanode/store/vfs"
	"smarth/internal/diskperm"
	"smarth/internal/logfile"
	"smarth/internal/units"
)

// Config is a datanode's configuration: the keys of its file, which are
// daemonconf.DataNodeConfig's (there so that the launchers can build it
// without importing the datanode), and the hooks only tests and the
// launcher in this process set.
type Config struct {
	daemonconf.DataNodeConfig `yaml:",inline"`

	// FS, if set, is the file system under the block store instead of the
	// OS's (tests wrap it with vfs/errorfs to inject disk faults).
	FS vfs.FS `yaml:"-"`
	// Dial, if set, connects to other datanodes' data ports instead of a
	// plain TCP dial (tests slow or cut links with it).
	Dial func(ctx context.Context, addr string) (net.Conn, error) `yaml:"-"`
	// WebHDFS, if set, serves /webhdfs/v1/ on http_addr: the datanode side
	// of WebHDFS (package datanode/webhdfs), which the launcher builds
	// because it moves bytes with the client library this package must not
	// import.
	WebHDFS http.Handler `yaml:"-"`
}

// DefaultConfig returns the defaults of the daemon config contract.
func DefaultConfig() Config {
	return Config{DataNodeConfig: daemonconf.DataNodeConfig{
		NameNode: "127.0.0.1:8020",
		Auth:     auth.DefaultMode,
		// Loopback unless configured otherwise: a datanode reachable
		// from other hosts is a choice (the testbed and multi-host
		// configs set 0.0.0.0 or the host's address), not a default.
		DataAddr:            "127.0.0.1:9866",
		IPCAddr:             "127.0.0.1:9867",
		HTTPAddr:            "127.0.0.1:9864",
		Rack:                "/default-rack",
		DataDirPerm:         diskperm.Mode(diskperm.Dir),
		HeartbeatInterval:   3 * time.Second,
		BlockReportInterval: time.Hour,
		ScanInterval:        24 * time.Hour,
		PerClientBuffer:     64 << 20,
		ScanBandwidth:       64 << 20,
		BalanceBandwidth:    100 << 20, // Hadoop 3's 100m
		IOTimeout:           60 * time.Second,
		MaxXceivers:         4096,
		CacheConcurrency:    2,
		Log:                 logfile.Default(),
	}}
}

// nameNodes are the namenodes to report to: the namenode setting is one
// host:port, or every namenode of an HA group as a comma list.
func (c Config) nameNodes() []string {
	var out []string
	for _, a := range strings.Split(c.NameNode, ",") {
		out = append(out, strings.TrimSpace(a))
	}
	return out
}

// Validate checks the configuration and says what is wrong in terms of
// the YAML keys.
func (c Config) Validate() error {
	var errs []error
	if c.NameNode == "" {
		errs = append(errs, errors.New("namenode: address required"))
	} else {
		seen := map[string]bool{}
		for _, a := range c.nameNodes() {
			if _, _, err := net.SplitHostPort(a); err != nil {
				errs = append(errs, fmt.Errorf("namenode: %q is not host:port (in %q)", a, c.NameNode))
			} else if seen[a] {
				errs = append(errs, fmt.Errorf("namenode: %s is named twice (in %q)", a, c.NameNode))
			}
			seen[a] = true
		}
	}
	for _, a := range []struct{ key, v string }{{"data_addr", c.DataAddr}, {"ipc_addr", c.IPCAddr}, {"http_addr", c.HTTPAddr}} {
		if _, _, err := net.SplitHostPort(a.v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not host:port", a.key, a.v))
		}
	}
	switch {
	case c.DataDir == "" && len(c.DataDirs) == 0:
		errs = append(errs, errors.New("data_dir: required (or data_dirs, a list)"))
	case c.DataDir != "" && len(c.DataDirs) > 0:
		errs = append(errs, fmt.Errorf("data_dir and data_dirs: set one, not both (data_dir %s)", c.DataDir))
	}
	seen := map[string]bool{}
	for _, d := range c.DataDirs {
		if d == "" || seen[filepath.Clean(d)] {
			errs = append(errs, fmt.Errorf("data_dirs: %q is empty or listed twice", d))
		}
		seen[filepath.Clean(d)] = true
	}
	switch c.VolumeChoosingPolicy {
	case "", store.RoundRobin, store.AvailableSpace:
	default:
		errs = append(errs, fmt.Errorf("volume_choosing_policy: %q must be %s or %s", c.VolumeChoosingPolicy, store.RoundRobin, store.AvailableSpace))
	}
	if n := len(c.dataDirs()); c.FailedVolumesTolerated < 0 || (n > 0 && c.FailedVolumesTolerated >= n) {
		errs = append(errs, fmt.Errorf("failed_volumes_tolerated: %d must be at least 0 and less than the %d configured data directories", c.FailedVolumesTolerated, n))
	}
	if c.DiskCheckInterval < 0 {
		errs = append(errs, fmt.Errorf("disk_check_interval: %v must not be negative", c.DiskCheckInterval))
	}
	if c.DuReserved != "" {
		if _, err := units.ParseReserve(c.DuReserved); err != nil {
			errs = append(errs, fmt.Errorf("du_reserved: %w", err))
		}
	}
	if err := c.DataDirPerm.Validate("data_dir_perm"); err != nil {
		errs = append(errs, err)
	}
	if mode, err := auth.ParseMode(c.Auth); err != nil {
		errs = append(errs, err)
	} else if mode == auth.Secure {
		// Here rather than at registration, where a missing key would
		// only show as the namenode's refusal.
		if err := auth.RequireKeyFile("datanode_key_file", c.DatanodeKeyFile, auth.DatanodeKeyHint); err != nil {
			errs = append(errs, err)
		}
	}
	if err := validateSocketPath(c.DomainSocketPath); err != nil {
		errs = append(errs, err)
	}
	if c.AdvertiseIP != "" && net.ParseIP(c.AdvertiseIP) == nil {
		errs = append(errs, fmt.Errorf("advertise_ip: %q is not an IP address", c.AdvertiseIP))
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"heartbeat_interval", c.HeartbeatInterval}, {"block_report_interval", c.BlockReportInterval}, {"scan_interval", c.ScanInterval}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("%s: must be positive, got %v", d.key, d.v))
		}
	}
	if c.PerClientBuffer < 64<<10 {
		errs = append(errs, fmt.Errorf("per_client_buffer: %d is smaller than one packet (65536)", c.PerClientBuffer))
	}
	if c.ReceiveBufferBudget != 0 && c.ReceiveBufferBudget < c.PerClientBuffer {
		errs = append(errs, fmt.Errorf("receive_buffer_budget: %d is smaller than per_client_buffer %d (one multi-pipeline client's lead would not fit)", c.ReceiveBufferBudget, c.PerClientBuffer))
	}
	if c.CacheCapacity < 0 || c.ScanBandwidth < 0 || c.BalanceBandwidth < 0 || c.SocketRecvBuffer < 0 || c.SocketSendBuffer < 0 || c.IOTimeout < 0 || c.MaxXceivers < 0 || c.MaxXceiversPerHost < 0 ||
		c.MemoryBudget < 0 || c.CacheConcurrency < 0 || c.PageCacheBudget < 0 {
		errs = append(errs, errors.New("cache_capacity, memory_budget, page_cache_budget, cache_concurrency, scan_bandwidth, balance_bandwidth, socket buffers, io_timeout and max_xceivers must not be negative"))
	}
	if err := c.validateMemory(physicalMemory()); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.Wire.Validate())
	return errors.Join(errs...)
}

// dataDirs is data_dirs, or data_dir as a list of one.
func (c Config) dataDirs() []string {
	if len(c.DataDirs) > 0 {
		return c.DataDirs
	}
	if c.DataDir == "" {
		return nil
	}
	return []string{c.DataDir}
}

// defaultDuReserved is du_reserved when unset. HDFS keeps nothing free by
// default, and a local cluster whose datanodes share a disk with the
// namenode's edit log and the node managers' task directories then fills
// that disk to the last byte (issue 29: 71 GB in 8 minutes, every process
// on the host starved). A share rather than a size because local and test
// clusters run on anything from a few-MiB tmpfs (5% leaves it usable) to
// a multi-terabyte disk; 5% is also what ext4 keeps for root by default,
// a figure operators already expect to lose.
const defaultDuReserved = "5%"

// defaultReceiveBudget is receive_buffer_budget without a memory_budget:
// sixteen multi-pipeline clients' default leads.
const defaultReceiveBudget = 1 << 30

// withDefaults fills zero tuning knobs.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.IOTimeout == 0 {
		c.IOTimeout = d.IOTimeout
	}
	if c.MaxXceivers == 0 {
		c.MaxXceivers = d.MaxXceivers
	}
	if c.MaxXceiversPerHost == 0 {
		c.MaxXceiversPerHost = max(c.MaxXceivers/4, 1)
	}
	if c.CacheConcurrency == 0 {
		c.CacheConcurrency = d.CacheConcurrency
	}
	if c.Rack == "" {
		c.Rack = d.Rack
	}
	if c.DuReserved == "" {
		c.DuReserved = defaultDuReserved
	}
	if c.VolumeChoosingPolicy == "" {
		c.VolumeChoosingPolicy = store.RoundRobin
	}
	if c.DiskCheckInterval == 0 {
		c.DiskCheckInterval = time.Minute
	}
	if c.ReceiveBufferBudget == 0 {
		c.ReceiveBufferBudget = defaultReceiveBudget
		if c.MemoryBudget > 0 {
			c.ReceiveBufferBudget = max(c.MemoryBudget-max(c.CacheCapacity, 0)-max(c.PageCacheBudget, 0), c.PerClientBuffer)
		}
	}
	if c.Hostname == "" {
		c.Hostname, _ = os.Hostname()
	}
	return c
}

// advertiseIP picks the address other hosts use to reach this node: the
// configured one, else the host of data_addr unless it is a wildcard, else
// the first non-loopback interface address, else loopback.
func advertiseIP(cfg Config, dataAddr net.Addr) string {
	if cfg.AdvertiseIP != "" {
		return cfg.AdvertiseIP
	}
	if ta, ok := dataAddr.(*net.TCPAddr); ok && !ta.IP.IsUnspecified() {
		return ta.IP.String()
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
				return ipn.IP.String()
			}
		}
	}
	return "127.0.0.1"
}
