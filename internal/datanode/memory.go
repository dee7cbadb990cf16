package datanode

import (
	"fmt"
	"smarth/internal/units"

	"golang.org/x/sys/unix"
)

// validateMemory checks that the in-memory cache fits: in memory_budget
// beside the write buffers the datanode needs, and in the machine's
// physical memory (phys bytes; 0 if unknown). The cache is locked memory,
// so promising more than there is would end in the OOM killer, not in a
// slower cache.
func (c Config) validateMemory(phys int64) error {
	if c.CacheCapacity <= 0 {
		return nil
	}
	if phys > 0 && c.CacheCapacity > phys {
		return fmt.Errorf("cache_capacity: %s is more than this machine's physical memory (%s)", sizeString(c.CacheCapacity), sizeString(phys))
	}
	if c.MemoryBudget == 0 {
		return nil
	}
	// per_client_buffer bounds what one multi-pipeline client holds here;
	// at least one client's worth must stay free of the cache, and so must
	// the page cache the node keeps for recent reads.
	// An explicit receive_buffer_budget is what all write buffers may
	// take together.
	buffers, key := max(c.PerClientBuffer, 0), "per_client_buffer"
	if c.ReceiveBufferBudget > buffers {
		buffers, key = c.ReceiveBufferBudget, "receive_buffer_budget"
	}
	pages := max(c.PageCacheBudget, 0)
	if room := c.MemoryBudget - buffers - pages; c.CacheCapacity > room {
		return fmt.Errorf("cache_capacity: %s does not fit in memory_budget %s: the datanode keeps %s %s of it for write buffers and page_cache_budget %s for recent reads, leaving %s for the cache",
			sizeString(c.CacheCapacity), sizeString(c.MemoryBudget), key, sizeString(buffers), sizeString(pages), sizeString(max(room, 0)))
	}
	return nil
}

// physicalMemory is the machine's RAM in bytes, 0 if unknown.
func physicalMemory() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// sizeString prints a byte count exactly and in a binary unit, as config
// errors should name the value the user wrote.
func sizeString(n int64) string {
	return fmt.Sprintf("%d bytes (%s)", n, units.FormatSize(n))
}
