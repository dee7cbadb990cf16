package bytesize

import "testing"

func TestParseReserve(t *testing.T) {
	for in, want := range map[string]int64{"10GiB": 10 << 30, "1m": 1 << 20, "0": 0, "5%": 50, "0.5%": 5, "25 %": 250} {
		r, err := ParseReserve(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := r.Of(1000); got != want {
			t.Errorf("%q of a 1000-byte volume = %d, want %d", in, got, want)
		}
	}
	for _, bad := range []string{"", "x", "100%", "-5%", "%", "5%%"} {
		if _, err := ParseReserve(bad); err == nil {
			t.Errorf("ParseReserve(%q) accepted", bad)
		}
	}
}
