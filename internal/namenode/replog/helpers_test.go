package replog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"smarth/internal/pki"
	"smarth/internal/testenv"
)

// memFSM is a namenode in miniature: its state is the list of records
// applied, in txid order, and a leader applies before it appends.
type memFSM struct {
	mu   sync.Mutex
	recs []string
	// refuse: Apply fails on this record (a record the namenode cannot
	// replay); "": none.
	refuse string
}

func (m *memFSM) Apply(txid uint64, p []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if txid != uint64(len(m.recs))+1 {
		return fmt.Errorf("txid %d after %d records", txid, len(m.recs))
	}
	if m.refuse != "" && string(p) == m.refuse {
		return fmt.Errorf("record %q at txid %d refused", p, txid)
	}
	m.recs = append(m.recs, string(p))
	return nil
}

func (m *memFSM) Snapshot() (uint64, io.WriterTo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := strings.Join(m.recs, "\n")
	return uint64(len(m.recs)), strings.NewReader(s), nil
}

func (m *memFSM) Restore(txid uint64, r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	var recs []string
	if len(b) > 0 {
		recs = strings.Split(string(b), "\n")
	}
	if uint64(len(recs)) != txid {
		return fmt.Errorf("snapshot at txid %d holds %d records", txid, len(recs))
	}
	m.mu.Lock()
	m.recs = recs
	m.mu.Unlock()
	return nil
}

func (m *memFSM) list() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.recs...)
}

// write does what the namenode's mutate will: under the state's lock,
// check leadership, apply, append; outside it, wait for the majority.
func write(ctx context.Context, l *Log, m *memFSM, rec string) error {
	m.mu.Lock()
	if err := l.Writable(); err != nil {
		m.mu.Unlock()
		return err
	}
	m.recs = append(m.recs, rec)
	h, err := l.Append([]byte(rec))
	if err == nil && h.TxID() != uint64(len(m.recs)) {
		err = fmt.Errorf("Append gave txid %d to record %d", h.TxID(), len(m.recs))
	}
	m.mu.Unlock()
	if err != nil {
		return err
	}
	return l.Sync(ctx, h)
}

// certs makes a cluster CA and a certificate for 127.0.0.1 under dir.
func certs(t testing.TB, dir, name string) pki.Config {
	t.Helper()
	ca, err := pki.LoadOrCreateCA(filepath.Join(dir, "ca"), "test-ca")
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := ca.Issue(filepath.Join(dir, "certs"), name, []string{"127.0.0.1", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	caFile, _ := pki.CAFiles(filepath.Join(dir, "ca"))
	return pki.Config{TLS: true, CertFile: cert, KeyFile: key, CAFile: caFile}
}

// testTimeouts are short so tests fail over quickly, yet long enough
// that two busy cores do not start elections for nothing.
func testConfig(cfg Config) Config {
	cfg.HeartbeatTimeout = 300 * time.Millisecond
	cfg.ElectionTimeout = 300 * time.Millisecond
	cfg.LeaderLeaseTimeout = 250 * time.Millisecond
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		if os.Getenv("REPLOG_VERBOSE") != "" {
			cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
		}
	}
	return cfg
}

type node struct {
	id  string
	cfg Config
	fsm *memFSM
	log *Log
	// initial is the state loaded before the first start (a namenode's
	// image, for the upgrade path).
	initial []string
}

// start opens n.log and reloads after a diverged leadership loss, as the
// namenode will.
func (n *node) start(t testing.TB) {
	t.Helper()
	n.fsm = &memFSM{recs: n.initial}
	n.initial = nil
	n.cfg.FSM = n.fsm
	l, err := Open(n.cfg)
	if err != nil {
		t.Fatalf("open %s: %v", n.id, err)
	}
	n.log = l
}

func (n *node) close() {
	if n.log != nil {
		n.log.Close()
		n.log = nil
	}
}

// group starts a 3-node group in dir; node 0 bootstraps it.
func group(t testing.TB, dir string, n int, mod func(i int, c *Config)) []*node {
	return groupWith(t, dir, n, mod, nil)
}

func groupWith(t testing.TB, dir string, n int, mod func(i int, c *Config), initial func(i int) []string) []*node {
	t.Helper()
	addrs := testenv.RestartablePorts(t, n)
	peers := map[string]string{}
	for i := range addrs {
		peers[fmt.Sprintf("nn%d", i)] = addrs[i]
	}
	var nodes []*node
	for i := range addrs {
		id := fmt.Sprintf("nn%d", i)
		c := testConfig(Config{ID: id, Bind: addrs[i], Peers: peers, Dir: filepath.Join(dir, id), TLS: certs(t, dir, id), Bootstrap: i == 0})
		if mod != nil {
			mod(i, &c)
		}
		nd := &node{id: id, cfg: c}
		if initial != nil {
			nd.initial = initial(i)
		}
		nodes = append(nodes, nd)
	}
	for _, nd := range nodes {
		nd.start(t)
		t.Cleanup(nd.close)
	}
	return nodes
}

// another is a node of nodes other than n.
func another(nodes []*node, n *node) *node {
	for _, o := range nodes {
		if o != n {
			return o
		}
	}
	return nil
}

// waitFor polls cond until it holds, failing with what was awaited.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func leaderOf(t testing.TB, nodes []*node) *node {
	t.Helper()
	var ld *node
	waitFor(t, 20*time.Second, "a ready leader", func() bool {
		for _, n := range nodes {
			if n.log != nil && n.log.IsLeader() {
				ld = n
				return true
			}
		}
		return false
	})
	return ld
}

// checkAcked demands that acked (in acknowledgement order of one
// sequential writer) appears in applied in the same order.
func checkAcked(acked, applied []string) error {
	pos := map[string]int{}
	for i, r := range applied {
		if _, dup := pos[r]; dup {
			return fmt.Errorf("record %q applied twice (at %d and %d)", r, pos[r], i)
		}
		pos[r] = i
	}
	last := -1
	for _, a := range acked {
		p, ok := pos[a]
		if !ok {
			return fmt.Errorf("acknowledged record %q is missing (%d records applied)", a, len(applied))
		}
		if p <= last {
			return fmt.Errorf("acknowledged record %q is applied at %d, before the one acknowledged ahead of it (at %d)", a, p, last)
		}
		last = p
	}
	return nil
}

func equalLists(a, b []string) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d records vs %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return fmt.Errorf("record %d: %q vs %q", i+1, a[i], b[i])
		}
	}
	return nil
}
