package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Base is the directory every testbed group lives under, in the
// controller's hierarchy.
const Base = "smarth-testbed"

// Device is a block device, as major:minor.
type Device struct{ Major, Minor uint32 }

func (d Device) String() string { return fmt.Sprintf("%d:%d", d.Major, d.Minor) }

// Controller caps the disk bandwidth of a group of processes.
type Controller interface {
	// Kind names the controller for messages: "blkio (cgroup v1)".
	Kind() string
	// Create makes the group (a path relative to the hierarchy, such as
	// "smarth-testbed/two-rack/dn1") and returns its directory.
	Create(group string) (string, error)
	// Limit sets the read and write bytes/s of dir on dev; 0 = unlimited.
	Limit(dir string, dev Device, read, write uint64) error
	// ProcsFile is the file a pid is written to to move it into dir.
	ProcsFile(dir string) string
	// Remove deletes the group and its empty parents up to the hierarchy.
	Remove(dir string) error
}

// V1 is the cgroup v1 blkio controller mounted at Root.
type V1 struct{ Root string }

// V2 is the cgroup v2 io controller on the unified hierarchy at Root.
type V2 struct{ Root string }

var (
	_ Controller = V1{}
	_ Controller = V2{}
)

// Kind names the controller.
func (V1) Kind() string { return "blkio (cgroup v1)" }

// Create makes the group.
func (c V1) Create(group string) (string, error) {
	dir := filepath.Join(c.Root, group)
	return dir, os.MkdirAll(dir, 0o755)
}

// Limit writes the throttle rules; a zero rate removes the rule.
func (V1) Limit(dir string, dev Device, read, write uint64) error {
	for _, r := range []struct {
		file string
		v    uint64
	}{{"blkio.throttle.read_bps_device", read}, {"blkio.throttle.write_bps_device", write}} {
		if err := writeFile(filepath.Join(dir, r.file), fmt.Sprintf("%s %d", dev, r.v)); err != nil {
			return err
		}
	}
	return nil
}

// ProcsFile is cgroup.procs.
func (V1) ProcsFile(dir string) string { return filepath.Join(dir, "cgroup.procs") }

// Remove deletes the group and its empty parents.
func (c V1) Remove(dir string) error { return removeUp(c.Root, dir) }

// Kind names the controller.
func (V2) Kind() string { return "io (cgroup v2)" }

// Create makes the group and enables the io controller in every ancestor,
// which v2 requires before a child may use it.
func (c V2) Create(group string) (string, error) {
	dir := filepath.Join(c.Root, group)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	parent := c.Root
	for _, part := range strings.Split(filepath.Dir(group), string(filepath.Separator)) {
		if err := writeFile(filepath.Join(parent, "cgroup.subtree_control"), "+io"); err != nil {
			return "", fmt.Errorf("enable the io controller: %w", err)
		}
		parent = filepath.Join(parent, part)
	}
	if err := writeFile(filepath.Join(parent, "cgroup.subtree_control"), "+io"); err != nil {
		return "", fmt.Errorf("enable the io controller: %w", err)
	}
	return dir, nil
}

// Limit writes io.max.
func (V2) Limit(dir string, dev Device, read, write uint64) error {
	v := func(x uint64) string {
		if x == 0 {
			return "max"
		}
		return strconv.FormatUint(x, 10)
	}
	return writeFile(filepath.Join(dir, "io.max"), fmt.Sprintf("%s rbps=%s wbps=%s", dev, v(read), v(write)))
}

// ProcsFile is cgroup.procs.
func (V2) ProcsFile(dir string) string { return filepath.Join(dir, "cgroup.procs") }

// Remove deletes the group and its empty parents.
func (c V2) Remove(dir string) error { return removeUp(c.Root, dir) }

// removeUp removes dir, then its parents while they are empty, stopping at
// root. A missing dir is not an error, so teardown can be repeated.
func removeUp(root, dir string) error {
	root = filepath.Clean(root)
	if err := syscall.Rmdir(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove cgroup %s: %w", dir, err)
	}
	for d := filepath.Dir(dir); strings.HasPrefix(d, root+string(filepath.Separator)); d = filepath.Dir(d) {
		if syscall.Rmdir(d) != nil {
			break // not empty (another testbed) or gone
		}
	}
	return nil
}

func writeFile(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f, content); err != nil {
		f.Close()
		return fmt.Errorf("write %q to %s: %w", content, path, err)
	}
	return f.Close()
}

// Join moves process pid into the group at dir.
func Join(c Controller, dir string, pid int) error {
	return writeFile(c.ProcsFile(dir), strconv.Itoa(pid))
}

// Detect finds the block I/O controller from a mountinfo file
// (/proc/self/mountinfo): cgroup v1 blkio if mounted, else cgroup v2 with
// the io controller available.
func Detect(mountinfo string) (Controller, error) {
	f, err := os.Open(mountinfo)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var v2roots []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent maj:min root mountpoint opts [optional...] - fstype source superopts
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, x := range fields {
			if x == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || len(fields) < sep+3 {
			continue
		}
		mnt, fstype, super := unescape(fields[4]), fields[sep+1], fields[sep+3]
		switch fstype {
		case "cgroup":
			if hasOpt(super, "blkio") {
				if _, err := os.Stat(filepath.Join(mnt, "blkio.throttle.read_bps_device")); err == nil {
					return V1{Root: mnt}, nil
				}
			}
		case "cgroup2":
			v2roots = append(v2roots, mnt)
		}
	}
	for _, root := range v2roots {
		data, err := os.ReadFile(filepath.Join(root, "cgroup.controllers"))
		if err == nil && hasOpt(strings.ReplaceAll(strings.TrimSpace(string(data)), " ", ","), "io") {
			return V2{Root: root}, nil
		}
	}
	return nil, errors.New("disk caps need the blkio controller (cgroup v1) or the io controller (cgroup v2), and this machine mounts neither")
}

func hasOpt(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// DeviceOf is the disk holding path: its file system's device, or the
// whole disk when that is a partition. sysBlock is /sys/dev/block.
func DeviceOf(path, sysBlock string) (Device, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return Device{}, fmt.Errorf("find the disk under %s: %w", path, err)
	}
	d := Device{unix.Major(st.Dev), unix.Minor(st.Dev)}
	if d.Major == 0 {
		return Device{}, fmt.Errorf("disk caps need %s on a block device, but it is on a virtual file system (device %s); choose a work dir on a disk", path, d)
	}
	node := filepath.Join(sysBlock, d.String())
	if _, err := os.Stat(filepath.Join(node, "partition")); err == nil {
		// /sys/dev/block/M:m links into the device tree, where a
		// partition's directory sits inside its disk's.
		real, err := filepath.EvalSymlinks(node)
		var data []byte
		if err == nil {
			data, err = os.ReadFile(filepath.Join(filepath.Dir(real), "dev"))
		}
		if err != nil {
			return Device{}, fmt.Errorf("find the disk of partition %s: %w", d, err)
		}
		return parseDevice(strings.TrimSpace(string(data)))
	}
	return d, nil
}

func parseDevice(s string) (Device, error) {
	maj, min, ok := strings.Cut(s, ":")
	a, err1 := strconv.ParseUint(maj, 10, 32)
	b, err2 := strconv.ParseUint(min, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return Device{}, fmt.Errorf("bad device number %q", s)
	}
	return Device{uint32(a), uint32(b)}, nil
}
