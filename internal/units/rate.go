package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// bitUnits are the network rate units, lower-cased, with and without
// "/s": tc's own spelling ("mbit") and the papers' ("Mbit/s") both work.
// Network prefixes are decimal, as link rates are quoted.
var bitUnits = map[string]float64{
	"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9,
	"bit/s": 1, "kbit/s": 1e3, "mbit/s": 1e6, "gbit/s": 1e9,
	"b/s": 1, "kb/s": 1e3, "mb/s": 1e6, "gb/s": 1e9, // bits only when written with a lower-case b; see ParseBitRate
}

// byteUnits are the disk rate units, exactly as written: decimal (MB/s)
// and binary (MiB/s), as disk bandwidths are quoted both ways.
var byteUnits = map[string]float64{
	"B/s": 1, "kB/s": 1e3, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9,
	"KiB/s": 1 << 10, "MiB/s": 1 << 20, "GiB/s": 1 << 30,
}

// splitRate splits "50.5Mbit/s" into 50.5 and "Mbit/s". Rates take no
// exponent: "1e3mbit" is refused as a typo rather than read as 1 Gbit/s.
func splitRate(s string) (float64, string, error) {
	num, unit, ok := splitNumber(s, false)
	if !ok {
		return 0, "", fmt.Errorf("rate %q does not start with a number", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, "", fmt.Errorf("rate %q: bad number", s)
	}
	return v, unit, nil
}

// ParseBitRate reads a network rate in bit/s, such as "50mbit",
// "50Mbit/s", "1gbit" or "216 Mbit/s" (units: bit, kbit, mbit, gbit in
// either case, optionally with /s; "kb/s" with a lower-case b). A bare
// number is refused (is 50 bits, kilobits or megabits?), and so are
// "mbps"/"Mbps", which tc reads as megabytes but people usually mean as
// megabits, and byte units ("MB/s"). The testbed's topology files use it.
func ParseBitRate(s string) (float64, error) {
	v, unit, err := splitRate(s)
	if err != nil {
		return 0, err
	}
	if unit == "" {
		n := strings.TrimSpace(s)
		return 0, fmt.Errorf("rate %q has no unit (write e.g. %smbit or %sMbit/s)", s, n, n)
	}
	lu := strings.ToLower(unit)
	if strings.HasSuffix(lu, "bps") {
		return 0, fmt.Errorf("rate %q is ambiguous (tc reads %q as bytes, papers as bits): write Mbit/s for bits or use a disk unit such as MB/s", s, unit)
	}
	// "MB/s" with a capital B means bytes: refuse it for a network rate
	// rather than guess.
	if strings.Contains(unit, "B") {
		return 0, fmt.Errorf("rate %q is in bytes; network rates are in bits (e.g. 50Mbit/s)", s)
	}
	mult, ok := bitUnits[lu]
	if !ok {
		return 0, fmt.Errorf("rate %q: unknown unit %q (use bit, kbit, mbit, gbit, optionally with /s)", s, unit)
	}
	return v * mult, nil
}

// ParseRate reads a link rate written in bits or in bytes and returns
// bit/s: everything ParseBitRate reads, "100Mbps" as megabits (as
// benchmark papers quote links), and the byte rates of ParseByteRate
// times eight ("12.5MB/s" is 100 Mbit/s). A bare number is refused.
// `smarth bench --link-rate` uses it.
func ParseRate(s string) (float64, error) {
	v, unit, err := splitRate(s)
	if err != nil {
		return 0, err
	}
	if m, ok := byteUnits[unit]; ok {
		return v * m * 8, nil
	}
	lu := strings.ToLower(unit)
	if p, ok := strings.CutSuffix(lu, "bps"); ok {
		lu = p + "bit"
	}
	m, ok := bitUnits[lu]
	if !ok || strings.Contains(unit, "B/") {
		return 0, fmt.Errorf("invalid rate %q (want e.g. 100Mbit, 1Gbit/s, 100Mbps, 12.5MB/s, 10MiB/s)", s)
	}
	return v * m, nil
}

// ParseByteRate reads a disk bandwidth in bytes/s, such as "40MB/s"
// (decimal: B/s, kB/s, KB/s, MB/s, GB/s) or "50MiB/s" (binary: KiB/s,
// MiB/s, GiB/s). Units are case-sensitive, so that "Mb/s" is not taken
// for bytes. A bare number is refused.
func ParseByteRate(s string) (float64, error) {
	v, unit, err := splitRate(s)
	if err != nil {
		return 0, err
	}
	if unit == "" {
		n := strings.TrimSpace(s)
		return 0, fmt.Errorf("disk rate %q has no unit (write e.g. %sMB/s)", s, n)
	}
	mult, ok := byteUnits[unit]
	if !ok {
		return 0, fmt.Errorf("disk rate %q: unknown unit %q (use B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s)", s, unit)
	}
	return v * mult, nil
}

// FormatBitRate prints a rate in bit/s in the papers' unit: whole Gbit/s
// as "1Gbit/s", else Mbit/s or kbit/s with up to two decimals
// ("50Mbit/s", "216.5Mbit/s", "1500Mbit/s").
func FormatBitRate(bits float64) string {
	switch {
	case bits >= 1e9 && math.Mod(bits, 1e9) == 0:
		return strconv.FormatFloat(bits/1e9, 'f', 0, 64) + "Gbit/s"
	case bits >= 1e6:
		return trimFloat(bits/1e6) + "Mbit/s"
	case bits >= 1e3:
		return trimFloat(bits/1e3) + "kbit/s"
	}
	return trimFloat(bits) + "bit/s"
}

// FormatByteRate prints a rate in bytes/s in MB/s (decimal), with up to
// two decimals: "40MB/s".
func FormatByteRate(bytes float64) string {
	return trimFloat(bytes/1e6) + "MB/s"
}

func trimFloat(f float64) string {
	return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64)
}
