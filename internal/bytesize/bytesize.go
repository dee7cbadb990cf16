// Package bytesize reads the sizes written in configs and flags ("64MiB",
// "1G", "4096") and disk reservations that may also be a share of a
// volume ("5%").
package bytesize

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse reads a size such as "1GiB", "200MiB", "64M", "512k" or "1048576".
// Units are binary (K = KiB = 1024) whether or not the "i" is written, as
// in Hadoop's size flags; "B" alone means bytes.
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	num := strings.TrimRightFunc(t, func(r rune) bool { return r < '0' || r > '9' && r != '.' })
	unit := strings.ToLower(strings.TrimSpace(t[len(num):]))
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "b"), "i")
	shift, ok := map[string]uint{"": 0, "k": 10, "m": 20, "g": 30, "t": 40}[unit]
	if !ok || num == "" {
		return 0, fmt.Errorf("invalid size %q (want e.g. 64MiB, 1GiB, 4096)", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("invalid size %q (want e.g. 64MiB, 1GiB, 4096)", s)
	}
	return int64(f * float64(int64(1)<<shift)), nil
}

// Reserve is space to keep free on a volume: a fixed size or a share of
// the volume's capacity (HDFS's dfs.datanode.du.reserved and
// dfs.datanode.du.reserved.pct).
type Reserve struct {
	Bytes   int64   // fixed size, when Percent is 0
	Percent float64 // share of the capacity, 0..100
}

// ParseReserve reads "10GiB", "0" or "5%".
func ParseReserve(s string) (Reserve, error) {
	t := strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(t, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f < 0 || f >= 100 {
			return Reserve{}, fmt.Errorf("invalid reservation %q (want a size such as 10GiB or a percentage below 100%%, such as 5%%)", s)
		}
		return Reserve{Percent: f}, nil
	}
	n, err := Parse(t)
	if err != nil {
		return Reserve{}, fmt.Errorf("invalid reservation %q (want a size such as 10GiB or a percentage such as 5%%)", s)
	}
	return Reserve{Bytes: n}, nil
}

// Of is the bytes reserved on a volume of the given capacity.
func (r Reserve) Of(capacity int64) int64 {
	if r.Percent > 0 {
		return int64(r.Percent / 100 * float64(capacity))
	}
	return r.Bytes
}

// String is the reservation as ParseReserve reads it.
func (r Reserve) String() string {
	if r.Percent > 0 {
		return strconv.FormatFloat(r.Percent, 'f', -1, 64) + "%"
	}
	return strconv.FormatInt(r.Bytes, 10)
}
