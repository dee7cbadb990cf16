#!/usr/bin/env bash
# Namespace ops/s of one smarth binary with the edit log written directly (edit_log_io: direct,
# the default) and through the page cache + fdatasync (edit_log_io: buffered, HDFS's way), two
# local clusters side by side, interleaved (docs/benchmarks.md, "Session 8: direct edit-log writes").
#   bench/nn-editlog.sh SMARTH_BINARY OUT_DIR [ROUNDS]
# Writes OUT_DIR/runs.log (one line per invocation: ops/s of each op, the namenode's CPU seconds,
# its group commits' mean duration and records per commit from /metrics), then the median table.
set -u
B=${1:?usage: nn-editlog.sh SMARTH_BINARY OUT_DIR [ROUNDS]}; C=${2:?out dir}; R=${3:-5}
rm -rf "$C"; mkdir -p "$C"
MODES="direct buffered"
trap 'for m in $MODES; do "$B" cluster down --home "$C/$m" > /dev/null 2>&1; done' EXIT
field() { python3 -c "import json,sys;print([d$2 for d in json.load(open('$1/cluster.json'))['daemons'] if d['kind']=='namenode'][0])"; }
for m in $MODES; do
  "$B" cluster up --home "$C/$m" --datanodes 1 --nodemanagers=false \
    --namenode-addr 127.0.0.1:0 --namenode-http 127.0.0.1:0 > "$C/up.$m.log" 2>&1 || { cat "$C/up.$m.log"; exit 1; }
  echo "edit_log_io: $m" >> "$C/$m/conf/namenode.yaml"
  "$B" cluster restart namenode --home "$C/$m" > /dev/null 2>&1 || { echo "restart $m failed" >&2; exit 1; }
done
HZ=$(getconf CLK_TCK)
sync_stats() { # sum and count of the group commits' seconds and records
  curl -s "http://$(field "$1" "['ready']['http']")/metrics" | awk '
    /^smarth_namenode_edit_log_sync_seconds_sum /{s=$2} /^smarth_namenode_edit_log_sync_seconds_count /{n=$2}
    /^smarth_namenode_edit_log_sync_batch_records_sum /{r=$2} END{print s, n, r}'
}
for r in $(seq 1 "$R"); do for T in 8 64; do for m in $MODES; do
  NN=$(field "$C/$m" "['pid']")
  sleep "${SETTLE:-1}"
  a=$(awk '{print $14 + $15}' /proc/$NN/stat); read s0 n0 r0 < <(sync_stats "$C/$m")
  out=$(SMARTH_HOME="$C/$m" "$B" bench nn --threads $T --n 5000 --rounds 1 2>&1) || { echo "$out"; exit 1; }
  b=$(awk '{print $14 + $15}' /proc/$NN/stat); read s1 n1 r1 < <(sync_stats "$C/$m")
  ops=$(echo "$out" | awk '/^ *(mkdir|create|stat|rename|delete) +5000/{printf "%s=%s ", $1, $5}')
  stats=$(python3 -c "n=$n1-$n0; print(f'sync_us={($s1-$s0)/n*1e6:.0f} recs_per_sync={($r1-$r0)/n:.2f}' if n else 'sync_us=0 recs_per_sync=0')")
  echo "$m T=$T $ops nn_cpu=$(echo "($b - $a) / $HZ" | bc -l | xargs printf '%.2f') $stats load=$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$C/runs.log"
done; done; done
python3 - "$C/runs.log" "$(cd "$(dirname "$0")" && pwd)" <<'PY'
import statistics as st, sys
sys.path.insert(0, sys.argv[2])
from nnruns import load, ratio_table
rows = load(sys.argv[1])
ratio_table(rows, 'buffered', 'direct', 'buffered', 'direct')
print()
print('| threads | edit_log_io | mean group commit, us (median of invocations) | records per commit | namenode CPU s per invocation |')
print('|---|---|---|---|---|')
for t in (8, 64):
    for mode in ('buffered', 'direct'):
        r = rows[(t, mode)]
        f = lambda k: st.median(float(x[k]) for x in r)
        print(f'| {t} | {mode} | {f("sync_us"):.0f} | {f("recs_per_sync"):.2f} | {f("nn_cpu"):.2f} |')
PY
