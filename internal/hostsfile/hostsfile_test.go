package hostsfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Both files: names lower-cased, host:port taken as its host, an IPv6
// address kept whole, # comments; an empty path is an empty set; a file
// over MaxSize is refused. The maintenance file's end times are RFC 3339
// or absent, and a bad line names its line number.
func TestReadBothFiles(t *testing.T) {
	s, err := Read("hosts_exclude_file", write(t, "DN1:9866 10.0.0.2 # gone\n::1\n"))
	if err != nil || len(s) != 3 || !s.Has("dn1") || !s.Has("10.0.0.2") || !s.Has("::1") {
		t.Fatalf("Read: %v %v", s, err)
	}
	if s, err := Read("k", ""); err != nil || len(s) != 0 {
		t.Fatalf("empty path: %v %v", s, err)
	}
	if _, err := Read("k", write(t, strings.Repeat("x", MaxSize+1))); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("oversized file: %v", err)
	}
	m, err := ReadMaintenance("hosts_maintenance_file", write(t, "dn2:9866 2030-01-02T03:04:05Z\nDN3 # no end\n"))
	if err != nil {
		t.Fatal(err)
	}
	if until, ok := m.Until("nosuch", "dn2"); !ok || !until.Equal(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("dn2: %v %v", until, ok)
	}
	if until, ok := m.Until("dn3"); !ok || !until.IsZero() {
		t.Fatalf("dn3: %v %v", until, ok)
	}
	for body, want := range map[string]string{"dn1 tomorrow\n": "line 1: the end time", "\ndn1 a b\n": "line 2:"} {
		if _, err := ReadMaintenance("k", write(t, body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%q: %v, want %q", body, err, want)
		}
	}
}
