//go:build !linux

package replog

import "time"

var clockStart = time.Now()

// leaseClock is Go's monotonic clock where CLOCK_BOOTTIME is not.
func leaseClock() (time.Duration, bool) { return time.Since(clockStart), true }
