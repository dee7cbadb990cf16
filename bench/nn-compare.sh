#!/usr/bin/env bash
# Namespace ops/s, smarth's namenode vs Apache HDFS's NameNode, interleaved rounds
# (docs/benchmarks.md, "Namespace ops/s against HDFS's NameNode").
#   bench/nn-compare.sh SMARTH_BINARY OUT_DIR [ROUNDS]
# Needs bench/nnjava built: (cd bench/nnjava && mvn -o -q -B package -DskipTests).
# Writes OUT_DIR/{hdfs,smarth}.THREADS.ROUND.out and OUT_DIR/cpu.log (each server's CPU
# seconds per invocation, from /proc/PID/stat), then prints the median table.
set -u
B=${1:?usage: nn-compare.sh SMARTH_BINARY OUT_DIR [ROUNDS]}; C=${2:?out dir}; R=${3:-5}
W=$(cd "$(dirname "$0")/nnjava" && pwd)
CP="$W/target/nnjava-1.0.jar:$W/target/lib/*"
[ -f "$W/target/nnjava-1.0.jar" ] || { echo "build bench/nnjava first" >&2; exit 2; }
rm -rf "$C"; mkdir -p "$C"
java -Xmx4g -cp "$CP" smarth.nnbench.Main serve --dir "$C/hdfs" --addr-file "$C/hdfs.addr" > "$C/hdfs.serve.log" 2>&1 &
JPID=$!
trap '"$B" cluster down --home "$C/smarth" > /dev/null 2>&1; kill $JPID 2>/dev/null' EXIT
"$B" cluster up --home "$C/smarth" --datanodes 1 --nodemanagers=false \
  --namenode-addr 127.0.0.1:0 --namenode-http 127.0.0.1:0 > "$C/up.log" 2>&1 || { cat "$C/up.log"; exit 1; }
until [ -s "$C/hdfs.addr" ]; do sleep 0.5; done
NN=$(python3 -c "import json;print([d['pid'] for d in json.load(open('$C/smarth/cluster.json'))['daemons'] if d['kind']=='namenode'][0])")
cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' /proc/$1/stat; }
# settle: let the previous invocation's processes finish exiting (and the JVM finish compiling)
# before the next one starts, so neither server is measured beside the other's leftovers.
settle() { sleep "${SETTLE:-2}"; }
for r in $(seq 1 "$R"); do for T in 8 64; do
  settle; a=$(cpu $JPID); java -cp "$CP" smarth.nnbench.Main bench --nn "$(cat "$C/hdfs.addr")" --threads $T --n 5000 --rounds 1 > "$C/hdfs.$T.$r.out" 2>&1; b=$(cpu $JPID)
  echo "hdfs r=$r T=$T servercpu=$(echo "$b - $a" | bc) load=$(cut -d' ' -f1 /proc/loadavg)" >> "$C/cpu.log"
  settle; a=$(cpu $NN); SMARTH_HOME="$C/smarth" "$B" bench nn --threads $T --n 5000 --rounds 1 > "$C/smarth.$T.$r.out" 2>&1; b=$(cpu $NN)
  echo "smarth r=$r T=$T servercpu=$(echo "$b - $a" | bc) load=$(cut -d' ' -f1 /proc/loadavg)" >> "$C/cpu.log"
done; done
python3 - "$C" "$R" <<'PY'
import re, statistics as st, sys
c, rounds = sys.argv[1], int(sys.argv[2])
res = {}
for sysname in ('hdfs', 'smarth'):
    for t in (8, 64):
        for r in range(1, rounds + 1):
            for line in open(f'{c}/{sysname}.{t}.{r}.out'):
                m = re.match(r'round 1\s+(\w+)\s+\d+ ops\s+\d+ threads\s+[\d.]+ s\s+(\d+) ops/s', line)
                if m:
                    res.setdefault((sysname, t, m.group(1)), []).append(int(m.group(2)))
print('| threads | op | HDFS median ops/s | smarth median ops/s | smarth / HDFS | HDFS rounds | smarth rounds |')
print('|---|---|---|---|---|---|---|')
for t in (8, 64):
    for op in ('mkdir', 'create', 'stat', 'rename', 'delete'):
        h, s = res.get(('hdfs', t, op), []), res.get(('smarth', t, op), [])
        if h and s:
            print(f'| {t} | {op} | {st.median(h):,} | {st.median(s):,} | {st.median(s)/st.median(h):.2f}x '
                  f'| {" ".join(map(str, h))} | {" ".join(map(str, s))} |')
PY
