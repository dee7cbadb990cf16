package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"smarth/internal/testbed/cgroup"
)

// This file is what `hdfs --daemon start|stop` gives an operator: one
// daemon of a recorded cluster started, stopped or restarted on its own,
// from the config file it ran with, its data kept; and Up on a cluster
// that is partly running starts only the daemons that are not.

// ControlOptions say how Start, Stop and Restart treat one daemon.
type ControlOptions struct {
	Home         string        // default Home()
	ReadyTimeout time.Duration // per wait; default 60s
	StopGrace    time.Duration // SIGTERM to SIGKILL; default 10s
	Out          io.Writer     // progress lines; default discard
}

func (o *ControlOptions) setDefaults() error {
	if o.Home == "" {
		o.Home = Home()
	}
	h, err := filepath.Abs(o.Home)
	if err != nil {
		return err
	}
	o.Home = h
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 60 * time.Second
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 10 * time.Second
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	return nil
}

// aliases are the short names operators type for the two singleton
// daemons (hdfs and yarn say namenode and resourcemanager; people say nn
// and rm).
var aliases = map[string]string{"nn": "namenode", "rm": "resourcemanager"}

// lookup finds a recorded daemon by the name `cluster status` shows (or an
// alias), with an error listing the names there are.
func (s *State) lookup(name string) (*Daemon, error) {
	if a, ok := aliases[name]; ok {
		name = a
	}
	if d, ok := s.Daemon(name); ok {
		return d, nil
	}
	var names []string
	for _, d := range s.Daemons {
		names = append(names, d.Name)
	}
	slices.Sort(names) // daemons are recorded as they come up, in no fixed order
	return nil, fmt.Errorf("no daemon %q in the cluster in %s (it has %s)", name, s.Home, strings.Join(names, ", "))
}

// Start starts one recorded daemon of the cluster in opts.Home that is not
// running, with the config it last ran with and its data, and waits until
// it is ready: a datanode registered with the namenode, a namenode out of
// safe mode with the running datanodes registered again.
func Start(ctx context.Context, name string, opts ControlOptions) (*State, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	st, err := LoadState(opts.Home)
	if err != nil {
		return nil, err
	}
	d, err := st.lookup(name)
	if err != nil {
		return nil, err
	}
	if d.Running() {
		return st, fmt.Errorf("%s already runs (pid %d); use restart to start it anew", d.Name, d.PID)
	}
	u := &upper{opts: Options{Home: st.Home, ReadyTimeout: opts.ReadyTimeout, Detach: true, Out: opts.Out}, l: layout{st.Home}, st: st}
	if err := u.restartRecorded(ctx, []string{d.Name}); err != nil {
		return st, err
	}
	return st, nil
}

// Stop stops one daemon of the cluster in opts.Home by its recorded pid
// (SIGTERM, SIGKILL after the grace period) and returns a line saying
// what happened. Its data, config and place in the state file stay, so
// Start or Up brings it back.
func Stop(name string, opts ControlOptions) (string, error) {
	if err := opts.setDefaults(); err != nil {
		return "", err
	}
	st, err := LoadState(opts.Home)
	if err != nil {
		return "", err
	}
	d, err := st.lookup(name)
	if err != nil {
		return "", err
	}
	line, err := stopOne(*d, opts.StopGrace)
	if err != nil {
		return line, err
	}
	d.PID = 0
	// The namenode's address stays recorded: it comes back on it (see
	// pinAddrs), and clients then find it without a new lookup.
	st.Ready = false
	return line, st.save()
}

// Restart stops one daemon if it runs and starts it again.
func Restart(ctx context.Context, name string, opts ControlOptions) (*State, []string, error) {
	line, err := Stop(name, opts)
	if err != nil {
		return nil, []string{line}, err
	}
	st, err := Start(ctx, name, opts)
	return st, []string{line}, err
}

// stopOne stops a recorded daemon and describes the outcome.
func stopOne(d Daemon, grace time.Duration) (string, error) {
	running := d.Running()
	killed, err := stopPID(d.PID, d.ConfigFile, grace)
	switch {
	case err != nil:
		return fmt.Sprintf("%-16s pid %-7d %v", d.Name, d.PID, err), fmt.Errorf("%s: %w", d.Name, err)
	case !running:
		return fmt.Sprintf("%-16s was not running", d.Name), nil
	case killed:
		return fmt.Sprintf("%-16s pid %-7d killed (no exit within %v of SIGTERM)", d.Name, d.PID, grace), nil
	default:
		return fmt.Sprintf("%-16s pid %-7d stopped", d.Name, d.PID), nil
	}
}

// resume starts the daemons of a partly running cluster that are not
// running, leaving the running ones alone: what Up does when it finds one.
// The recorded configs win over opts, which describe a new cluster; only
// opts' timeouts, output and detaching apply.
func resume(ctx context.Context, st *State, opts Options) (*State, error) {
	var missing []string
	for _, d := range st.Daemons {
		if !d.Running() {
			missing = append(missing, d.Name)
		}
	}
	if len(missing) == 0 {
		return st, fmt.Errorf("%w in %s: every daemon runs; nothing to start", ErrRunning, st.Home)
	}
	fmt.Fprintf(opts.Out, "cluster in %s runs %d of %d daemons; starting %s with their recorded configs\n",
		st.Home, len(st.Daemons)-len(missing), len(st.Daemons), strings.Join(missing, ", "))
	u := &upper{opts: opts, l: layout{st.Home}, st: st}
	return st, u.restartRecorded(ctx, missing)
}

// restartRecorded starts the named recorded daemons in dependency order:
// the namenode before anything that reports to it, datanodes together,
// the resource manager before node managers. It then waits for every
// running datanode to be registered and marks the cluster ready if all
// its daemons run.
func (u *upper) restartRecorded(ctx context.Context, names []string) error {
	byKind := map[string][]Daemon{}
	for _, n := range names {
		d, _ := u.st.Daemon(n)
		byKind[d.Kind] = append(byKind[d.Kind], *d)
	}
	for _, kind := range []string{"namenode", "datanode", "resourcemanager", "nodemanager"} {
		errs := make([]error, len(byKind[kind]))
		var wg sync.WaitGroup
		for i, d := range byKind[kind] {
			wg.Go(func() { errs[i] = u.startRecorded(ctx, d) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		if kind == "namenode" && len(byKind[kind]) > 0 && u.st.HA() {
			if err := u.waitMembers(ctx, byKind[kind]); err != nil {
				return err
			}
		}
	}
	if err := u.waitRegistered(ctx); err != nil {
		return err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.st.Ready = !slices.ContainsFunc(u.st.Daemons, func(d Daemon) bool { return !d.Running() })
	return u.st.save()
}

// startRecorded launches one recorded daemon from its config file.
func (u *upper) startRecorded(ctx context.Context, d Daemon) error {
	if err := pinAddrs(d); err != nil {
		return err
	}
	r, err := u.launch(ctx, d, u.rejoinDiskCap)
	if err != nil {
		return err
	}
	u.mu.Lock()
	switch d.Kind {
	case "namenode":
		if u.st.HA() {
			// Clients keep the whole group's list; nn1's web address
			// stays the one recorded.
			u.st.NameNode = u.st.nameNodeList()
			if d.Name == NameNodeName(0, 2) {
				u.st.NameNodeHTTP = r.HTTP
			}
		} else {
			u.st.NameNode, u.st.NameNodeHTTP = r.RPC, r.HTTP
		}
	case "resourcemanager":
		u.st.ResourceManager = r.RPC
	}
	err = u.st.save()
	u.mu.Unlock()
	fmt.Fprintf(u.opts.Out, "%-16s started  pid %d  %s\n", d.Name, r.PID, addresses(r))
	return err
}

// waitRegistered waits until every running datanode is live at the
// namenode and safe mode is off, when the namenode runs. A restarted
// datanode counts as started only then: before, clients cannot read its
// replicas.
func (u *upper) waitRegistered(ctx context.Context) error {
	if !slices.ContainsFunc(u.st.NameNodeDaemons(), func(d Daemon) bool { return d.Running() }) || u.st.NameNode == "" {
		fmt.Fprintln(u.opts.Out, "the namenode is not running: not waiting for datanodes to register")
		return nil
	}
	var hosts []string
	for _, d := range u.st.Daemons {
		if d.Kind == "datanode" && d.Running() {
			hosts = append(hosts, d.Hostname)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, u.opts.ReadyTimeout)
	defer cancel()
	if err := WaitDataNodes(wctx, u.st, hosts); err != nil {
		return err
	}
	fmt.Fprintf(u.opts.Out, "%d datanodes registered with the %s\n", len(hosts), u.st.activeWord())
	return nil
}

// pinAddrs rewrites the config of a namenode or resource manager that
// asked for port 0 to the addresses it last bound: the daemons still
// running (datanodes, node managers) and the state file's clients know it
// only by those. A port taken in between makes the start fail with the
// daemon's own bind error.
func pinAddrs(d Daemon) error {
	if d.Kind != "namenode" && d.Kind != "resourcemanager" {
		return nil
	}
	b, err := os.ReadFile(d.ConfigFile)
	if err != nil {
		return fmt.Errorf("%s: %w", d.Name, err)
	}
	cfg := map[string]any{}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		return fmt.Errorf("%s: %s: %w", d.Name, d.ConfigFile, err)
	}
	changed := false
	pin := func(key, bound string) {
		if s, _ := cfg[key].(string); bound != "" && strings.HasSuffix(s, ":0") {
			cfg[key], changed = bound, true
		}
	}
	pin("rpc_addr", d.Ready.RPC)
	pin("http_addr", d.Ready.HTTP)
	if !changed {
		return nil
	}
	return writeConfig(d.ConfigFile, cfg)
}

// rejoinDiskCap puts a restarted datanode back into the disk-capped group
// its first start made (recorded in the state), so a restart does not
// lift the cap.
func (u *upper) rejoinDiskCap(d Daemon) error {
	if d.Kind != "datanode" {
		return nil
	}
	for _, dir := range u.st.Cgroups {
		if path.Base(dir) != d.Name {
			continue
		}
		ctl, err := cgroup.Detect("/proc/self/mountinfo")
		if err != nil {
			return fmt.Errorf("%s: disk cap: %w", d.Name, err)
		}
		if err := cgroup.Join(ctl, dir, d.PID); err != nil {
			return fmt.Errorf("%s: disk cap: %w", d.Name, err)
		}
	}
	return nil
}
