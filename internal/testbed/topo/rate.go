package topo

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Rate is a network rate in bits per second. Zero means "not limited".
type Rate uint64

// ByteRate is a disk bandwidth in bytes per second. Zero means "not limited".
type ByteRate uint64

// bitUnits are the accepted network units, lower-cased, with and without
// "/s". tc's own spelling ("mbit") and the papers' ("Mbit/s") both work.
var bitUnits = map[string]float64{
	"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9,
	"bit/s": 1, "kbit/s": 1e3, "mbit/s": 1e6, "gbit/s": 1e9,
	"b/s": 1, "kb/s": 1e3, "mb/s": 1e6, "gb/s": 1e9, // only as bits when written lower-case b; see splitUnit
}

// byteUnits are the accepted disk units; decimal (MB) and binary (MiB).
var byteUnits = map[string]float64{
	"B/s": 1, "kB/s": 1e3, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9,
	"KiB/s": 1 << 10, "MiB/s": 1 << 20, "GiB/s": 1 << 30,
}

// splitUnit splits "50.5Mbit/s" into 50.5 and "Mbit/s".
func splitUnit(s string) (float64, string, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	if i == 0 {
		return 0, "", fmt.Errorf("%q does not start with a number", s)
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, "", fmt.Errorf("%q: bad number", s)
	}
	return v, strings.TrimSpace(s[i:]), nil
}

// ParseRate parses a network rate such as "50mbit", "50Mbit/s", "1gbit" or
// "216 Mbit/s". A bare number is refused (is 50 bits, kilobits or
// megabits?), and so are "mbps"/"Mbps", which tc reads as megabytes but
// people usually mean as megabits.
func ParseRate(s string) (Rate, error) {
	v, unit, err := splitUnit(s)
	if err != nil {
		return 0, err
	}
	if unit == "" {
		return 0, fmt.Errorf("rate %q has no unit (write e.g. %smbit or %sMbit/s)", s, s, s)
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
	bits := v * mult
	if bits < 8000 || bits > 1e12 {
		return 0, fmt.Errorf("rate %q is out of range (8kbit to 1000gbit)", s)
	}
	return Rate(math.Round(bits)), nil
}

// ParseByteRate parses a disk bandwidth such as "40MB/s" or "50MiB/s".
func ParseByteRate(s string) (ByteRate, error) {
	v, unit, err := splitUnit(s)
	if err != nil {
		return 0, err
	}
	if unit == "" {
		return 0, fmt.Errorf("disk rate %q has no unit (write e.g. %sMB/s)", s, s)
	}
	mult, ok := byteUnits[unit]
	if !ok {
		return 0, fmt.Errorf("disk rate %q: unknown unit %q (use B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s)", s, unit)
	}
	b := v * mult
	if b < 4096 || b > 1e12 {
		return 0, fmt.Errorf("disk rate %q is out of range (4KB/s to 1000GB/s)", s)
	}
	return ByteRate(math.Round(b)), nil
}

// String prints the rate in the papers' unit, e.g. "50Mbit/s".
func (r Rate) String() string {
	switch {
	case r == 0:
		return "unlimited"
	case r%1e9 == 0:
		return fmt.Sprintf("%dGbit/s", r/1e9)
	case r >= 1e6:
		return trimFloat(float64(r)/1e6) + "Mbit/s"
	case r >= 1e3:
		return trimFloat(float64(r)/1e3) + "kbit/s"
	}
	return fmt.Sprintf("%dbit/s", uint64(r))
}

// Mbit is the rate in Mbit/s.
func (r Rate) Mbit() float64 { return float64(r) / 1e6 }

// TC is the rate as tc writes it, exact to the bit.
func (r Rate) TC() string { return fmt.Sprintf("%dbit", uint64(r)) }

// String prints the bandwidth in MB/s (decimal), e.g. "40MB/s".
func (b ByteRate) String() string {
	if b == 0 {
		return "unlimited"
	}
	return trimFloat(float64(b)/1e6) + "MB/s"
}

func trimFloat(f float64) string {
	return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64)
}

// minRate is the smaller of the limits, where 0 means unlimited.
func minRate(rs ...Rate) Rate {
	var m Rate
	for _, r := range rs {
		if r != 0 && (m == 0 || r < m) {
			m = r
		}
	}
	return m
}
