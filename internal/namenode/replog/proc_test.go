package replog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"smarth/internal/testenv"
)

// The multi-process tests run each node as this test binary re-executed
// with REPLOG_NODE_MAIN set, so a SIGKILL or SIGSTOP hits the very
// process that holds the raft log, its sockets and its fsyncs. A node
// serves a small plain-HTTP control port on loopback for the test:
// /append (the namenode's mutate: write, then Sync), /list, /stats.

func TestMain(m *testing.M) {
	if os.Getenv("REPLOG_NODE_MAIN") != "" {
		nodeMain()
		return
	}
	os.Exit(m.Run())
}

type nodeStats struct {
	Stats
	Reloads int
}

// nodeMain runs one node until SIGTERM.
func nodeMain() {
	env := os.Getenv
	peers := map[string]string{}
	for _, kv := range strings.Split(env("REPLOG_PEERS"), ",") {
		id, addr, _ := strings.Cut(kv, "=")
		peers[id] = addr
	}
	cfg := testConfig(Config{ID: env("REPLOG_ID"), Bind: env("REPLOG_BIND"), Peers: peers, Dir: env("REPLOG_DIR"), Bootstrap: env("REPLOG_BOOTSTRAP") == "1"})
	cfg.TLS.TLS, cfg.TLS.CertFile, cfg.TLS.KeyFile, cfg.TLS.CAFile = true, env("REPLOG_CERT"), env("REPLOG_KEY"), env("REPLOG_CA")
	fail := func(err error) { fmt.Fprintln(os.Stderr, "node main:", err); os.Exit(1) }

	var mu sync.RWMutex // held for writing while reloading
	var l *Log
	var fsm *memFSM
	reloads := 0
	open := func() {
		fsm = &memFSM{}
		cfg.FSM = fsm
		var err error
		if l, err = Open(cfg); err != nil {
			fail(err)
		}
	}
	open()
	// A diverged leadership loss: the state holds records the group may
	// not have. Reload from the log, as the namenode will.
	go func() {
		for {
			mu.RLock()
			ch := l.LeadershipLost()
			mu.RUnlock()
			lost := <-ch
			if !lost.Diverged {
				continue
			}
			mu.Lock()
			l.Close()
			open()
			reloads++
			mu.Unlock()
		}
	}()
	http.HandleFunc("/append", func(w http.ResponseWriter, r *http.Request) {
		mu.RLock()
		ll, f := l, fsm
		mu.RUnlock()
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		err := write(ctx, ll, f, r.FormValue("rec"))
		var nl ErrNotLeader
		switch {
		case err == nil:
			io.WriteString(w, "ok")
		case errors.As(err, &nl):
			w.WriteHeader(http.StatusMisdirectedRequest)
			io.WriteString(w, nl.LeaderID)
		default:
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		}
	})
	http.HandleFunc("/list", func(w http.ResponseWriter, r *http.Request) {
		mu.RLock()
		recs := fsm.list()
		mu.RUnlock()
		io.WriteString(w, strings.Join(recs, "\n"))
	})
	http.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		mu.RLock()
		st := nodeStats{l.Stats(), reloads}
		mu.RUnlock()
		json.NewEncoder(w).Encode(st)
	})
	ln, err := net.Listen("tcp", env("REPLOG_CTL"))
	if err != nil {
		fail(err)
	}
	go http.Serve(ln, nil)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	<-sig
	mu.Lock()
	l.Close()
	os.Exit(0)
}

// procNode is a node process seen from the test.
type procNode struct {
	id, bind, ctl, dir string
	env                []string
	cmd                *exec.Cmd   // the test's goroutine only
	up                 atomic.Bool // running, for the writers
}

type procGroup struct {
	t      *testing.T
	nodes  []*procNode
	client *http.Client
}

func startProcGroup(t *testing.T, n int) *procGroup {
	dir := t.TempDir()
	addrs := testenv.RestartablePorts(t, 2*n)
	var peers []string
	for i := 0; i < n; i++ {
		peers = append(peers, fmt.Sprintf("nn%d=%s", i, addrs[i]))
	}
	g := &procGroup{t: t, client: &http.Client{Timeout: 15 * time.Second}}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("nn%d", i)
		c := certs(t, dir, id)
		p := &procNode{id: id, bind: addrs[i], ctl: addrs[n+i], dir: filepath.Join(dir, id)}
		p.env = append(os.Environ(), "REPLOG_NODE_MAIN=1", "REPLOG_ID="+id, "REPLOG_BIND="+p.bind, "REPLOG_CTL="+p.ctl,
			"REPLOG_DIR="+p.dir, "REPLOG_PEERS="+strings.Join(peers, ","), "REPLOG_CERT="+c.CertFile,
			"REPLOG_KEY="+c.KeyFile, "REPLOG_CA="+c.CAFile, fmt.Sprintf("REPLOG_BOOTSTRAP=%d", map[bool]int{true: 1}[i == 0]))
		g.nodes = append(g.nodes, p)
		g.start(p)
	}
	t.Cleanup(func() {
		for _, p := range g.nodes {
			if t.Failed() {
				b, _ := os.ReadFile(filepath.Join(dir, p.id+".log"))
				if len(b) > 6000 {
					b = b[len(b)-6000:]
				}
				t.Logf("%s's log ends:\n%s", p.id, b)
			}
			if p.cmd != nil {
				p.cmd.Process.Signal(syscall.SIGCONT)
				p.cmd.Process.Kill()
				p.cmd.Wait()
			}
		}
	})
	return g
}

func (g *procGroup) start(p *procNode) {
	out, err := os.OpenFile(filepath.Join(filepath.Dir(p.dir), p.id+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		g.t.Fatal(err)
	}
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = p.env
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		g.t.Fatal(err)
	}
	p.up.Store(true)
	out.Close()
}

func (g *procGroup) kill(p *procNode) {
	p.up.Store(false)
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
	p.cmd = nil
}

func (g *procGroup) byID(id string) *procNode {
	for _, p := range g.nodes {
		if p.id == id {
			return p
		}
	}
	return nil
}

func (g *procGroup) stats(p *procNode) (nodeStats, error) {
	var st nodeStats
	c := &http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + p.ctl + "/stats")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

func (g *procGroup) list(p *procNode) ([]string, error) {
	resp, err := g.client.Get("http://" + p.ctl + "/list")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || len(b) == 0 {
		return nil, err
	}
	return strings.Split(string(b), "\n"), nil
}

// leader waits for a ready leader among the running nodes.
func (g *procGroup) leader() *procNode {
	var ld *procNode
	waitFor(g.t, 30*time.Second, "a ready leader process", func() bool {
		for _, p := range g.nodes {
			if p.cmd == nil {
				continue
			}
			if st, err := g.stats(p); err == nil && st.Ready {
				ld = p
				return true
			}
		}
		return false
	})
	return ld
}

// appendTo posts one record; it returns "" on ack, else the leader the
// node named (possibly "") and an error.
func (g *procGroup) appendTo(p *procNode, rec string) (string, error) {
	return g.appendWith(g.client, p, rec)
}

func (g *procGroup) appendWith(c *http.Client, p *procNode, rec string) (string, error) {
	resp, err := c.PostForm("http://"+p.ctl+"/append", url.Values{"rec": {rec}})
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	switch resp.StatusCode {
	case http.StatusOK:
		return "", nil
	case http.StatusMisdirectedRequest:
		return string(b), ErrNotLeader{LeaderID: string(b)}
	}
	return "", fmt.Errorf("%s: %s", resp.Status, b)
}

type ack struct {
	rec string
	by  string
	at  time.Time
}

// writer appends fresh records, one at a time, through whichever node
// leads (following ErrNotLeader), until stop; it returns the acks. Like
// HDFS's failover proxy it moves on from a node that does not answer
// and, for a while, neither returns to it nor trusts hints naming it: a
// frozen leader accepts connections and answers nothing, and followers
// name it until they elect another.
func (g *procGroup) writer(name string, stop <-chan struct{}, acks chan<- ack, first *procNode) []ack {
	var out []ack
	target := first
	c := &http.Client{Timeout: time.Second}
	suspect := map[string]time.Time{}
	usable := func(p *procNode) bool {
		return p != nil && p.up.Load() && time.Since(suspect[p.id]) > 2*time.Second
	}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return out
		default:
		}
		rec := fmt.Sprintf("%s-%d", name, i)
		for k := 0; !usable(target) && k < len(g.nodes); k++ {
			target = g.nodes[(i+k)%len(g.nodes)]
		}
		leader, err := g.appendWith(c, target, rec)
		if err == nil {
			a := ack{rec, target.id, time.Now()}
			out = append(out, a)
			if acks != nil {
				acks <- a
			}
			continue
		}
		var nl ErrNotLeader
		if !errors.As(err, &nl) {
			suspect[target.id] = time.Now()
		}
		if nt := g.byID(leader); nt != target && usable(nt) {
			target = nt
			continue
		}
		target = nil
		time.Sleep(20 * time.Millisecond)
	}
}

// converge waits until every running node holds the same records, at
// least n of them, and returns them.
func (g *procGroup) converge(n int) [][]string {
	var lists [][]string
	waitFor(g.t, 30*time.Second, fmt.Sprintf("all nodes to hold the same %d+ records", n), func() bool {
		lists = nil
		for _, p := range g.nodes {
			l, err := g.list(p)
			if err != nil || len(l) < n {
				return false
			}
			lists = append(lists, l)
		}
		for _, l := range lists[1:] {
			if equalLists(lists[0], l) != nil {
				return false
			}
		}
		return true
	})
	return lists
}

func recsOf(acks []ack) []string {
	var r []string
	for _, a := range acks {
		r = append(r, a.rec)
	}
	return r
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[int(p*float64(len(s)-1)+0.5)]
}
