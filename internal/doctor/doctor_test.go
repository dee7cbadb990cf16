package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeResolver answers from maps; a missing name is an error.
type fakeResolver struct {
	hosts map[string][]string
	addrs map[string][]string
}

func (f fakeResolver) LookupHost(_ context.Context, h string) ([]string, error) {
	if a, ok := f.hosts[h]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func (f fakeResolver) LookupAddr(_ context.Context, a string) ([]string, error) {
	if n, ok := f.addrs[a]; ok {
		return n, nil
	}
	return nil, errors.New("no PTR")
}

var resolver = fakeResolver{
	hosts: map[string][]string{"dn1": {"10.0.0.5"}, "meh": {"127.0.1.1"}},
	addrs: map[string][]string{"10.0.0.5": {"dn1.cluster.example."}, "127.0.1.1": {"other"}},
}

// fakeEnv copies a testdata tree to a temporary root, so that fixes can
// write to it, and wires fakes for what is not a file.
func fakeEnv(t *testing.T, tree string, synced bool, free uint64) *Env {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", tree))); err != nil {
		t.Fatal(err)
	}
	return &Env{
		Root:      root,
		DataDirs:  []string{"/data/dn1"},
		Resolver:  resolver,
		Statfs:    func(string) (Usage, error) { return Usage{Total: 100 << 30, Free: free}, nil },
		ClockSync: func(context.Context) (bool, bool, string) { return synced, true, "fake" },
		UID:       os.Getuid(),
	}
}

func statuses(r Report) map[string]Status {
	m := map[string]Status{}
	for _, res := range r.Results {
		m[res.ID] = res.Status
	}
	return m
}

func expect(t *testing.T, r Report, want map[string]Status) {
	t.Helper()
	got := statuses(r)
	for id, s := range want {
		if got[id] != s {
			var value string
			for _, res := range r.Results {
				if res.ID == id {
					value = res.Value
				}
			}
			t.Errorf("%s: %q (value %q), want %q", id, got[id], value, s)
		}
	}
}

func TestGoodHost(t *testing.T) {
	e := fakeEnv(t, "good", true, 60<<30)
	os.Chmod(filepath.Join(e.Root, "data/dn1"), 0o700)
	r := Run(context.Background(), e, nil)
	if r.Host != "dn1" {
		t.Errorf("host %q", r.Host)
	}
	expect(t, r, map[string]Status{
		"thp": OK, "swappiness": OK, "limit:nofile": OK, "limit:nproc": OK, "clock": OK,
		"dns:forward": OK, "dns:reverse": OK, "service:rpcbind": OK, "service:firewalld": OK,
		"sysctl:net.core.somaxconn": OK, "sysctl:net.ipv4.tcp_rmem": OK,
		"mount:/data/dn1": OK, "space:/data/dn1": OK, "perm:/data/dn1": OK,
		"port:8020": OK, "port:9870": OK, "port:8032": OK,
	})
	if w := r.Worst(); w != OK {
		t.Errorf("worst %s, want ok", w)
	}
}

func TestBadHost(t *testing.T) {
	e := fakeEnv(t, "bad", false, 5<<30)
	os.Chmod(filepath.Join(e.Root, "data/dn1"), 0o755)
	r := Run(context.Background(), e, nil)
	expect(t, r, map[string]Status{
		"thp": Warn, "swappiness": Fail, "limit:nofile": Fail, "limit:nproc": Fail, "clock": Fail,
		"dns:forward": Fail, "dns:reverse": Skip, "service:rpcbind": Warn, "service:firewalld": Warn,
		"sysctl:net.core.somaxconn": Warn, "sysctl:net.core.rmem_max": Warn, "sysctl:net.ipv4.tcp_rmem": Warn,
		"sysctl:net.ipv4.tcp_wmem": OK, // 4 MiB is enough
		"mount:/data/dn1":          Fail, "space:/data/dn1": Fail, "perm:/data/dn1": Warn,
		"port:8020": Warn, "port:9870": Warn, "port:8032": OK,
	})
	for _, res := range r.Results {
		if (res.Status == Warn || res.Status == Fail) && (res.Why == "" || res.FixCmd == "") {
			t.Errorf("%s is %s without why or fix: %+v", res.ID, res.Status, res)
		}
	}
	if r.Worst() != Fail {
		t.Errorf("worst %s, want fail", r.Worst())
	}
}

// The middle grades: madvise THP is fine, swappiness 20 and 8192 files
// warn, relatime and tmpfs warn, a loopback-only name warns.
func TestMiddlingHost(t *testing.T) {
	e := fakeEnv(t, "meh", true, 15<<30)
	e.DataDirs = []string{"/", "/tmp/smarth/dn1"}
	r := Run(context.Background(), e, nil)
	expect(t, r, map[string]Status{
		"thp": OK, "swappiness": Warn, "limit:nofile": Warn, "limit:nproc": Warn,
		"dns:forward": Warn, "dns:reverse": Warn, "service:tuned": Warn, "service:rpcbind": Warn,
		"sysctl:net.core.somaxconn": Skip,
		"mount:/":                   Warn, "mount:/tmp/smarth/dn1": Warn, "space:/": Warn, "perm:/tmp/smarth/dn1": OK,
	})
}

func TestOwnClusterPortsAreOK(t *testing.T) {
	e := fakeEnv(t, "bad", true, 60<<30)
	e.Ports = []int{8020, 8032}
	e.PortsInUse = map[int]string{8020: "namenode", 8032: "resourcemanager"}
	r := Run(context.Background(), e, []string{"ports"})
	expect(t, r, map[string]Status{"port:8020": OK, "port:8032": Warn})
	if len(r.Results) != 2 {
		t.Errorf("only=ports gave %d results", len(r.Results))
	}
}

// Fix writes the revert file before it changes anything: when the revert
// file cannot be written, every tunable keeps its value.
func TestFixWritesRevertFileFirst(t *testing.T) {
	e := fakeEnv(t, "bad", true, 60<<30)
	r := Run(context.Background(), e, nil)
	before := snapshot(t, e.Root)

	blocked := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocked, nil, 0o644)
	_, err := Fix(e, r.Results, filepath.Join(blocked, "revert.json")) // parent is a file
	if err == nil || !strings.Contains(err.Error(), "nothing changed") {
		t.Fatalf("err %v", err)
	}
	if after := snapshot(t, e.Root); after != before {
		t.Fatalf("files changed although the revert file could not be written")
	}

	revert := filepath.Join(t.TempDir(), "revert.json")
	changes, err := Fix(e, r.Results, revert)
	if err != nil {
		t.Fatal(err)
	}
	var rf RevertFile
	b, _ := os.ReadFile(revert)
	if err := json.Unmarshal(b, &rf); err != nil || len(rf.Changes) != len(changes) || len(changes) < 5 {
		t.Fatalf("revert file %s (err %v), %d changes", b, err, len(changes))
	}
	after := Run(context.Background(), e, nil)
	expect(t, after, map[string]Status{"thp": OK, "swappiness": OK, "sysctl:net.core.somaxconn": OK, "sysctl:net.ipv4.tcp_rmem": OK})
	if v, _ := e.read("proc/sys/net/ipv4/tcp_rmem"); v != "4096 87380 4194304" {
		t.Errorf("tcp_rmem %q: want only the max raised", v)
	}

	if _, err := Revert(e, revert); err != nil {
		t.Fatal(err)
	}
	// THP's choice list comes back as the chosen word, which is what
	// sysfs accepts.
	before = strings.Replace(before, "[always] madvise never", "always", 1)
	if got := snapshot(t, e.Root); got != before {
		t.Errorf("revert did not restore the files:\n%s\nwant\n%s", got, before)
	}
}

func TestFixWithNothingToFixWritesNothing(t *testing.T) {
	e := fakeEnv(t, "good", true, 60<<30)
	revert := filepath.Join(t.TempDir(), "revert.json")
	changes, err := Fix(e, Run(context.Background(), e, nil).Results, revert)
	if err != nil || len(changes) != 0 {
		t.Fatalf("changes %v err %v", changes, err)
	}
	if _, err := os.Stat(revert); !os.IsNotExist(err) {
		t.Errorf("a revert file was written with nothing to fix")
	}
}

// snapshot is the content of the tunables Fix may write, for comparison.
func snapshot(t *testing.T, root string) string {
	t.Helper()
	var sb strings.Builder
	for _, p := range []string{thpEnabled, "proc/sys/vm/swappiness", "proc/sys/net/core/somaxconn", "proc/sys/net/core/rmem_max", "proc/sys/net/ipv4/tcp_rmem"} {
		b, _ := os.ReadFile(filepath.Join(root, p))
		sb.WriteString(p + "=" + strings.TrimSpace(string(b)) + "\n")
	}
	return sb.String()
}

func TestWriteTable(t *testing.T) {
	e := fakeEnv(t, "bad", false, 5<<30)
	var sb strings.Builder
	if err := WriteTable(&sb, Run(context.Background(), e, nil)); err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	for _, want := range []string{"FAIL", "vm.swappiness", "fix: sysctl -w vm.swappiness=1", "why:"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestSoftLimitAndBracketed(t *testing.T) {
	if v, ok := softLimit("Max open files            1024                 4096                 files", "Max open files"); !ok || v != "1024" {
		t.Errorf("soft %q %v", v, ok)
	}
	if b := bracketed("always [madvise] never"); b != "madvise" {
		t.Errorf("bracketed %q", b)
	}
}
