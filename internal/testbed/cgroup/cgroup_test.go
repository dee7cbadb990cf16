package cgroup

import (
	"os"
	"path/filepath"
	"smarth/internal/testenv"
	"strings"
	"testing"
)

func TestDetect(t *testing.T) {
	dir := t.TempDir()
	v1 := filepath.Join(dir, "blk io")
	v2 := filepath.Join(dir, "unified")
	os.MkdirAll(v1, 0o755)
	os.MkdirAll(v2, 0o755)
	os.WriteFile(filepath.Join(v1, "blkio.throttle.read_bps_device"), nil, 0o644)
	os.WriteFile(filepath.Join(v2, "cgroup.controllers"), []byte("cpu io memory\n"), 0o644)
	esc := strings.ReplaceAll(v1, " ", `\040`)
	both := "30 25 0:26 / " + esc + " rw,relatime shared:9 - cgroup cgroup rw,blkio\n" +
		"31 25 0:27 / " + v2 + " rw,relatime shared:10 - cgroup2 cgroup2 rw\n"
	only2 := "31 25 0:27 / " + v2 + " rw,relatime - cgroup2 cgroup2 rw\n"
	none := "22 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
	cases := []struct {
		name, mountinfo, want string
	}{
		{"v1 wins", both, "V1 " + v1},
		{"v2", only2, "V2 " + v2},
		{"none", none, "error"},
	}
	for _, c := range cases {
		mi := filepath.Join(dir, c.name)
		os.WriteFile(mi, []byte(c.mountinfo), 0o644)
		ctl, err := Detect(mi)
		got := "error"
		switch v := ctl.(type) {
		case V1:
			got = "V1 " + v.Root
		case V2:
			got = "V2 " + v.Root
		}
		if got != c.want {
			t.Errorf("%s: Detect = %s (%v), want %s", c.name, got, err, c.want)
		}
		if got == "error" && (err == nil || !strings.Contains(err.Error(), "blkio")) {
			t.Errorf("%s: error %v should name the controllers", c.name, err)
		}
	}
}

func TestLimitFiles(t *testing.T) {
	dev := Device{254, 0}
	root := t.TempDir()
	v1 := V1{Root: root}
	dir, err := v1.Create("smarth-testbed/tb/dn1")
	if err != nil {
		t.Fatal(err)
	}
	if err := v1.Limit(dir, dev, 40e6, 0); err != nil {
		t.Fatal(err)
	}
	read, _ := os.ReadFile(filepath.Join(dir, "blkio.throttle.read_bps_device"))
	write, _ := os.ReadFile(filepath.Join(dir, "blkio.throttle.write_bps_device"))
	if string(read) != "254:0 40000000" || string(write) != "254:0 0" {
		t.Errorf("v1 files: read %q write %q", read, write)
	}
	root2 := t.TempDir()
	v2 := V2{Root: root2}
	dir, err = v2.Create("smarth-testbed/tb/dn1")
	if err != nil {
		t.Fatal(err)
	}
	if err := v2.Limit(dir, dev, 0, 20e6); err != nil {
		t.Fatal(err)
	}
	max, _ := os.ReadFile(filepath.Join(dir, "io.max"))
	if string(max) != "254:0 rbps=max wbps=20000000" {
		t.Errorf("io.max = %q", max)
	}
	for _, d := range []string{root2, filepath.Join(root2, "smarth-testbed"), filepath.Join(root2, "smarth-testbed/tb")} {
		sc, _ := os.ReadFile(filepath.Join(d, "cgroup.subtree_control"))
		if string(sc) != "+io" {
			t.Errorf("%s/cgroup.subtree_control = %q, want +io", d, sc)
		}
	}
}

func TestDeviceOf(t *testing.T) {
	sys := t.TempDir()
	// A partition 254:1 of disk 254:0, as /sys/dev/block lays it out.
	disk := filepath.Join(sys, "devices", "vda")
	part := filepath.Join(disk, "vda1")
	os.MkdirAll(part, 0o755)
	os.WriteFile(filepath.Join(disk, "dev"), []byte("254:0\n"), 0o644)
	os.WriteFile(filepath.Join(part, "partition"), []byte("1\n"), 0o644)
	links := filepath.Join(sys, "dev", "block")
	os.MkdirAll(links, 0o755)
	dir := t.TempDir()
	d, err := DeviceOf(dir, links)
	if err != nil {
		testenv.SkipOrFail(t, "temp dir is not on a block device here: %v", err)
	}
	os.Symlink(part, filepath.Join(links, d.String()))
	got, err := DeviceOf(dir, links)
	if err != nil || got != (Device{254, 0}) {
		t.Errorf("DeviceOf on a partition = %v, %v; want 254:0", got, err)
	}
	if _, err := DeviceOf("/proc", links); err == nil || !strings.Contains(err.Error(), "virtual file system") {
		t.Errorf("DeviceOf(/proc) error = %v", err)
	}
}

// TestRealV1 creates, limits and removes a real group when the machine
// has cgroup v1 blkio and the test runs as root.
func TestRealV1(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "needs root to create cgroups")
	}
	c, err := Detect("/proc/self/mountinfo")
	if err != nil {
		testenv.SkipOrFail(t, "no block I/O controller: %v", err)
	}
	dev, err := DeviceOf(t.TempDir(), "/sys/dev/block")
	if err != nil {
		testenv.SkipOrFail(t, "%v", err)
	}
	group := Base + "/unit-test-" + strings.ReplaceAll(t.Name(), "/", "-") + "/h1"
	dir, err := c.Create(group)
	if err != nil {
		t.Fatalf("%s: %v", c.Kind(), err)
	}
	t.Cleanup(func() { c.Remove(dir) })
	if err := c.Limit(dir, dev, 10e6, 20e6); err != nil {
		t.Fatalf("%s: %v", c.Kind(), err)
	}
	if err := c.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(dir)); !os.IsNotExist(err) {
		t.Errorf("parent %s still there after Remove: %v", filepath.Dir(dir), err)
	}
	if err := c.Remove(dir); err != nil {
		t.Errorf("second Remove: %v", err)
	}
}
