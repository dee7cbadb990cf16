package main

import "testing"

// TestSizeFlagsKeepTheirSpellings: the flags whose parsers units replaced
// still take what they took (tune's --profile IEC sizes and bare bytes,
// dfsadmin's string2long space quotas, plain name quotas), and now also
// the other spellings units.ParseSize reads.
func TestSizeFlagsKeepTheirSpellings(t *testing.T) {
	for in, want := range map[string][2]int64{
		"64MiB,64KiB": {64 << 20, 64 << 10}, "16MiB,1536B": {16 << 20, 1536}, "1048576,65536": {1 << 20, 64 << 10},
		"1GiB,64KiB": {1 << 30, 64 << 10}, "64m,64k": {64 << 20, 64 << 10},
	} {
		size, pkt, err := parseTransmission(in)
		if err != nil || size != want[0] || int64(pkt) != want[1] {
			t.Errorf("parseTransmission(%q) = %d, %d, %v; want %d, %d", in, size, pkt, err, want[0], want[1])
		}
	}
	for _, bad := range []string{"64MiB", "0,64KiB", "8GiB,64KiB", "64MiB,x"} {
		if _, _, err := parseTransmission(bad); err == nil {
			t.Errorf("parseTransmission(%q) accepted", bad)
		}
	}
	for _, c := range []struct {
		in    string
		space bool
		want  int64
	}{{"10", false, 10}, {"10g", true, 10 << 30}, {"3T", true, 3 << 40}, {"1048576", true, 1 << 20}, {"10GiB", true, 10 << 30}} {
		if got, err := parseQuota(c.in, c.space); err != nil || got != c.want {
			t.Errorf("parseQuota(%q, %v) = %d, %v; want %d", c.in, c.space, got, err, c.want)
		}
	}
	for _, c := range []struct {
		in    string
		space bool
	}{{"10g", false}, {"0", true}, {"-1", false}, {"", true}, {"8e", true}} {
		if _, err := parseQuota(c.in, c.space); err == nil {
			t.Errorf("parseQuota(%q, %v) accepted", c.in, c.space)
		}
	}
}
