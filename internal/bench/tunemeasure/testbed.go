package tunemeasure

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"smarth/internal/testbed"
	"smarth/internal/testbed/daemonplan"
	"smarth/internal/testbed/netns"
	"smarth/internal/testbed/netplan"
	"smarth/internal/testbed/topo"
	"smarth/internal/tune"
)

// Testbed is where a testbed bench runs: the topology file is brought up
// for the run (its own namespaces, shaped links, daemons) and taken down
// by Close.
type Testbed struct {
	Manager  *testbed.Manager
	Topology string // topology file
}

// Pair is the two hosts of a tuning topology: the writing client and the
// one receiving datanode (the paper's master and slave node).
type Pair struct {
	Client, DataNode *topo.Host
	Link             topo.Expectation // the client-to-datanode path as shaped
}

// TuningPair checks that t is a tuning topology and returns its hosts:
// exactly one datanode, so that every block lands on the node whose log
// is read, and a client on another host, so that every transfer crosses
// the shaped link.
func TuningPair(t *topo.Topology) (Pair, error) {
	dns, clients := t.WithRole(topo.DataNode), t.WithRole(topo.Client)
	if len(dns) != 1 {
		return Pair{}, fmt.Errorf("topology %s: the tuning bench needs exactly one datanode (the receiving node whose transfer log is read), it has %d", t.Name, len(dns))
	}
	if len(clients) == 0 {
		return Pair{}, fmt.Errorf("topology %s: no host has the client role (the writer runs there)", t.Name)
	}
	if clients[0].Name == dns[0].Name {
		return Pair{}, fmt.Errorf("topology %s: the client runs on the datanode's host %s, so transfers would not cross a shaped link", t.Name, dns[0].Name)
	}
	return Pair{Client: clients[0], DataNode: dns[0], Link: t.PathRate(clients[0], dns[0])}, nil
}

// tuningTopology is the topology file with the bench's datanode keys
// added: its profile file, its transfer log, one block per transfer and
// one replica.
func tuningTopology(data []byte, profilePath, logPath string, blockSize int64) ([]byte, error) {
	var f topo.File
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	if f.Daemons == nil {
		f.Daemons = map[string]map[string]any{}
	}
	for _, role := range []string{string(topo.NameNode), string(topo.DataNode)} {
		if f.Daemons[role] == nil {
			f.Daemons[role] = map[string]any{}
		}
	}
	f.Daemons[string(topo.DataNode)]["net_profile"] = profilePath
	f.Daemons[string(topo.DataNode)]["transfer_log"] = logPath
	f.Daemons[string(topo.NameNode)]["block_size"] = blockSize
	f.Daemons[string(topo.NameNode)]["replication"] = 1
	return yaml.Marshal(&f)
}

// StartTestbed brings the testbed up with the receiving datanode reading
// the bench's profile file and writing its transfer log, and returns a
// bench whose client connects from inside the client host's namespace.
// Sysctl settings are changed inside the datanode host's namespace only
// (the per-namespace ones: others are refused as not there).
func StartTestbed(ctx context.Context, opts Options, tb Testbed) (*Bench, Pair, error) {
	if err := opts.defaults(); err != nil {
		return nil, Pair{}, err
	}
	data, err := os.ReadFile(tb.Topology)
	if err != nil {
		return nil, Pair{}, err
	}
	t, err := topo.Parse(data)
	if err != nil {
		return nil, Pair{}, fmt.Errorf("topology %s: %w", tb.Topology, err)
	}
	pair, err := TuningPair(t)
	if err != nil {
		return nil, Pair{}, err
	}
	home, err := os.MkdirTemp("", "smarth-tune-")
	if err != nil {
		return nil, Pair{}, err
	}
	b := &Bench{opts: opts, home: home, profilePath: filepath.Join(home, "net-profile.json"), logPath: filepath.Join(home, "transfer.jsonl")}
	if err := tune.WriteProfileFile(b.profilePath, tune.Default()); err != nil {
		os.RemoveAll(home)
		return nil, Pair{}, err
	}
	block := max((opts.Size+511)/512*512, 1<<20)
	tdata, err := tuningTopology(data, b.profilePath, b.logPath, block)
	if err != nil {
		os.RemoveAll(home)
		return nil, Pair{}, err
	}
	tpath := filepath.Join(home, "topology.yaml")
	if err := os.WriteFile(tpath, tdata, 0o644); err != nil {
		os.RemoveAll(home)
		return nil, Pair{}, err
	}
	st, err := tb.Manager.Up(ctx, tpath, testbed.UpOptions{})
	if err != nil {
		os.RemoveAll(home)
		return nil, Pair{}, err
	}
	names := netplan.Names{Testbed: st.Name}
	clientNS := netns.Path(names.Host(pair.Client.Name))
	b.nameNode = daemonplan.NameNodeAddr(st.Topology)
	b.dial = netns.Dialer(clientNS)
	b.nnDial = b.dial
	b.sysctlNS = netns.Path(names.Host(pair.DataNode.Name))
	b.stop = func() error {
		_, err := tb.Manager.Down(context.WithoutCancel(ctx), st.Name)
		return err
	}
	if err := b.warmup(ctx); err != nil {
		_ = b.Close("")
		return nil, Pair{}, err
	}
	return b, pair, nil
}
