package container

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"smarth/internal/units"
	"strconv"
	"sync"
	"syscall"
)

// The container_executor values (YARN's container-executor classes).
const (
	// ExecutorLinux is LinuxContainerExecutor: user code runs as the
	// policy's user, in a cgroup and a private work directory.
	ExecutorLinux = "linux"
	// ExecutorDefault is DefaultContainerExecutor: user code runs as the
	// node manager's own user with its environment (auth: simple only).
	ExecutorDefault = "default"
)

// Config configures a Launcher.
type Config struct {
	Executor string
	Policy   Policy
	// Dir holds the containers' work directories; it is made 0711 and
	// owned by the node manager, so a container reaches its own
	// directory but cannot list the others.
	Dir string
	// Name names the node manager's parent cgroup (unique per node
	// manager on a host).
	Name string
	// Secure is auth: secure. A linux executor that cannot switch users
	// (the node manager is not root) then refuses to run user code; in
	// simple mode it falls back to the default executor with a warning.
	Secure bool
	Logger *slog.Logger
}

// geteuid is os.Geteuid; tests stand in a non-root node manager.
var geteuid = os.Geteuid

// Launcher makes the containers of one node manager.
type Launcher struct {
	cfg     Config
	linux   bool
	refusal error      // set: every Start fails with it
	cgroups *hierarchy // nil: no cgroups on this host
}

// NewLauncher checks cfg and prepares the containers' parent directory
// and cgroup.
func NewLauncher(cfg Config) (*Launcher, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &Launcher{cfg: cfg}
	switch cfg.Executor {
	case ExecutorDefault:
		if cfg.Secure {
			log.Warn("container_executor: default runs user code as the node manager's own OS user with its environment; use linux in secure mode")
		}
		return l, nil
	case ExecutorLinux:
	default:
		return nil, fmt.Errorf("container_executor %q: want %s or %s", cfg.Executor, ExecutorLinux, ExecutorDefault)
	}
	if err := cfg.Policy.Validate(); err != nil {
		return nil, err
	}
	if euid := geteuid(); euid != 0 {
		if !cfg.Secure {
			log.Warn("container_executor: linux needs root to switch users; in auth: simple user code runs as the node manager's own user (default executor)", "euid", euid)
			return l, nil
		}
		// Running user code as the daemon would hand it the daemon's
		// credentials: refuse, and say why in every task that tries.
		l.refusal = fmt.Errorf("container_executor: linux cannot run user code: the node manager runs as uid %d, not root, and cannot switch to the task's user; in secure mode it does not run user code as itself", euid)
		log.Error("user code (streaming tasks) will be refused", "err", l.refusal)
		return l, nil
	}
	if cfg.Dir == "" {
		return nil, errors.New("container: no work directory")
	}
	if err := os.MkdirAll(cfg.Dir, 0o711); err != nil {
		return nil, fmt.Errorf("container work directory: %w", err)
	}
	// 0711 whatever the umask or an older run left: search, not list.
	if err := os.Chmod(cfg.Dir, 0o711); err != nil {
		return nil, fmt.Errorf("container work directory: %w", err)
	}
	l.linux = true
	if err := reachable(cfg.Dir); err != nil {
		log.Warn("containers start in their work directories, but the paths they are given (HOME, TMPDIR, the token file) do not resolve for them; open the path (0711) or move the containers' directory", "err", err)
	}
	h, err := newHierarchy(cfg.Name)
	if err != nil {
		log.Warn("containers run without memory and CPU limits", "err", err)
	} else {
		l.cgroups = h
	}
	// Work directories a previous run of this node manager left (it
	// crashed, or was killed): their tasks are over.
	if old, err := os.ReadDir(cfg.Dir); err == nil {
		for _, e := range old {
			os.RemoveAll(filepath.Join(cfg.Dir, e.Name()))
		}
	}
	return l, nil
}

// reachable says whether other users may pass through every directory
// above dir (search permission), as YARN needs of its local dirs: the
// node manager enters a container's directory for it, but absolute paths
// to it (HOME, TMPDIR) resolve only through such a path.
func reachable(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("%s is %04o: other users cannot pass through it to %s", d, st.Mode().Perm(), abs)
		}
		if d == "/" {
			return nil
		}
	}
}

// Linux says whether containers run as the policy's user.
func (l *Launcher) Linux() bool { return l != nil && l.linux }

// Cgroups says whether containers get a cgroup (v1 or v2).
func (l *Launcher) Cgroups() string {
	switch {
	case l == nil || l.cgroups == nil:
		return ""
	case l.cgroups.v2:
		return "v2"
	}
	return "v1"
}

// Close removes the node manager's parent cgroup; its containers must
// be destroyed first.
func (l *Launcher) Close() {
	if l != nil && l.cgroups != nil {
		l.cgroups.remove()
	}
}

// Spec is what one container is for.
type Spec struct {
	ID          string // the task attempt
	User        string // the job's submitter
	MemoryBytes int64
	VCores      int
	Logger      *slog.Logger // the attempt's log
	// Credential, if set, gives the container's credential for the
	// cluster (a delegation token of the submitter): it is written to
	// the container's TokenFile (0600, the container user's) and named
	// by HADOOP_TOKEN_FILE_LOCATION.
	Credential func(context.Context) (string, error)
	// Localize, if set, puts the job's shipped files (Hadoop's
	// distributed cache) into the container's work directory before its
	// first command: dir is that directory, uid and gid its user's (-1
	// with the default executor, whose commands run as the node
	// manager).
	Localize func(dir string, uid, gid int) error
}

// TokenFile is where a container's credential is, relative to its work
// directory, which is its HOME: smarth's client finds it there
// (~/.smarth/token) without any variable.
const TokenFile = ".smarth/token"

// New returns the container of one task attempt. Nothing is made until
// the task starts its first command (most apps run none); Destroy undoes
// it all.
func (l *Launcher) New(spec Spec) *Container {
	if spec.Logger == nil {
		spec.Logger = slog.New(slog.DiscardHandler)
	}
	return &Container{l: l, spec: spec}
}

// Container is one task attempt's.
type Container struct {
	l    *Launcher
	spec Spec

	mu       sync.Mutex
	prepared bool
	err      error // from preparing
	id       *Identity
	workDir  string
	cg       *cgroup
	pids     []int // started commands (without a cgroup: their process groups)
	hasCred  bool  // TokenFile written
}

// Start starts cmd (its Path, Args, pipes and SysProcAttr set by the
// caller) in the container, with env (NAME=value: the task's variables)
// added to the container's environment.
func (c *Container) Start(cmd *exec.Cmd, env []string) error {
	if err := c.Ready(); err != nil {
		return err
	}
	if !c.l.linux {
		cmd.Env = append(os.Environ(), env...)
		if c.spec.Localize != nil {
			// Shipped files need a directory to be found by their
			// names: one of the attempt's own, as its cwd.
			dir, err := c.defaultWorkDir()
			if err != nil {
				return err
			}
			cmd.Dir = dir
		}
		return c.record(cmd, cmd.Start())
	}
	cmd.Env = c.env(env)
	cmd.Dir = "" // the thread's cwd, below
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: c.id.UID, Gid: c.id.GID, Groups: c.id.Groups}
	// Pdeathsig would follow the thread that forks, which ends below.
	cmd.SysProcAttr.Pdeathsig = 0
	errc := make(chan error, 1)
	go func() {
		// This thread takes the container's cwd (and on cgroup v1 its
		// cgroups) so the child is born with them: chdir as root reaches
		// the work directory even when an ancestor is 0700, and a child
		// born in its cgroup cannot fork out of it before being moved.
		// The thread is never unlocked, so it ends with this goroutine.
		runtime.LockOSThread()
		errc <- c.startOnThread(cmd)
	}()
	return c.record(cmd, <-errc)
}

func (c *Container) record(cmd *exec.Cmd, err error) error {
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.pids = append(c.pids, cmd.Process.Pid)
	c.mu.Unlock()
	return nil
}

func (c *Container) startOnThread(cmd *exec.Cmd) error {
	if err := syscall.Unshare(syscall.CLONE_FS); err != nil {
		return fmt.Errorf("container %s: unshare: %w", c.spec.ID, err)
	}
	if err := syscall.Chdir(c.workDir); err != nil {
		return fmt.Errorf("container %s: %w", c.spec.ID, err)
	}
	if c.cg == nil {
		return cmd.Start()
	}
	if c.cg.v2 {
		fd, err := syscall.Open(c.cg.dirs[""], syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("container %s: %w", c.spec.ID, err)
		}
		defer syscall.Close(fd)
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd // clone3 CLONE_INTO_CGROUP
		return cmd.Start()
	}
	tid := syscall.Gettid()
	var moved []string
	defer func() {
		// Back to the node manager's cgroups if the runtime keeps this
		// thread: it ends any other thread when the goroutine exits
		// locked, but parks the main thread, which must not be counted,
		// limited or killed with the container. (Moving a thread costs a
		// few hundred microseconds; the usual thread just ends.)
		if tid != os.Getpid() {
			return
		}
		for _, c := range moved {
			os.WriteFile(filepath.Join(filepath.Dir(filepath.Dir(c)), "tasks"), []byte(strconv.Itoa(tid)), 0)
		}
	}()
	for _, dir := range c.cg.dirs {
		if err := os.WriteFile(filepath.Join(dir, "tasks"), []byte(strconv.Itoa(tid)), 0); err != nil {
			return fmt.Errorf("container %s: join cgroup %s: %w", c.spec.ID, dir, err)
		}
		moved = append(moved, dir)
	}
	return cmd.Start()
}

// Ready resolves the user and makes the work directory and cgroup, once,
// or says why the container cannot run user code.
func (c *Container) Ready() error {
	if c.l.refusal != nil {
		return c.l.refusal
	}
	if !c.l.linux {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.prepared {
		return c.err
	}
	c.prepared = true
	c.err = c.prepareLocked()
	return c.err
}

func (c *Container) prepareLocked() error {
	id, why, err := c.l.cfg.Policy.Resolve(c.spec.User)
	if err != nil {
		return fmt.Errorf("container %s: %w", c.spec.ID, err)
	}
	if why != "" {
		c.spec.Logger.Info("the submitter's own OS account is not used", "submitter", c.spec.User, "reason", why, "run_as_user", id.Name)
	}
	c.id = id
	// The random part keeps a container from finding another's
	// directory by name (the parent cannot be listed), which matters
	// when both run as the same fallback user.
	var r [8]byte
	rand.Read(r[:])
	dir := filepath.Join(c.l.cfg.Dir, c.spec.ID+"-"+hex.EncodeToString(r[:]))
	for _, d := range []string{dir, filepath.Join(dir, "tmp")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			os.RemoveAll(dir)
			return fmt.Errorf("container %s: %w", c.spec.ID, err)
		}
		if err := os.Lchown(d, int(id.UID), int(id.GID)); err != nil {
			os.RemoveAll(dir)
			return fmt.Errorf("container %s: %w", c.spec.ID, err)
		}
	}
	c.workDir = dir
	if c.spec.Localize != nil {
		if err := c.spec.Localize(dir, int(id.UID), int(id.GID)); err != nil {
			os.RemoveAll(dir)
			c.workDir = ""
			return fmt.Errorf("container %s: localize shipped files: %w", c.spec.ID, err)
		}
	}
	if c.spec.Credential != nil {
		// Most commands never talk to the cluster: one that cannot get
		// its credential runs without, and its log says why.
		if err := c.writeCredential(); err != nil {
			c.spec.Logger.Warn("the container runs without a cluster credential", "container", c.spec.ID, "err", err)
		}
	}
	if c.l.cgroups != nil {
		vc := max(1, c.spec.VCores)
		cg, err := c.l.cgroups.newCgroup(filepath.Base(dir), c.spec.MemoryBytes, vc)
		if err != nil {
			os.RemoveAll(dir)
			return fmt.Errorf("container %s: %w", c.spec.ID, err)
		}
		c.cg = cg
	}
	c.spec.Logger.Info("container prepared", "container", c.spec.ID, "user", id.Name, "uid", id.UID,
		"work_dir", dir, "memory_bytes", c.spec.MemoryBytes, "vcores", c.spec.VCores, "cgroups", c.l.Cgroups())
	return nil
}

// defaultWorkDir makes, once, the work directory of a container of the
// default executor that ships files (it runs as the node manager, so the
// directory is the node manager's, 0700) and localizes them there.
func (c *Container) defaultWorkDir() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.workDir != "" || c.err != nil {
		return c.workDir, c.err
	}
	if c.l.cfg.Dir == "" {
		c.err = fmt.Errorf("container %s: no work directory for shipped files (the node manager's work_dir)", c.spec.ID)
		return "", c.err
	}
	if err := os.MkdirAll(c.l.cfg.Dir, 0o700); err != nil {
		c.err = fmt.Errorf("container %s: %w", c.spec.ID, err)
		return "", c.err
	}
	var r [8]byte
	rand.Read(r[:])
	dir := filepath.Join(c.l.cfg.Dir, c.spec.ID+"-"+hex.EncodeToString(r[:]))
	if err := os.Mkdir(dir, 0o700); err != nil {
		c.err = fmt.Errorf("container %s: %w", c.spec.ID, err)
		return "", c.err
	}
	c.workDir = dir // Destroy removes it
	if err := c.spec.Localize(dir, -1, -1); err != nil {
		c.err = fmt.Errorf("container %s: localize shipped files: %w", c.spec.ID, err)
		return "", c.err
	}
	return dir, nil
}

// writeCredential puts the container's credential in its home, for its
// user only.
func (c *Container) writeCredential() error {
	cred, err := c.spec.Credential(context.Background())
	if err != nil {
		return err
	}
	dir := filepath.Join(c.workDir, filepath.Dir(TokenFile))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	path := filepath.Join(c.workDir, TokenFile)
	if err := os.WriteFile(path, []byte(cred+"\n"), 0o600); err != nil {
		return err
	}
	for _, p := range []string{dir, path} {
		if err := os.Lchown(p, int(c.id.UID), int(c.id.GID)); err != nil {
			return err
		}
	}
	c.hasCred = true
	return nil
}

// envAllowed are the node manager's variables a container inherits:
// none holds a secret.
var envAllowed = []string{"LANG", "LC_ALL", "LC_CTYPE", "TZ"}

const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// env is the container's environment: an allow-list, never the daemon's
// whole environment (SMARTH_TOKEN_FILE and the like stay out).
func (c *Container) env(task []string) []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = defaultPath
	}
	env := []string{"PATH=" + path, "HOME=" + c.workDir, "PWD=" + c.workDir, "TMPDIR=" + filepath.Join(c.workDir, "tmp"),
		"USER=" + c.id.Name, "LOGNAME=" + c.id.Name}
	if c.hasCred {
		env = append(env, "HADOOP_TOKEN_FILE_LOCATION="+filepath.Join(c.workDir, TokenFile))
	}
	for _, k := range envAllowed {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, task...)
}

// WorkDir is the container's work directory ("" before its first
// command or with the default executor).
func (c *Container) WorkDir() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.workDir
}

// User is the OS user the container's commands run as ("" before the
// first command or with the default executor).
func (c *Container) User() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.id == nil {
		return ""
	}
	return c.id.Name
}

// Destroy kills every process left in the container (also those that
// left their process group) and removes its cgroup and work directory.
func (c *Container) Destroy() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	if c.cg != nil {
		errs = append(errs, c.cg.kill(), c.cg.remove())
	} else {
		for _, p := range c.pids {
			syscall.Kill(-p, syscall.SIGKILL) // its process group, as before containers
		}
	}
	if c.workDir != "" {
		errs = append(errs, os.RemoveAll(c.workDir))
	}
	return errors.Join(errs...)
}

// Explain adds the container's reason to a task's failure: the memory
// limit, in YARN's words, when the kernel killed a process for it. A
// task whose commands ended well although the kernel killed one of their
// processes for the limit (a shell that goes on after `big; cat`) fails
// all the same: YARN kills the whole container once it is beyond its
// limit, and output made without the killed process cannot be trusted.
func (c *Container) Explain(err error) error {
	c.mu.Lock()
	cg, pid := c.cg, 0
	if len(c.pids) > 0 {
		pid = c.pids[0]
	}
	c.mu.Unlock()
	if cg == nil {
		return err
	}
	oom, peak := cg.memoryEvents()
	if oom <= 0 {
		return err
	}
	if err == nil {
		err = fmt.Errorf("the kernel killed %d of the task's processes for the memory limit, and its commands went on", oom)
	}
	// Sizes as Hadoop's ContainersMonitorImpl prints them: long2String(n,
	// "", 1) + "B", e.g. "32 MB", "33.5 MB", "512B".
	return fmt.Errorf("Container [pid=%d,containerID=%s] is running beyond physical memory limits. Current usage: %s of %s physical memory used. Killing container. %w",
		pid, c.spec.ID, units.FormatHadoop(cmp.Or(max(peak, 0), c.spec.MemoryBytes), "", 1)+"B", units.FormatHadoop(c.spec.MemoryBytes, "", 1)+"B", err)
}

// HostSupport says why this host cannot run linux containers with
// cgroups (nil: it can): the process is not root, or no usable cgroup
// hierarchy is mounted.
func HostSupport() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("not root (euid %d): containers switch users", os.Geteuid())
	}
	h, err := newHierarchy(fmt.Sprintf("smarth-probe-%d", os.Getpid()))
	if err != nil {
		return err
	}
	h.remove()
	return nil
}
