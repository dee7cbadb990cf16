// Package cgroup caps the disk bandwidth of a testbed host's processes with
// the kernel's block I/O controller: blkio throttling under cgroup v1
// (blkio.throttle.read_bps_device / write_bps_device) or io.max under
// cgroup v2, whichever the machine mounts. It finds the block device under
// a directory (the whole disk for a partition, since the throttle works on
// the disk's queue) and creates one group per host below
// "smarth-testbed/<testbed>/", which it removes again on teardown.
//
// What it leaves to others: deciding the limits (internal/testbed/topo) and
// putting processes into the groups (internal/testbed writes the pid of its
// launcher into the group before it execs the daemon, so every byte the
// daemon reads or writes is counted).
//
// Caveat worth knowing: v1 throttling counts I/O when it reaches the block
// layer. Reads served from the page cache are not throttled, and buffered
// writes are throttled when they are written back (this kernel attributes
// writeback to the writer's group; older kernels only throttled direct and
// synchronous I/O). Seed 003 needs disk reads to be slower than memory,
// which the cap gives once the data is not in the page cache.
package cgroup
