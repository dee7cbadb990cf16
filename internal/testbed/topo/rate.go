package topo

import (
	"fmt"
	"math"

	"smarth/internal/units"
)

// Rate is a network rate in bits per second. Zero means "not limited".
type Rate uint64

// ByteRate is a disk bandwidth in bytes per second. Zero means "not limited".
type ByteRate uint64

// ParseRate parses a network rate such as "50mbit", "50Mbit/s", "1gbit" or
// "216 Mbit/s" (units.ParseBitRate: a bare number, "Mbps" and byte units
// are refused as ambiguous), within 8kbit to 1000gbit.
func ParseRate(s string) (Rate, error) {
	bits, err := units.ParseBitRate(s)
	if err != nil {
		return 0, err
	}
	if bits < 8000 || bits > 1e12 {
		return 0, fmt.Errorf("rate %q is out of range (8kbit to 1000gbit)", s)
	}
	return Rate(math.Round(bits)), nil
}

// ParseByteRate parses a disk bandwidth such as "40MB/s" or "50MiB/s"
// (units.ParseByteRate), within 4KB/s to 1000GB/s.
func ParseByteRate(s string) (ByteRate, error) {
	b, err := units.ParseByteRate(s)
	if err != nil {
		return 0, err
	}
	if b < 4096 || b > 1e12 {
		return 0, fmt.Errorf("disk rate %q is out of range (4KB/s to 1000GB/s)", s)
	}
	return ByteRate(math.Round(b)), nil
}

// String prints the rate in the papers' unit, e.g. "50Mbit/s".
func (r Rate) String() string {
	if r == 0 {
		return "unlimited"
	}
	return units.FormatBitRate(float64(r))
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
	return units.FormatByteRate(float64(b))
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
