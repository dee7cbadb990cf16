#!/usr/bin/env python3
"""fsync latency of one process on this disk, four ways, for the raft log's segment files.

    bench/fsync-probe.py [DIR] [ROUNDS]

In DIR (default /var/tmp), a 64 MiB file either preallocated with fallocate (as raft-wal makes its
segments) or written full of zeros first, then 400 times an 8 KiB pwrite at the next offset and an
fsync or fdatasync; prints p50, p90 and the mean of the sync's time, ROUNDS (default 2) times each.
docs/benchmarks.md, "Retry cache without an object per entry, and HDFS HA warmed up", has its output.
"""
import os
import sys
import time


def run(d, name, prep, sync):
    p = os.path.join(d, "fsync-probe." + name)
    f = os.open(p, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        prep(f)
        os.fsync(f)
        ts, off = [], 0
        for _ in range(400):
            os.pwrite(f, b"x" * 8192, off)
            off += 8192
            t = time.perf_counter()
            sync(f)
            ts.append((time.perf_counter() - t) * 1e3)
        ts.sort()
        print("%-22s p50 %.3f p90 %.3f mean %.3f ms" % (name, ts[200], ts[360], sum(ts) / len(ts)), flush=True)
    finally:
        os.close(f)
        os.unlink(p)


def zero(f):
    z = b"\0" * (1 << 20)
    for _ in range(64):
        os.write(f, z)


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "/var/tmp"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    alloc = lambda f: os.posix_fallocate(f, 0, 64 << 20)
    for _ in range(rounds):
        run(d, "fallocate+fsync", alloc, os.fsync)
        run(d, "fallocate+fdatasync", alloc, os.fdatasync)
        run(d, "zerofill+fsync", zero, os.fsync)
        run(d, "zerofill+fdatasync", zero, os.fdatasync)


if __name__ == "__main__":
    main()
