package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"smarth/internal/cluster"
	"smarth/internal/testbed"
	"smarth/internal/testbed/topo"
)

// TestbedBed runs a scenario on a testbed topology. Each Up brings up the
// topology, renamed (TestbedName) and with the phase's overrides, after
// deleting what an earlier run of it left on disk; each Down takes it down
// and deletes its data, but only if this Up built it.
type TestbedBed struct {
	Manager  *testbed.Manager
	Topology []byte // the topology file's contents
	TempDir  string // where the derived topology files go

	state *testbed.State // nil unless up
}

var _ Bed = (*TestbedBed)(nil)

// Up implements Bed.
func (b *TestbedBed) Up(ctx context.Context, o Overrides) (Layout, error) {
	if b.state != nil {
		return Layout{}, fmt.Errorf("testbed %s is already up", b.state.Name)
	}
	data, t, err := Derive(b.Topology, o)
	if err != nil {
		return Layout{}, err
	}
	lay, err := LayoutOf(t)
	if err != nil {
		return Layout{}, err
	}
	path := filepath.Join(b.TempDir, fmt.Sprintf("%s-%s.yaml", t.Name, o.Placement))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return Layout{}, err
	}
	// Purge refuses while a testbed of that name is up (a concurrent run,
	// or a crashed one): Up would refuse too, and says how to clear it.
	if _, err := b.Manager.Purge(t.Name); err != nil {
		return Layout{}, fmt.Errorf("%w (is another scenario run using it? if not, `smarth testbed down --name %s --purge` clears it)", err, t.Name)
	}
	s, err := b.Manager.Up(ctx, path, testbed.UpOptions{})
	if err != nil {
		return Layout{}, err
	}
	b.state = s
	return lay, nil
}

// Client implements Bed: the command runs in the client host's namespace.
func (b *TestbedBed) Client(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if b.state == nil {
		return errors.New("the testbed is not up")
	}
	lay, err := LayoutOf(b.state.Topology)
	if err != nil {
		return err
	}
	cmd, err := b.Manager.Command(ctx, b.state, lay.ClientHost, append([]string{b.state.Binary}, args...))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 10 * time.Second
	return cmd.Run()
}

// BlockLogs implements Bed.
func (b *TestbedBed) BlockLogs() ([]BlockRecord, error) {
	if b.state == nil {
		return nil, errors.New("the testbed is not up")
	}
	var out []BlockRecord
	for _, d := range b.state.Daemons {
		if d.Role != topo.DataNode {
			continue
		}
		recs, err := readBlockLog(d.Host, d.LogFile)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// SaveLogs implements Bed: HOST-ROLE.log for every daemon.
func (b *TestbedBed) SaveLogs(dir string) error {
	if b.state == nil {
		return errors.New("the testbed is not up")
	}
	for _, d := range b.state.Daemons {
		if err := copyLog(d.LogFile, filepath.Join(dir, d.Host+"-"+string(d.Role)+".log")); err != nil {
			return err
		}
	}
	return nil
}

// Down implements Bed.
func (b *TestbedBed) Down(ctx context.Context) error {
	if b.state == nil {
		return nil
	}
	name := b.state.Name
	_, err := b.Manager.Down(ctx, name)
	if err != nil {
		return err
	}
	b.state = nil
	_, err = b.Manager.Purge(name)
	return err
}

// copyLog copies a daemon's log; a daemon that never logged has none.
func copyLog(src, dst string) error {
	in, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func readBlockLog(host, path string) ([]BlockRecord, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // a datanode that never logged
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseBlockLog(host, f)
}

// LocalBed runs a scenario on a loopback cluster (internal/cluster: one
// process per daemon on 127.0.0.1) in a temporary home, deleted by Down.
// Nothing limits the links, so there is no III.D bound.
type LocalBed struct {
	DataNodes int
	Binary    string // default the running smarth
	TempDir   string
	Out       io.Writer

	home  string
	state *cluster.State
}

var _ Bed = (*LocalBed)(nil)

// Up implements Bed.
func (b *LocalBed) Up(ctx context.Context, o Overrides) (Layout, error) {
	if b.home != "" {
		return Layout{}, fmt.Errorf("the loopback cluster in %s is already up", b.home)
	}
	home, err := os.MkdirTemp(b.TempDir, "smarth-scenario-cluster-")
	if err != nil {
		return Layout{}, err
	}
	b.home = home
	st, err := cluster.Up(ctx, cluster.Options{
		Home: home, Binary: b.Binary, DataNodes: b.DataNodes, BlockSize: o.BlockSize,
		NameNodeRPC: "127.0.0.1:0", NameNodeHTTP: "127.0.0.1:0",
		NameNode: o.namenode(), DataNode: o.datanode(), Out: b.Out,
	})
	if err != nil {
		return Layout{}, err
	}
	b.state = st
	return Layout{Name: "loopback", ClientHost: "localhost"}, nil
}

// Client implements Bed.
func (b *LocalBed) Client(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if b.state == nil {
		return errors.New("the loopback cluster is not up")
	}
	cmd := exec.CommandContext(ctx, b.state.Binary, args...)
	// SMARTH_HOME too: the client finds the cluster's token (and CA) in
	// its home, as it finds the namenode.
	cmd.Env = append(os.Environ(), "SMARTH_NAMENODE="+b.state.NameNode, "SMARTH_HOME="+b.state.Home)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 10 * time.Second
	return cmd.Run()
}

// BlockLogs implements Bed.
func (b *LocalBed) BlockLogs() ([]BlockRecord, error) {
	if b.state == nil {
		return nil, errors.New("the loopback cluster is not up")
	}
	var out []BlockRecord
	for _, d := range b.state.Daemons {
		if d.Kind != "datanode" {
			continue
		}
		recs, err := readBlockLog(d.Name, d.LogFile)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// SaveLogs implements Bed: NAME.log for every daemon.
func (b *LocalBed) SaveLogs(dir string) error {
	if b.state == nil {
		return errors.New("the loopback cluster is not up")
	}
	for _, d := range b.state.Daemons {
		if err := copyLog(d.LogFile, filepath.Join(dir, d.Name+".log")); err != nil {
			return err
		}
	}
	return nil
}

// Down implements Bed.
func (b *LocalBed) Down(context.Context) error {
	if b.home == "" {
		return nil
	}
	var err error
	if _, statErr := cluster.LoadState(b.home); statErr == nil {
		_, err = cluster.Down(b.home, 10*time.Second)
	}
	if err == nil {
		err = os.RemoveAll(b.home)
		b.home, b.state = "", nil
	}
	return err
}
