package topology

import "testing"

func TestDistance(t *testing.T) {
	dn1 := Location{Host: "dn1", IP: "10.0.0.1", Rack: "/a"}
	dn2 := Location{Host: "dn2", IP: "10.0.0.2", Rack: "/a"}
	dn3 := Location{Host: "dn3", IP: "10.0.0.3", Rack: "/b"}
	cases := []struct {
		a, b Location
		want int
	}{
		{dn1, dn1, SameNode},
		{Location{Host: "10.0.0.1"}, dn1, SameNode}, // client knows itself by IP
		{Location{IP: "dn1"}, dn1, SameNode},
		{dn1, dn2, SameRack},
		{dn1, dn3, OtherRack},
		{Location{Host: "laptop"}, dn1, OtherRack}, // off-cluster client
		{Location{}, Location{}, OtherRack},
	}
	for _, c := range cases {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%+v, %+v) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestResolver(t *testing.T) {
	r, err := NewResolver(map[string]string{"dn1": "/rack-a", "10.0.0.2": "/rack-b"}, "")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ host, ip, reported, want string }{
		{"dn1", "10.0.0.9", "/rack-z", "/rack-a"}, // table by hostname wins
		{"dn2", "10.0.0.2", "/rack-z", "/rack-b"}, // then by IP
		{"dn3", "10.0.0.3", "/rack-z", "/rack-z"}, // then what the datanode says
		{"dn3", "10.0.0.3", "bad", DefaultRack},   // invalid self-report ignored
		{"dn3", "10.0.0.3", "", DefaultRack},
	}
	for _, c := range cases {
		if got := r.Rack(c.host, c.ip, c.reported); got != c.want {
			t.Errorf("Rack(%q, %q, %q) = %q, want %q", c.host, c.ip, c.reported, got, c.want)
		}
	}
	if _, err := NewResolver(map[string]string{"dn1": "rack-a"}, ""); err == nil {
		t.Error("NewResolver accepted a rack without a leading slash")
	}
	if _, err := NewResolver(nil, "/a//b"); err == nil {
		t.Error("NewResolver accepted a rack with an empty component")
	}
}
