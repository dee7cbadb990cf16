package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"

	"smarth/internal/testbed/cgroup"
)

// diskCap puts datanodes into block I/O cgroups that cap their disk read
// bandwidth on the disk holding the cluster home. A datanode on one
// machine otherwise reads at the speed of the machine's SSD (or its page
// cache), and memory and disk would hardly differ; the testbed does the
// same per host (internal/testbed/cgroup).
type diskCap struct {
	ctl   cgroup.Controller
	dev   cgroup.Device
	rate  uint64
	group string // parent group of this home's datanodes
}

// cgroupBase is the parent group of every local cluster's datanodes,
// beside the testbed's.
const cgroupBase = "smarth-cluster"

// newDiskCap checks up front that a cap can be set here: root, a block
// I/O controller, and a cluster home on a block device.
func newDiskCap(home string, rate int64) (*diskCap, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("--disk-read-rate needs root (it writes the blkio/io cgroup); run as root or use the testbed (testbed/cache-affinity.yaml caps disks at 40 MB/s)")
	}
	ctl, err := cgroup.Detect("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("--disk-read-rate: %w", err)
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	dev, err := cgroup.DeviceOf(home, "/sys/dev/block")
	if err != nil {
		return nil, fmt.Errorf("--disk-read-rate: %w", err)
	}
	// One group per home, so two clusters on one machine keep their caps
	// apart and Down removes only its own.
	sum := sha256.Sum256([]byte(home))
	return &diskCap{ctl: ctl, dev: dev, rate: uint64(rate), group: path.Join(cgroupBase, hex.EncodeToString(sum[:6]))}, nil
}

// join caps pid under a group named for the daemon and returns the
// group's directory, for removal at Down.
func (d *diskCap) join(name string, pid int) (string, error) {
	dir, err := d.ctl.Create(path.Join(d.group, name))
	if err != nil {
		return "", fmt.Errorf("%s: disk cap: %w", name, err)
	}
	if err := d.ctl.Limit(dir, d.dev, d.rate, 0); err != nil {
		return dir, fmt.Errorf("%s: disk cap: %w", name, err)
	}
	if err := cgroup.Join(d.ctl, dir, pid); err != nil {
		return dir, fmt.Errorf("%s: disk cap: %w", name, err)
	}
	return dir, nil
}

// removeCgroups deletes the groups Up made, once their processes are
// gone. Missing groups are fine: Down may run twice.
func removeCgroups(dirs []string) error {
	if len(dirs) == 0 {
		return nil
	}
	ctl, err := cgroup.Detect("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	var errs []error
	for _, dir := range dirs {
		errs = append(errs, ctl.Remove(dir))
	}
	return errors.Join(errs...)
}
