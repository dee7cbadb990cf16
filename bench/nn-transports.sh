#!/usr/bin/env bash
# Namespace ops/s of one smarth binary over its two namenode transports, gRPC and IPC
# (SMARTH_RPC_TRANSPORT), interleaved against one local cluster (docs/benchmarks.md,
# "Session 7: a lean RPC transport").
#   bench/nn-transports.sh SMARTH_BINARY OUT_DIR [ROUNDS]
# Writes OUT_DIR/runs.log (one line per invocation: ops/s of each op, the namenode's CPU
# seconds from /proc/PID/stat, its write syscalls from /proc/PID/io, the client's user +
# system CPU from /usr/bin/time, the load average), then prints the median tables.
set -u
B=${1:?usage: nn-transports.sh SMARTH_BINARY OUT_DIR [ROUNDS]}; C=${2:?out dir}; R=${3:-5}
rm -rf "$C"; mkdir -p "$C"
trap '"$B" cluster down --home "$C/smarth" > /dev/null 2>&1' EXIT
"$B" cluster up --home "$C/smarth" --datanodes 1 --nodemanagers=false \
  --namenode-addr 127.0.0.1:0 --namenode-http 127.0.0.1:0 > "$C/up.log" 2>&1 || { cat "$C/up.log"; exit 1; }
NN=$(python3 -c "import json;print([d['pid'] for d in json.load(open('$C/smarth/cluster.json'))['daemons'] if d['kind']=='namenode'][0])")
HZ=$(getconf CLK_TCK)
cpu() { awk -v hz="$HZ" '{printf "%.2f", ($14 + $15) / hz}' /proc/$NN/stat; }
writes() { awk '/^syscw/{print $2}' /proc/$NN/io; }
for r in $(seq 1 "$R"); do for T in 8 64; do for TR in grpc ipc; do
  a=$(cpu); wa=$(writes)
  out=$({ SMARTH_RPC_TRANSPORT=$TR SMARTH_HOME="$C/smarth" /usr/bin/time -f "CLIENT %U %S" \
    "$B" bench nn --threads $T --n 5000 --rounds 1; } 2>&1) || { echo "$out"; exit 1; }
  b=$(cpu); wb=$(writes)
  ops=$(echo "$out" | awk '/^ *(mkdir|create|stat|rename|delete) +5000/{printf "%s=%s ", $1, $5}')
  cl=$(echo "$out" | awk '/^CLIENT/{printf "%.2f", $2 + $3}')
  echo "$TR T=$T $ops nn_cpu=$(echo "$b - $a" | bc) nn_writes=$((wb - wa)) client_cpu=$cl load=$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$C/runs.log"
done; done; done
python3 - "$C/runs.log" "$(cd "$(dirname "$0")" && pwd)" <<'PY'
import statistics as st, sys
sys.path.insert(0, sys.argv[2])
from nnruns import load, ratio_table
rows = load(sys.argv[1])
ratio_table(rows, 'grpc', 'ipc', 'gRPC', 'IPC')
print()
print('| threads | transport | namenode CPU s, range (median) | client CPU s, range (median) | namenode write syscalls | load |')
print('|---|---|---|---|---|---|')
for t in (8, 64):
    for tr in ('grpc', 'ipc'):
        r = rows[(t, tr)]
        f = lambda k: [float(x[k]) for x in r]
        nn, cl, w, ld = f('nn_cpu'), f('client_cpu'), f('nn_writes'), f('load')
        print(f'| {t} | {tr} | {min(nn):.2f}-{max(nn):.2f} ({st.median(nn):.2f}) | {min(cl):.2f}-{max(cl):.2f} ({st.median(cl):.2f}) '
              f'| {min(w):.0f}-{max(w):.0f} | {min(ld)}-{max(ld)} |')
PY
