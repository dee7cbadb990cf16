package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"smarth/internal/diskperm"
)

// ErrRunning is returned by Up when every daemon of the home's cluster
// already runs.
var ErrRunning = errors.New("a cluster is already running")

// Up starts a local cluster as described by opts and returns its state once
// every daemon is ready and every datanode registered. On failure it stops
// what it started; the state file stays so that Down can clean up anything
// left behind even if Up itself is killed.
//
// On a home whose cluster partly runs, Up starts only the daemons that do
// not run, from their recorded configs, and leaves the others (and opts'
// description of a new cluster) alone; if all run it returns ErrRunning.
func Up(ctx context.Context, opts Options) (*State, error) {
	asked := opts.NameNodes // 0: whatever the home has
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	if err := privateHome(opts.Home, opts.Out); err != nil {
		return nil, err
	}
	if old, err := LoadState(opts.Home); err == nil {
		if err := sameNameNodes(old, asked); err != nil {
			return nil, err
		}
		if slices.ContainsFunc(old.Daemons, func(d Daemon) bool { return d.Running() }) {
			// Part of it runs (one daemon crashed or was stopped): start
			// just the missing daemons, as `hdfs --daemon start` would
			// one by one.
			return resume(ctx, old, opts)
		}
		if old.HA() {
			// An HA group stopped by down: its members come back on the
			// addresses the group's log records, from their configs.
			return resume(ctx, old, opts)
		}
	}
	var dc *diskCap
	if opts.Cache.DiskReadRate > 0 {
		var err error
		if dc, err = newDiskCap(opts.Home, opts.Cache.DiskReadRate); err != nil {
			return nil, err
		}
	}
	bin, err := installBinary(opts.Binary, opts.Home)
	if err != nil {
		return nil, err
	}
	u := &upper{opts: opts, l: layout{opts.Home}, disk: dc, st: &State{Home: opts.Home, Binary: bin, Started: time.Now()}}
	if err := u.run(ctx); err != nil {
		if _, derr := Down(opts.Home, opts.StopGrace); derr != nil {
			err = fmt.Errorf("%w (and stopping what was started: %v)", err, derr)
		}
		return nil, err
	}
	return u.st, nil
}

// upper carries one Up call.
type upper struct {
	opts Options
	l    layout
	disk *diskCap   // nil: datanodes' disks are not capped
	mu   sync.Mutex // guards st and writes to opts.Out: datanodes start in parallel
	st   *State
}

func (u *upper) run(ctx context.Context) error {
	if err := u.st.save(); err != nil {
		return err
	}
	token, err := u.opts.prepareAuth(u.l)
	if err != nil {
		return err
	}
	if err := u.opts.prepareTLS(u.l); err != nil {
		return err
	}
	u.st.Auth, u.st.TLS = u.opts.Auth, u.opts.TLS
	if err := u.st.save(); err != nil {
		return err
	}
	if token != "" {
		fmt.Fprintf(u.opts.Out, "auth      secure: keys in %s, your token in %s\n", filepath.Dir(u.l.key(identityKeyName)), token)
	} else {
		fmt.Fprintf(u.opts.Out, "WARNING   auth simple: the namenode trusts whatever user name a caller asserts; use only on a trusted network\n")
	}
	if u.opts.TLS {
		fmt.Fprintf(u.opts.Out, "tls       on: CA %s (clients of this home trust it)\n", CAFile(u.l.home))
	}
	if err := u.startNameNodes(ctx); err != nil {
		return err
	}
	nnList := u.st.NameNode
	u.opts.socketPath = u.opts.prepareSockets(u.l)
	u.st.DomainSocketPath = u.opts.socketPath

	var hosts []string
	errs := make([]error, u.opts.DataNodes)
	var wg sync.WaitGroup
	for i := range u.opts.DataNodes {
		hosts = append(hosts, Hostname(i))
		wg.Go(func() {
			cfg, err := u.opts.dataNodeConfig(u.l, i, nnList)
			var r Ready
			if err == nil {
				r, err = u.start(ctx, Hostname(i), "datanode", Hostname(i), u.opts.Racks[i], cfg)
			}
			if err == nil {
				u.mu.Lock()
				fmt.Fprintf(u.opts.Out, "%-9s ready  data %s  rack %s\n", Hostname(i), r.Data, u.opts.Racks[i])
				u.mu.Unlock()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, u.opts.ReadyTimeout)
	defer cancel()
	if err := WaitDataNodes(wctx, u.st, hosts); err != nil {
		return err
	}
	fmt.Fprintf(u.opts.Out, "%d datanodes registered with the %s\n", len(hosts), u.st.activeWord())

	if u.opts.NodeManagers {
		if err := u.startMapReduce(ctx, nnList); err != nil {
			return err
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.st.Ready = true
	return u.st.save()
}

// startNameNodes starts the single namenode, or every member of an HA
// group at once (a member waits for the others to form the group), and
// for a group waits until one member is active.
func (u *upper) startNameNodes(ctx context.Context) error {
	if u.opts.NameNodes <= 1 {
		nnConf, err := u.opts.nameNodeConfig(u.l)
		if err != nil {
			return err
		}
		nn, err := u.start(ctx, "namenode", "namenode", "", "", nnConf)
		if err != nil {
			return err
		}
		u.st.NameNode, u.st.NameNodeHTTP = nn.RPC, nn.HTTP
		fmt.Fprintf(u.opts.Out, "namenode  ready  rpc %s  web %s://%s/\n", nn.RPC, u.st.WebScheme(), nn.HTTP)
		return nil
	}
	ports, err := u.opts.pickHAPorts()
	if err != nil {
		return err
	}
	fmt.Fprintf(u.opts.Out, "namenodes an HA group of %d (nn1 bootstraps it); TLS is on: the group's members speak mutual TLS\n", len(ports))
	errs := make([]error, len(ports))
	var wg sync.WaitGroup
	for i := range ports {
		name := NameNodeName(i, len(ports))
		wg.Go(func() {
			cfg, err := u.opts.haConfig(u.l, i, ports)
			var r Ready
			if err == nil {
				r, err = u.start(ctx, name, "namenode", "", "", cfg)
			}
			if err == nil {
				u.mu.Lock()
				fmt.Fprintf(u.opts.Out, "%-9s ready  rpc %s  web %s://%s/  raft %s\n", name, r.RPC, u.st.WebScheme(), r.HTTP, ports[i].raft)
				u.mu.Unlock()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	u.mu.Lock()
	u.st.NameNode, u.st.NameNodeHTTP = u.st.nameNodeList(), ""
	if d, ok := u.st.Daemon(NameNodeName(0, len(ports))); ok {
		u.st.NameNodeHTTP = d.Ready.HTTP
	}
	err = u.st.save()
	u.mu.Unlock()
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, u.opts.ReadyTimeout)
	defer cancel()
	_, m, err := WaitActive(wctx, u.st)
	if err != nil {
		return err
	}
	fmt.Fprintf(u.opts.Out, "%s is active (term %d)\n", m.Name, m.HA.GetTerm())
	return nil
}

func (u *upper) startMapReduce(ctx context.Context, nn string) error {
	rmConf, err := u.opts.resourceManagerConfig(u.l, nn)
	if err != nil {
		return err
	}
	rm, err := u.start(ctx, "resourcemanager", "resourcemanager", "", "", rmConf)
	if err != nil {
		return err
	}
	u.st.ResourceManager = rm.RPC
	fmt.Fprintf(u.opts.Out, "resourcemanager ready  rpc %s  web %s://%s/\n", rm.RPC, u.st.WebScheme(), rm.HTTP)
	// Every namenode's web address for an HA group: node managers fetch
	// jobs' tokens from whichever member is active. Read before the
	// node managers start, whose records change u.st.
	u.mu.Lock()
	nnHTTP := u.st.NameNodeHTTP
	if u.st.HA() {
		nnHTTP = u.st.nameNodeHTTPList()
	}
	u.mu.Unlock()
	errs := make([]error, u.opts.DataNodes)
	var wg sync.WaitGroup
	for i := range u.opts.DataNodes {
		name := fmt.Sprintf("nm%d", i+1)
		// Its work_dir is a passage: containers' own directories under
		// it must be reachable by their users; the node manager keeps
		// everything else in it (jobs' spills, task logs) private.
		if err := diskperm.MkdirAll(u.l.data(name), diskperm.Passage); err != nil {
			return err
		}
		wg.Go(func() {
			cfg, err := u.opts.nodeManagerConfig(u.l, i, nn, nnHTTP, rm.RPC)
			if err == nil {
				_, err = u.start(ctx, name, "nodemanager", Hostname(i), u.opts.Racks[i], cfg)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Fprintf(u.opts.Out, "%d node managers ready\n", u.opts.DataNodes)
	return nil
}

// start writes a new daemon's config and launches it.
func (u *upper) start(ctx context.Context, name, kind, host, rack string, cfg map[string]any) (Ready, error) {
	d := Daemon{
		Name: name, Kind: kind, Hostname: host, Rack: rack,
		ConfigFile: u.l.config(name), LogFile: u.l.log(name), ReadyFile: u.l.ready(name),
	}
	if err := writeConfig(d.ConfigFile, cfg); err != nil {
		return Ready{}, fmt.Errorf("%s: write config: %w", name, err)
	}
	return u.launch(ctx, d, u.capDisk)
}

// launch starts a daemon from its config file, records its pid in the
// state file before waiting (so Down finds it even if we die now), calls
// afterStart (the disk cap), waits for its ready file and records its
// addresses.
func (u *upper) launch(ctx context.Context, d Daemon, afterStart func(Daemon) error) (Ready, error) {
	p, err := Launch(ProcSpec{
		Name: d.Name, Kind: d.Kind, Binary: u.st.Binary,
		ConfigFile: d.ConfigFile, ReadyFile: d.ReadyFile, LogFile: d.LogFile, OutFile: u.l.out(d.Name),
		Detach: u.opts.Detach,
	})
	if err != nil {
		return Ready{}, err
	}
	prev := d.PID
	d.PID = p.PID
	if err := u.record(d); err != nil {
		return Ready{}, err
	}
	if err := afterStart(d); err != nil {
		return Ready{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, u.opts.ReadyTimeout)
	defer cancel()
	r, err := p.WaitReady(wctx)
	if err != nil {
		if exited, _ := p.Exited(); exited {
			// A process that died before it was ready was never the
			// daemon: the pid recorded before stays, so that a daemon
			// taken for stopped that still runs (and refused this start
			// because it holds its directories) is the one `down` stops.
			d.PID = prev
			err = errors.Join(err, u.record(d))
		}
		return Ready{}, err
	}
	d.Ready = r
	if r.HTTP != "" {
		d.WebURL = u.st.WebScheme() + "://" + r.HTTP + "/"
	}
	return r, u.record(d)
}

// capDisk moves a datanode into its disk-capped cgroup right after its
// start, before it has data to read: a fresh home has no blocks, and a
// restarted one reads only block metadata before the move.
func (u *upper) capDisk(d Daemon) error {
	if u.disk == nil || d.Kind != "datanode" {
		return nil
	}
	dir, err := u.disk.join(d.Name, d.PID)
	if dir != "" {
		u.mu.Lock()
		u.st.Cgroups = append(u.st.Cgroups, dir)
		serr := u.st.save()
		u.mu.Unlock()
		err = errors.Join(err, serr)
	}
	return err
}

// record adds or replaces d in the state and saves it.
func (u *upper) record(d Daemon) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if old, ok := u.st.Daemon(d.Name); ok {
		*old = d
	} else {
		u.st.Daemons = append(u.st.Daemons, d)
	}
	return u.st.save()
}

// installBinary copies the smarth executable into <home>/bin so that the
// daemons keep a binary to run (and `down` a path to recognise) even when
// the original was a temporary `go run` build that is deleted on exit.
func installBinary(src, home string) (string, error) {
	dst := filepath.Join(home, "bin", "smarth")
	if s, err := filepath.EvalSymlinks(src); err == nil {
		src = s
	}
	if src == dst {
		return dst, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	in, err := os.Open(src)
	if err != nil {
		return "", fmt.Errorf("install smarth binary: %w", err)
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return "", fmt.Errorf("install smarth binary: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", fmt.Errorf("install smarth binary: %w", err)
	}
	if err := out.Close(); err != nil {
		return "", err
	}
	// Rename over a binary that old daemons may still run is fine: they
	// keep the old inode.
	return dst, os.Rename(tmp, dst)
}

// Down stops every daemon recorded in <home>/cluster.json by its pid
// (SIGTERM, then SIGKILL after grace) and marks the cluster down. Data is
// kept. It returns one line per daemon saying what happened.
func Down(home string, grace time.Duration) ([]string, error) {
	st, err := LoadState(home)
	if err != nil {
		return nil, err
	}
	var (
		mu    sync.Mutex
		lines = make([]string, len(st.Daemons))
		errs  []error
		wg    sync.WaitGroup
	)
	// Stop compute daemons and datanodes before the namenode, so that
	// they do not spend their grace period retrying a namenode that is
	// already gone.
	stop := func(filter func(Daemon) bool) {
		for i, d := range st.Daemons {
			if !filter(d) {
				continue
			}
			wg.Go(func() {
				running := d.Running()
				killed, err := stopPID(d.PID, d.ConfigFile, grace)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					errs = append(errs, fmt.Errorf("%s: %w", d.Name, err))
					lines[i] = fmt.Sprintf("%-16s pid %-7d %v", d.Name, d.PID, err)
				case !running:
					lines[i] = fmt.Sprintf("%-16s pid %-7d was not running", d.Name, d.PID)
				case killed:
					lines[i] = fmt.Sprintf("%-16s pid %-7d killed (no exit within %v of SIGTERM)", d.Name, d.PID, grace)
				default:
					lines[i] = fmt.Sprintf("%-16s pid %-7d stopped", d.Name, d.PID)
				}
			})
		}
		wg.Wait()
	}
	stop(func(d Daemon) bool { return d.Kind != "namenode" && d.Kind != "resourcemanager" })
	stop(func(d Daemon) bool { return d.Kind == "namenode" || d.Kind == "resourcemanager" })
	if err := errors.Join(errs...); err != nil {
		return lines, err
	}
	// Keep the file (with ready=false) for the record of what ran, but no
	// client should find a namenode address in it any more.
	if err := removeCgroups(st.Cgroups); err != nil {
		return lines, fmt.Errorf("remove the disk-cap cgroups: %w", err)
	}
	st.Cgroups = nil
	st.Ready, st.NameNode, st.NameNodeHTTP, st.ResourceManager = false, "", "", ""
	for i := range st.Daemons {
		st.Daemons[i].PID = 0
	}
	if err := st.save(); err != nil {
		return lines, err
	}
	return slicesCompact(lines), nil
}

func slicesCompact(lines []string) []string {
	out := lines[:0]
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
