package cluster

import "testing"

// A client given an HA group's namenodes (a comma list) belongs to the
// local cluster when the list shares a namenode with the cluster's, so it
// finds the cluster's token and CA.
func TestSameAddrHAList(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"127.0.0.1:8020", "127.0.0.1:8020", true},
		{"127.0.0.1:8020", "localhost:8020", true},
		{"127.0.0.1:8020", "127.0.0.1:8021,127.0.0.1:8020", true},
		{"127.0.0.1:8020,127.0.0.1:8021", "localhost:8021", true},
		{"127.0.0.1:8020", "127.0.0.1:8021,127.0.0.1:8022", false},
		{"127.0.0.1:8020", "", false},
	} {
		if got := sameAddr(c.a, c.b); got != c.want {
			t.Errorf("sameAddr(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
