package units

import (
	"strings"
	"testing"
)

// TestParseBitRate: the testbed's network rates; what a reader could take
// for bits or for bytes is refused with the reason.
func TestParseBitRate(t *testing.T) {
	for s, want := range map[string]float64{"50mbit": 50e6, "50Mbit/s": 50e6, "216 Mbit/s": 216e6, "1gbit": 1e9,
		"1.5Gbit/s": 1.5e9, "800kbit": 800e3, "100Mb/s": 100e6, "1bit": 1, "0mbit": 0} {
		if got, err := ParseBitRate(s); err != nil || got != want {
			t.Errorf("ParseBitRate(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for s, why := range map[string]string{"": "does not start with a number", "50": "has no unit", "fast": "does not start",
		"50Mbps": "ambiguous", "50mbps": "ambiguous", "50MB/s": "in bytes", "50furlongs": "unknown unit",
		"1e3mbit": "unknown unit", "-5mbit": "does not start"} {
		if _, err := ParseBitRate(s); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseBitRate(%q) = %v, want an error saying %q", s, err, why)
		}
	}
}

// TestParseRate: `smarth bench --link-rate` reads bits, Mbps as bits and
// bytes times eight.
func TestParseRate(t *testing.T) {
	for in, want := range map[string]float64{
		"100Mbit": 1e8, "1Gbit": 1e9, "100mbps": 1e8, "100Mbps": 1e8, "500kbit": 5e5, "12.5MB/s": 1e8,
		"10MiB/s": 10 * 8 * (1 << 20), "1000bit/s": 1000, "100Mb/s": 1e8,
	} {
		got, err := ParseRate(in)
		if err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "fast", "100", "100Xbit", "-5Mbit", "10TB/s", "10mB/s"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted", bad)
		}
	}
}

func TestParseByteRate(t *testing.T) {
	for in, want := range map[string]float64{"50MiB/s": 50 << 20, "40MB/s": 40e6, "4 KB/s": 4e3, "1.5GB/s": 1.5e9} {
		if got, err := ParseByteRate(in); err != nil || got != want {
			t.Errorf("ParseByteRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "40", "40Mb/s", "40mbit", "40MBps"} {
		if _, err := ParseByteRate(bad); err == nil {
			t.Errorf("ParseByteRate(%q) accepted", bad)
		}
	}
}

func TestFormatRates(t *testing.T) {
	for bits, want := range map[float64]string{216e6: "216Mbit/s", 2e9: "2Gbit/s", 1.5e9: "1500Mbit/s",
		216.456e6: "216.46Mbit/s", 800e3: "800kbit/s", 999: "999bit/s"} {
		if got := FormatBitRate(bits); got != want {
			t.Errorf("FormatBitRate(%v) = %q, want %q", bits, got, want)
		}
	}
	if got := FormatByteRate(40e6); got != "40MB/s" {
		t.Errorf("FormatByteRate(40e6) = %q", got)
	}
}
