package tune

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeProcSys builds a /proc/sys tree with the files the settings use.
func fakeProcSys(t *testing.T) Host {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"net/ipv4/tcp_available_congestion_control": "reno cubic\n",
		"net/core/busy_read":                        "0\n",
		"net/core/busy_poll":                        "0\n",
		"net/core/rmem_default":                     "212992\n",
		"net/ipv4/tcp_rmem":                         "4096\t131072\t6291456\n",
		"net/ipv4/tcp_wmem":                         "4096\t16384\t4194304\n",
	}
	for p, v := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Host{ProcSys: root}
}

func TestProfileValidation(t *testing.T) {
	h := fakeProcSys(t)
	good := []string{
		"a:so_rcvbuf=0,so_busy_poll=50,tcp_congestion=cubic",
		"b:packet_size=131072,window=40,tcp_notsent_lowat=16384",
		"c:net.ipv4.tcp_rmem=4096 87380 6291456,net.core.busy_read=50",
	}
	for _, g := range good {
		if _, err := ParseProfile(h, g); err != nil {
			t.Errorf("%s: %v", g, err)
		}
	}
	bad := map[string]string{
		"x:so_rcvbuff=1":                     `unknown setting "so_rcvbuff"`,
		"x:so_rcvbuf=100":                    "out of range [4096, 1073741824] or 0 (kernel autotuning)",
		"x:so_busy_poll=-1":                  "out of range",
		"x:tcp_congestion=bbr":               `"bbr" is not available here`,
		"x:packet_size=1000":                 "not a multiple of 512",
		"x:window=many":                      "want a whole number",
		"x:net.ipv4.tcp_rmem=4096 87380":     "three numbers",
		"x:net.ipv4.tcp_rmem=9000 4096 8192": "min <= default <= max",
		"x:so_rcvbuf":                        "not key=value",
	}
	for arg, want := range bad {
		_, err := ParseProfile(h, arg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", arg, err, want)
		}
	}
}

func TestProfileFileReloadKeepsLastGood(t *testing.T) {
	h := fakeProcSys(t)
	path := filepath.Join(t.TempDir(), "p.json")
	if err := WriteProfileFile(path, Profile{Name: "one", Settings: map[string]string{"so_busy_poll": "10"}}); err != nil {
		t.Fatal(err)
	}
	pf, err := OpenProfileFile(h, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteProfileFile(path, Profile{Name: "two", Settings: map[string]string{"so_busy_poll": "20"}}); err != nil {
		t.Fatal(err)
	}
	if p, err := pf.Current(); err != nil || p.Name != "two" {
		t.Fatalf("after rewrite: %v %v, want profile two", p, err)
	}
	if err := os.WriteFile(path, []byte(`{"name":"three","settings":{"bogus":"1"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := pf.Current()
	if err == nil || p.Name != "two" {
		t.Fatalf("broken file: %v %v, want an error and profile two kept", p, err)
	}
}
