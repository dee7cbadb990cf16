package testcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"smarth/internal/cluster"
)

// Procs is a test cluster of child processes: each daemon runs the smarth
// binary with its own config file, announces its addresses in a ready file
// and is stopped by its own pid. Children get SIGKILL if the test process
// dies, so a crashed test leaves nothing behind.
type Procs struct {
	base
	root   string
	binary string

	mu     sync.Mutex // guards nn, nnAddr, dns
	nn     *cluster.Proc
	nnAddr string
	nnHTTP string
	dns    []*cluster.Proc // nil while stopped
}

// StartProcs starts a multi-process cluster and waits until every datanode
// is registered and safe mode is off. It is closed when t ends. It skips
// the test under -short: building and starting processes takes seconds.
func StartProcs(t testing.TB, opts Options) *Procs {
	t.Helper()
	if testing.Short() {
		t.Skip("testcluster: multi-process cluster skipped in -short mode")
	}
	if err := opts.setDefaults(); err != nil {
		t.Fatal(err)
	}
	if opts.Links != nil {
		t.Fatal("testcluster: Options.Links shapes links inside the test process; it needs Start, not StartProcs")
	}
	p := &Procs{root: t.TempDir(), binary: opts.Binary}
	if err := opts.makeKeys(p.root); err != nil {
		t.Fatal(err)
	}
	p.base = base{t: t, opts: opts, logs: newLogs(opts.Verbose), addr: p.NameNodeAddr}
	if p.binary == "" {
		p.binary = Binary(t)
	}
	p.dns = make([]*cluster.Proc, opts.DataNodes)
	t.Cleanup(p.Close)
	if err := p.startNameNode("127.0.0.1:0", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	var (
		hosts []string
		errs  = make([]error, opts.DataNodes)
		wg    sync.WaitGroup
	)
	for i := range opts.DataNodes {
		hosts = append(hosts, Hostname(i))
		wg.Go(func() { errs[i] = p.startDataNode(i) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := p.waitRegistered(hosts); err != nil {
		t.Fatal(err)
	}
	return p
}

// launch writes a daemon's config and starts it, waiting for its ready file.
func (p *Procs) launch(name, kind string, b []byte, err error) (*cluster.Proc, cluster.Ready, error) {
	if err != nil {
		return nil, cluster.Ready{}, fmt.Errorf("testcluster: %s config: %w", name, err)
	}
	conf := filepath.Join(p.root, "conf", name+".yaml")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		return nil, cluster.Ready{}, err
	}
	if err := os.WriteFile(conf, b, 0o644); err != nil {
		return nil, cluster.Ready{}, err
	}
	spec := cluster.ProcSpec{
		Name: name, Kind: kind, Binary: p.binary, ConfigFile: conf,
		ReadyFile: filepath.Join(p.root, "run", name+".ready"),
		LogFile:   filepath.Join(p.root, "logs", name+".log"),
		OutFile:   filepath.Join(p.root, "logs", name+".out"),
	}
	proc, err := cluster.Launch(spec)
	if err != nil {
		return nil, cluster.Ready{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.WaitTimeout)
	defer cancel()
	r, err := proc.WaitReady(ctx)
	if err != nil {
		proc.Kill()
		return nil, cluster.Ready{}, fmt.Errorf("testcluster: %w", err)
	}
	return proc, r, nil
}

func (p *Procs) startNameNode(rpcAddr, httpAddr string) error {
	b, err := p.opts.nameNodeConfig(nodeDir(p.root, "namenode"), rpcAddr, httpAddr)
	proc, r, err := p.launch("namenode", "namenode", b, err)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.nn, p.nnAddr, p.nnHTTP = proc, r.RPC, r.HTTP
	p.mu.Unlock()
	return nil
}

func (p *Procs) startDataNode(i int) error {
	b, err := p.opts.dataNodeConfig(i, p.NameNodeAddr(), nodeDir(p.root, Hostname(i)))
	proc, _, err := p.launch(Hostname(i), "datanode", b, err)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.dns[i] = proc
	p.mu.Unlock()
	return nil
}

// NameNodeAddr is the namenode's gRPC address.
func (p *Procs) NameNodeAddr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.nnAddr
}

// NameNodePID is the namenode's process id (0 while stopped).
func (p *Procs) NameNodePID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.nn == nil {
		return 0
	}
	return p.nn.PID
}

// DataDir is datanode i's data directory (its block store), for tests
// that look at or damage replicas on disk.
func (p *Procs) DataDir(i int) string { return nodeDir(p.root, Hostname(i)) }

// DataNodePID is datanode i's process id (0 while stopped).
func (p *Procs) DataNodePID(i int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dns[i] == nil {
		return 0
	}
	return p.dns[i].PID
}

func (p *Procs) takeDataNode(i int) *cluster.Proc {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.dns[i]
	p.dns[i] = nil
	return d
}

// StopDataNode sends datanode i SIGTERM and waits for it to exit.
func (p *Procs) StopDataNode(i int) {
	if d := p.takeDataNode(i); d != nil {
		if err := d.Stop(10 * time.Second); err != nil {
			p.t.Errorf("testcluster: %v", err)
		}
	}
}

// KillDataNode sends datanode i SIGKILL.
func (p *Procs) KillDataNode(i int) {
	if d := p.takeDataNode(i); d != nil {
		d.Kill()
	}
}

// RestartDataNode stops datanode i if it runs, starts it again with the
// same config and data, and waits until it is registered.
func (p *Procs) RestartDataNode(i int) {
	p.StopDataNode(i)
	if err := p.startDataNode(i); err != nil {
		p.t.Fatal(err)
	}
	if err := p.waitRegistered([]string{Hostname(i)}); err != nil {
		p.t.Fatal(err)
	}
}

// KillNameNode sends the namenode SIGKILL (a crash); RestartNameNode
// brings it back on the same address.
func (p *Procs) KillNameNode() {
	p.mu.Lock()
	nn := p.nn
	p.nn = nil
	p.mu.Unlock()
	if nn != nil {
		nn.Kill()
	}
}

// RestartNameNode stops the namenode (SIGTERM) if it runs and starts it
// again on the same addresses and metadata.
func (p *Procs) RestartNameNode() {
	p.mu.Lock()
	nn, addr, httpAddr := p.nn, p.nnAddr, p.nnHTTP
	p.nn = nil
	p.mu.Unlock()
	if nn != nil {
		if err := nn.Stop(10 * time.Second); err != nil {
			p.t.Errorf("testcluster: %v", err)
		}
	}
	if err := p.startNameNode(addr, httpAddr); err != nil {
		p.t.Fatal(err)
	}
	if err := p.waitRegistered(p.runningHosts()); err != nil {
		p.t.Fatal(err)
	}
}

func (p *Procs) runningHosts() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var hosts []string
	for i, d := range p.dns {
		if d != nil {
			hosts = append(hosts, Hostname(i))
		}
	}
	return hosts
}

// Close stops every child (datanodes first) and, if the test failed, shows
// the end of each daemon's log.
func (p *Procs) Close() {
	p.closeAdmin()
	for i := range p.dns {
		p.StopDataNode(i)
	}
	p.mu.Lock()
	nn := p.nn
	p.nn = nil
	p.mu.Unlock()
	if nn != nil {
		if err := nn.Stop(10 * time.Second); err != nil {
			p.t.Errorf("testcluster: %v", err)
		}
	}
	if p.t.Failed() || p.logs.verbose {
		files, _ := filepath.Glob(filepath.Join(p.root, "logs", "*"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && len(b) > 0 {
				p.t.Logf("--- %s (last 8 KiB):\n%s", f, b[max(0, len(b)-8<<10):])
			}
		}
	}
	p.logs.dumpOnFailure(p.t)
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Binary returns a smarth binary for multi-process tests: $SMARTH_BINARY if
// set, else one built with `go build ./cmd/smarth` once per test process
// (into a per-user directory under the system temp dir, written to a
// temporary name and renamed, so concurrent test processes never exec a
// half-written file and no copies pile up).
func Binary(t testing.TB) string {
	t.Helper()
	if b := os.Getenv("SMARTH_BINARY"); b != "" {
		return b
	}
	buildOnce.Do(func() { buildPath, buildErr = build() })
	if buildErr != nil {
		t.Fatalf("testcluster: build smarth: %v", buildErr)
	}
	return buildPath
}

func build() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate the module source")
	}
	root := filepath.Join(filepath.Dir(file), "..", "..")
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("smarth-testcluster-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, "smarth-*.tmp")
	if err != nil {
		return "", err
	}
	tmp.Close()
	cmd := exec.Command("go", "build", "-o", tmp.Name(), "./cmd/smarth")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("%v\n%s", err, out)
	}
	// Renaming over the binary other test processes run is safe: they
	// keep the inode they exec'd, and a new exec gets a whole file.
	final := filepath.Join(dir, "smarth")
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", err
	}
	return final, nil
}
