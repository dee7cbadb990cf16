package cluster

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseBytes reads a size such as "1GiB", "200MiB", "64M", "512k" or
// "1048576". Units are binary (K = KiB = 1024) whether or not the "i" is
// written, as in Hadoop's size flags; "B" alone means bytes.
func ParseBytes(s string) (int64, error) {
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
