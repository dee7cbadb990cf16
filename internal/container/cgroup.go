package container

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A container's cgroup holds its memory and CPU limits and is how the
// whole container is found and killed: a process that leaves its process
// group (setsid, a daemon) cannot leave its cgroup.
//
// cgroup v1 (a hierarchy per controller, /sys/fs/cgroup/memory and so on)
// and v2 (one unified hierarchy) are both supported; which one is decided
// by what the host mounts, v1's memory controller first. A node manager's
// containers live under a cgroup of its own: on v1 below the node
// manager's cgroup in each hierarchy (as YARN's cgroups.hierarchy), on
// v2 at the top of the unified hierarchy, since a v2 cgroup that holds
// processes (the node manager's) cannot also hand controllers to
// children.

// maxPids bounds a container's processes (pids.max): a fork bomb in a
// task stops there instead of at the host's limit.
const maxPids = 4096

// v1Controllers are the v1 hierarchies a container joins; memory is
// required, the others are used when mounted.
var v1Controllers = []string{"memory", "cpu", "pids"}

// hierarchy is the node manager's parent cgroup for its containers.
type hierarchy struct {
	v2   bool
	base map[string]string // v1: controller -> directory; v2: "" -> directory
}

type mount struct{ root, point, fstype, opts string }

func readMounts() ([]mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		a, b := strings.Fields(pre), strings.Fields(post)
		if !ok || len(a) < 5 || len(b) < 3 {
			continue
		}
		out = append(out, mount{root: a[3], point: a[4], fstype: b[0], opts: b[2]})
	}
	return out, sc.Err()
}

// ownCgroups maps each v1 controller (and "" for v2) to this process's
// cgroup path.
func ownCgroups() (map[string]string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, nil
}

// newHierarchy finds the host's cgroups and makes the node manager's
// parent cgroup, named name. It fails when neither v1's memory
// controller nor a v2 hierarchy with memory is mounted and writable.
func newHierarchy(name string) (*hierarchy, error) {
	mounts, err := readMounts()
	if err != nil {
		return nil, fmt.Errorf("cgroups: %w", err)
	}
	own, err := ownCgroups()
	if err != nil {
		return nil, fmt.Errorf("cgroups: %w", err)
	}
	h := &hierarchy{base: map[string]string{}}
	for _, m := range mounts {
		if m.fstype != "cgroup" {
			continue
		}
		opts := strings.Split(m.opts, ",")
		for _, c := range v1Controllers {
			if _, seen := h.base[c]; seen || !slices.Contains(opts, c) {
				continue
			}
			rel, ok := strings.CutPrefix(own[c], m.root)
			if !ok {
				rel = "/"
			}
			h.base[c] = filepath.Join(m.point, rel, name)
		}
	}
	if _, ok := h.base["memory"]; !ok {
		h.base = map[string]string{}
		for _, m := range mounts {
			if m.fstype != "cgroup2" {
				continue
			}
			ctrls, err := os.ReadFile(filepath.Join(m.point, "cgroup.controllers"))
			if err != nil || !slices.Contains(strings.Fields(string(ctrls)), "memory") {
				continue
			}
			h.v2 = true
			h.base[""] = filepath.Join(m.point, name)
			if err := enableControllers(m.point); err != nil {
				return nil, err
			}
			break
		}
		if !h.v2 {
			return nil, errors.New("cgroups: neither cgroup v1's memory controller nor a cgroup v2 hierarchy with memory is mounted")
		}
	}
	for _, dir := range h.base {
		sweepStale(filepath.Dir(dir), filepath.Base(dir))
		if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
			return nil, fmt.Errorf("cgroups: %w", err)
		}
	}
	if h.v2 {
		if err := enableControllers(h.base[""]); err != nil {
			h.remove()
			return nil, err
		}
	}
	return h, nil
}

// enableControllers hands memory, cpu and pids to dir's children (v2).
func enableControllers(dir string) error {
	ctrls, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("cgroups: %w", err)
	}
	var want []string
	for _, c := range []string{"memory", "cpu", "pids"} {
		if slices.Contains(strings.Fields(string(ctrls)), c) {
			want = append(want, "+"+c)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(strings.Join(want, " ")), 0); err != nil {
		return fmt.Errorf("cgroups: enable %s in %s: %w (the node manager needs a cgroup it may delegate)", strings.Join(want, " "), dir, err)
	}
	return nil
}

// remove removes the node manager's parent cgroup (its containers are
// gone by then).
func (h *hierarchy) remove() {
	for _, dir := range h.base {
		os.Remove(dir)
	}
}

// cgroup is one container's.
type cgroup struct {
	v2   bool
	dirs map[string]string // as hierarchy.base
}

// newCgroup makes a container's cgroup with its limits.
func (h *hierarchy) newCgroup(id string, memBytes int64, vcores int) (*cgroup, error) {
	cg := &cgroup{v2: h.v2, dirs: map[string]string{}}
	for c, base := range h.base {
		dir := filepath.Join(base, id)
		if err := os.Mkdir(dir, 0o755); err != nil {
			cg.remove()
			return nil, fmt.Errorf("cgroup %s: %w", dir, err)
		}
		cg.dirs[c] = dir
	}
	var err error
	set := func(ctrl, file, value string) {
		dir, ok := cg.dirs[ctrl]
		if err != nil || !ok {
			return
		}
		if werr := os.WriteFile(filepath.Join(dir, file), []byte(value), 0); werr != nil {
			err = fmt.Errorf("cgroup %s: %w", filepath.Join(dir, file), werr)
		}
	}
	mem := strconv.FormatInt(memBytes, 10)
	if h.v2 {
		set("", "memory.max", mem)
		if _, serr := os.Stat(filepath.Join(cg.dirs[""], "memory.swap.max")); serr == nil {
			set("", "memory.swap.max", "0") // no growing into swap instead of being killed
		}
		set("", "cpu.weight", strconv.Itoa(min(10000, 100*vcores)))
		set("", "pids.max", strconv.Itoa(maxPids))
	} else {
		set("memory", "memory.limit_in_bytes", mem)
		// With swap accounting, memory+swap gets the same limit, so the
		// container cannot grow into swap instead of being killed.
		if _, serr := os.Stat(filepath.Join(cg.dirs["memory"], "memory.memsw.limit_in_bytes")); serr == nil {
			set("memory", "memory.memsw.limit_in_bytes", mem)
		}
		set("cpu", "cpu.shares", strconv.Itoa(1024*vcores))
		set("pids", "pids.max", strconv.Itoa(maxPids))
	}
	if err != nil {
		cg.remove()
		return nil, err
	}
	return cg, nil
}

// procs lists the container's processes.
func (cg *cgroup) procs() []int {
	dir := cg.dirs[""]
	if !cg.v2 {
		dir = cg.dirs["memory"]
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// killWait bounds how long kill waits for the container to empty.
const killWait = 10 * time.Second

// kill sends SIGKILL to every process in the container, again until none
// is left (a process forking as it is killed leaves a child behind).
func (cg *cgroup) kill() error {
	if cg.v2 {
		// cgroup.kill (Linux 5.14) kills the whole tree at once.
		os.WriteFile(filepath.Join(cg.dirs[""], "cgroup.kill"), []byte("1"), 0)
	}
	deadline := time.Now().Add(killWait)
	for {
		pids := slices.DeleteFunc(cg.procs(), func(p int) bool { return p == os.Getpid() })
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("container cgroup still holds processes %v after SIGKILL", pids)
		}
		for _, p := range pids {
			if p != os.Getpid() { // never the node manager (a thread of it may sit here a moment)
				syscall.Kill(p, syscall.SIGKILL)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// remove removes the cgroup's directories (empty by then).
func (cg *cgroup) remove() error {
	var errs []error
	for _, dir := range cg.dirs {
		var err error
		// A killed process (or the launching thread, ending) leaves its
		// cgroup a moment after it is gone; rmdir says EBUSY until then.
		deadline, pause := time.Now().Add(killWait), 50*time.Microsecond
		for {
			if err = os.Remove(dir); err == nil || os.IsNotExist(err) || !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
				break
			}
			time.Sleep(pause)
			pause = min(2*pause, 5*time.Millisecond)
		}
		if err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// readKey reads "key N" from a flat-keyed file (memory.events,
// memory.oom_control); -1 when absent.
func readKey(path, key string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}

func readInt(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// memoryEvents is how many processes the kernel's OOM killer killed in
// the container for its memory limit, and the most memory it used.
func (cg *cgroup) memoryEvents() (oomKills, peak int64) {
	if cg.v2 {
		d := cg.dirs[""]
		peak = readInt(filepath.Join(d, "memory.peak")) // Linux 5.19
		if peak < 0 {
			peak = readInt(filepath.Join(d, "memory.current"))
		}
		return readKey(filepath.Join(d, "memory.events"), "oom_kill"), peak
	}
	d := cg.dirs["memory"]
	oomKills = readKey(filepath.Join(d, "memory.oom_control"), "oom_kill") // Linux 4.13
	if oomKills < 0 && readInt(filepath.Join(d, "memory.failcnt")) > 0 && readKey(filepath.Join(d, "memory.oom_control"), "under_oom") > 0 {
		oomKills = 1
	}
	return oomKills, readInt(filepath.Join(d, "memory.max_usage_in_bytes"))
}

// staleOwner reads the pid in a parent cgroup's name: a node manager's
// is "smarth-nm-PID-PORT" (tests': "smarth-test-PID-NAME"), so one that
// starts can tell another's of the same kind and whether its owner is
// gone. ok is false for names of another kind.
func staleOwner(name, own string) (pid int, ok bool) {
	mine, other := strings.SplitN(own, "-", 4), strings.SplitN(name, "-", 4)
	if len(mine) < 3 || len(other) < 3 || mine[0] != other[0] || mine[1] != other[1] {
		return 0, false
	}
	pid, err := strconv.Atoi(other[2])
	return pid, err == nil && pid > 0
}

// sweepStale kills what a node manager that is gone left running in its
// containers' cgroups under parent, and removes them: its user code
// would otherwise run on, unlimited by anyone's bookkeeping. A node
// manager whose pid is alive (or reused) is left alone.
func sweepStale(parent, own string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == own {
			continue
		}
		pid, ok := staleOwner(e.Name(), own)
		if !ok || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		base := filepath.Join(parent, e.Name())
		kids, _ := os.ReadDir(base)
		for _, k := range kids {
			if k.IsDir() {
				cg := &cgroup{dirs: map[string]string{"memory": filepath.Join(base, k.Name())}}
				cg.kill()
				cg.remove()
			}
		}
		os.Remove(base)
	}
}
