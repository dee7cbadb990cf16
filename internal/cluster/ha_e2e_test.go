package cluster_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/testcluster"
)

// `smarth cluster up --namenodes 3` with the real binary: three namenode
// processes form one HA group, status names exactly one active, and the
// client config every smarth command gets from the home (DefaultNameNode:
// the members' comma list) rides out a SIGKILL of the active process: a
// client of that config writes on through the new active, the killed
// member comes back with `smarth cluster start` and catches up, and the
// client made before the kill reads every file written before and after
// back byte for byte.
func TestHAClusterUpSurvivesKillOfTheActive(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real-binary cluster of three namenodes and three datanodes; skipped in -short mode")
	}
	bin := testcluster.Binary(t)
	home := t.TempDir()
	t.Cleanup(func() { _, _ = cluster.Down(home, 5*time.Second) })
	smarth(t, bin, "cluster", "up", "--home", home, "--namenodes", "3", "--datanodes", "3", "--nodemanagers=false",
		"--namenode-addr", "127.0.0.1:0", "--namenode-http", "127.0.0.1:0", "--block-size", "1MiB", "--timeout", "2m")
	st, err := cluster.LoadState(home)
	if err != nil {
		t.Fatal(err)
	}
	if nns := st.NameNodeDaemons(); len(nns) != 3 || nns[0].Name != "nn1" || nns[2].Name != "nn3" {
		t.Fatalf("recorded namenodes %+v; want nn1..nn3", nns)
	}

	// Every smarth command run against the home gets the whole group.
	t.Setenv("SMARTH_HOME", home)
	t.Setenv("SMARTH_NAMENODE", "")
	nn := cluster.DefaultNameNode()
	if got := client.NameNodes(nn); len(got) != 3 {
		t.Fatalf("DefaultNameNode() = %q; want the three members' addresses", nn)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	status := smarth(t, bin, "cluster", "status", "--home", home)
	if n := len(regexp.MustCompile(`(?m)^nn[123]\s+\S+\s+active\s`).FindAllString(status, -1)); n != 1 {
		t.Fatalf("cluster status names %d active namenodes, want 1:\n%s", n, status)
	}
	if n := len(regexp.MustCompile(`(?m)^nn[123]\s+\S+\s+standby\s`).FindAllString(status, -1)); n != 2 {
		t.Fatalf("cluster status names %d standby namenodes, want 2:\n%s", n, status)
	}

	fs, err := client.New(ownerConfig(t, home, nn))
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	files := writeWith(ctx, t, fs, "/ha/before", 6)

	// The victim is the active, asked directly (not taken from status).
	_, m, err := cluster.ActiveNameNode(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if m.HA.GetState() != dfspb.HAState_ACTIVE {
		t.Fatalf("%s: state %v, want ACTIVE", m.Name, m.HA.GetState())
	}
	victim, _ := st.Daemon(m.Name)
	if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, victim.Name+" (SIGKILLed) to be gone", func() bool { return !victim.Running() })

	// The same config (a new command run against the home): on through
	// the new active. A fresh client, because the long-lived one's
	// first create may go out on the connection the kill reset, and a
	// create whose outcome is unknown is not retried until the namenode
	// has a retry cache (docs/architecture.md); its reads below, which
	// are retried, fail over.
	fs2, err := client.New(ownerConfig(t, home, cluster.DefaultNameNode()))
	if err != nil {
		t.Fatal(err)
	}
	defer fs2.Close()
	for p, b := range writeWith(ctx, t, fs2, "/ha/after", 6) {
		files[p] = b
	}
	_, nm, err := cluster.ActiveNameNode(ctx, st)
	if err != nil || nm.Name == victim.Name || nm.HA.GetTerm() <= m.HA.GetTerm() {
		t.Fatalf("after the kill: active %s at term %d (%v); want another member at a term above %d", nm.Name, nm.HA.GetTerm(), err, m.HA.GetTerm())
	}

	smarth(t, bin, "cluster", "start", victim.Name, "--home", home, "--timeout", "2m")
	if st, err = cluster.LoadState(home); err != nil {
		t.Fatal(err)
	}
	waitFor(t, victim.Name+" to rejoin as a standby at the active's applied txid", func() bool {
		ms, err := cluster.HAStatus(ctx, st)
		if err != nil {
			return false
		}
		var back, active *dfspb.GetHAStatusResponse
		for _, x := range ms {
			if x.Err != nil {
				return false
			}
			if x.Name == victim.Name {
				back = x.HA
			}
			if x.HA.GetState() == dfspb.HAState_ACTIVE {
				active = x.HA
			}
		}
		return back != nil && active != nil && back.GetState() == dfspb.HAState_STANDBY && back.GetAppliedTxid() == active.GetAppliedTxid()
	})
	readWith(ctx, t, fs, files)
	checkObserverReads(ctx, t, home, st)
	if got := client.NameNodes(cluster.DefaultNameNode()); len(got) != 3 {
		t.Errorf("after cluster start %s: DefaultNameNode() = %v; want the three members still", victim.Name, got)
	}
	status = smarth(t, bin, "cluster", "status", "--home", home)
	if n := len(regexp.MustCompile(`(?m)^nn[123]\s+\S+\s+active\s`).FindAllString(status, -1)); n != 1 || !strings.Contains(status, victim.Name) {
		t.Fatalf("cluster status after the restart names %d active namenodes, want 1:\n%s", n, status)
	}
}

// checkObserverReads: a client with observer reads writes files and at
// once stats and reads each back; every read must see its write (the
// standbys serve a read only once they have applied the client's state),
// and the standbys must have served some (their metrics say so), or the
// check proves nothing about them.
func checkObserverReads(ctx context.Context, t *testing.T, home string, st *cluster.State) {
	t.Helper()
	cfg := ownerConfig(t, home, cluster.DefaultNameNode())
	cfg.ObserverReads = true
	fs, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	before := observerServed(t, home, st)
	for i := range 20 {
		files := writeWith(ctx, t, fs, fmt.Sprintf("/ha/observer/%02d", i), 1)
		for p, data := range files {
			if fi, err := fs.Stat(ctx, p); err != nil || fi.Size != int64(len(data)) {
				t.Fatalf("stat %s right after writing it, with observer reads: %+v, %v; want %d bytes", p, fi, err, len(data))
			}
		}
		readWith(ctx, t, fs, files)
	}
	served := observerServed(t, home, st) - before
	t.Logf("standbys served %d observer reads (the stats and opens of 20 files)", served)
	if served == 0 {
		t.Errorf("no standby served an observer read: the reads all went to the active, so this proves nothing about the standbys")
	}
}

// observerServed sums smarth_namenode_ha_observer_reads_total{outcome="served"}
// over the members' metrics pages.
func observerServed(t *testing.T, home string, st *cluster.State) int {
	t.Helper()
	sec, err := st.Security()
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: sec.TLS}}
	re := regexp.MustCompile(`(?m)^smarth_namenode_ha_observer_reads_total\{outcome="served"\} (\d+)`)
	total := 0
	for _, d := range st.NameNodeDaemons() {
		resp, err := hc.Get(st.WebScheme() + "://" + d.Ready.HTTP + "/metrics")
		if err != nil {
			t.Fatalf("%s metrics: %v", d.Name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := re.FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s metrics have no observer reads series:\n%s", d.Name, b)
		}
		n, _ := strconv.Atoi(string(m[1]))
		total += n
	}
	return total
}
