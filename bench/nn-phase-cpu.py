#!/usr/bin/env python3
"""CPU per operation of each namenode of an HA group, phase by phase, for one `smarth bench nn` run.

    . OUT/env.sh   # from HOLD=1 bench/nn-ha-compare.sh BIN OUT (sets PIDS, H0..H2, the client env)
    export PIDS
    bench/nn-phase-cpu.py BIN N THREADS OPS
    bench/nn-phase-cpu.py smarth 60000 64 mkdir,create,rename,delete

Reads the members' utime+stime (/proc/PID/stat) and their threads' context switches, and this
run's client's, each time `bench nn` prints a phase, and prints per phase: ops/s, server CPU per op
(in all and per member, in PIDS order), client CPU per op, context switches per op. Ops the run
needs but was not asked for (the untimed creates before rename) fall into the next phase printed.

PROF_AFTER=OP (with HS="$H0 $H1 $H2", PROF_OUT=PREFIX, PROF_SECS, default 2) starts a CPU profile
of every member (/debug/pprof/profile, members started with `pprof: true`) when phase OP ends, so it
covers the phase after it; PREFIX.nnI.pb.gz (verified against the group's CA, SMARTH_TLS_CA_FILE).
"""
import os
import subprocess
import sys
import time


def cpu(pid, hz):
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / hz
    except OSError:
        return 0.0


def csw(pid):
    n = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for t in tasks:
        try:
            for line in open(f"/proc/{pid}/task/{t}/status"):
                if "ctxt_switches" in line:
                    n += int(line.split()[1])
        except OSError:
            pass
    return n


def main():
    if len(sys.argv) != 5 or "PIDS" not in os.environ:
        sys.exit(__doc__)
    binary, n, threads, ops = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    pids = [int(p) for p in os.environ["PIDS"].split()]
    hz = os.sysconf("SC_CLK_TCK")
    run = subprocess.Popen([binary, "bench", "nn", "--n", str(n), "--threads", threads, "--ops", ops,
                            "--rounds", "1", "--warmup=false"], stdout=subprocess.PIPE, text=True)

    def snap():
        return [cpu(p, hz) for p in pids], cpu(run.pid, hz), sum(csw(p) for p in pids), time.time()

    prev = snap()
    for line in run.stdout:
        if not line.startswith("round"):
            continue
        cur = snap()
        op = line.split()[2]
        members = [(c - p) / n * 1e6 for c, p in zip(cur[0], prev[0])]
        wall = cur[3] - prev[3]
        print(f"{op:7s} wall {wall:.2f}s ops/s {n / wall:8.0f}  server cpu/op {sum(members):6.1f}us "
              f"(per member {' '.join(f'{m:.1f}' for m in members)})  "
              f"client cpu/op {(cur[1] - prev[1]) / n * 1e6:6.1f}us  csw/op {(cur[2] - prev[2]) / n:.2f}", flush=True)
        prev = cur
        if os.environ.get("PROF_AFTER") == op:
            for i, h in enumerate(os.environ["HS"].split()):
                subprocess.Popen(["curl", "-s", "--cacert", os.environ["SMARTH_TLS_CA_FILE"], "-o", f"{os.environ['PROF_OUT']}.nn{i}.pb.gz",
                                  f"https://{h}/debug/pprof/profile?seconds={os.environ.get('PROF_SECS', '2')}"])
    sys.exit(run.wait())


if __name__ == "__main__":
    main()
