//go:build linux

package replog

import (
	"time"

	"golang.org/x/sys/unix"
)

// leaseClock reads CLOCK_BOOTTIME: monotonic like Go's clock, and it
// also counts a suspend of the host, which CLOCK_MONOTONIC (Go's) does
// not; a leader whose host slept must find its lease expired. ok false:
// no reading, no lease.
func leaseClock() (now time.Duration, ok bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
