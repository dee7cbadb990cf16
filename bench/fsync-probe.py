#!/usr/bin/env python3
"""fsync latency of one process on this disk, four ways, for the raft log's segment files.

    bench/fsync-probe.py [DIR] [ROUNDS]
    bench/fsync-probe.py --parallel [DIR] [ROUNDS]

In DIR (default /var/tmp), a 64 MiB file either preallocated with fallocate (as raft-wal makes its
segments) or written full of zeros first, then 400 times an 8 KiB pwrite at the next offset and an
fsync or fdatasync; prints p50, p90 and the mean of the sync's time, ROUNDS (default 2) times each.
docs/benchmarks.md, "Retry cache without an object per entry, and HDFS HA warmed up", has its output.

--parallel asks whether the disk overlaps the syncs of separate processes (an HA group's leader and
followers): 1, 2 and 3 processes at once, each on its own fallocated file, 400 times an 8 KiB pwrite
and an fdatasync; prints each process's mean sync cycle, ROUNDS times (docs/benchmarks.md, "The
leader stores while it sends").
"""
import multiprocessing
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


def cycle(path, q):
    f = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.posix_fallocate(f, 0, 64 << 20)
        os.fsync(f)
        t = time.perf_counter()
        for i in range(400):
            os.pwrite(f, b"x" * 8192, i * 8192)
            os.fdatasync(f)
        q.put((time.perf_counter() - t) / 400 * 1e3)
    finally:
        os.close(f)
        os.unlink(path)


def parallel(d, rounds):
    for _ in range(rounds):
        line = []
        for k in (1, 2, 3):
            q = multiprocessing.Queue()
            ps = [multiprocessing.Process(target=cycle, args=(os.path.join(d, "fsync-probe.p%d" % i), q)) for i in range(k)]
            for p in ps:
                p.start()
            for p in ps:
                p.join()
            line.append("%d at once: %s ms" % (k, " ".join("%.3f" % q.get() for _ in ps)))
        print("; ".join(line), flush=True)


def main():
    args = sys.argv[1:]
    par = bool(args) and args[0] == "--parallel"
    if par:
        args = args[1:]
    d = args[0] if args else "/var/tmp"
    rounds = int(args[1]) if len(args) > 1 else 2
    if par:
        parallel(d, rounds)
        return
    alloc = lambda f: os.posix_fallocate(f, 0, 64 << 20)
    for _ in range(rounds):
        run(d, "fallocate+fsync", alloc, os.fsync)
        run(d, "fallocate+fdatasync", alloc, os.fdatasync)
        run(d, "zerofill+fsync", zero, os.fsync)
        run(d, "zerofill+fdatasync", zero, os.fdatasync)


if __name__ == "__main__":
    main()
