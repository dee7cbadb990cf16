#!/usr/bin/env bash
# put-ab.sh: two smarth builds' whole `smarth fs put` of one file, interleaved round by round, each
# against a local cluster started by its own build (3 datanodes, no node managers, defaults
# otherwise). For telling whether a change of the write path (or of anything a put goes through)
# made puts slower or faster, as docs/benchmarks.md's bisection of issue 27's put asks.
#
#   bench/put-ab.sh BINARY_A BINARY_B OUT_DIR [ROUNDS]
#
# SIZE (default 1GiB) is the file's size. Each put is preceded by an untimed `sync`, timed whole
# by /usr/bin/time (wall, client user+system CPU), and followed by a timed `sync` logged beside it
# (not added); the file is then removed and the datanodes given 3 s to unlink its replicas
# (untimed), so one side's deletions do not land in the other's put. A goes first in odd rounds,
# B in even ones. One untimed warm-up put per side first. Output: OUT_DIR/runs.log (one line per
# put), and the per-round ratios B/A with their geometric mean and 95% t interval (nnruns.py's
# ratio_interval) on stdout.
set -euo pipefail
A=${1:?usage: put-ab.sh BINARY_A BINARY_B OUT_DIR [ROUNDS]}
B=${2:?binary B}
C=${3:?out dir}
R=${4:-6}
SIZE=${SIZE:-1GiB}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$C"
bytes=$(numfmt --from=iec-i "${SIZE%B}")
cleanup() {
  for s in a b; do
    [ -d "$C/$s" ] && "$([ $s = a ] && echo "$A" || echo "$B")" cluster down --home "$C/$s" > /dev/null 2>&1 || true
  done
}
trap cleanup EXIT
for s in a b; do
  bin=$A; [ $s = b ] && bin=$B
  rm -rf "${C:?}/$s"
  "$bin" cluster up --home "$C/$s" --datanodes 3 --nodemanagers=false \
    --namenode-addr 127.0.0.1:0 --namenode-http 127.0.0.1:0 > "$C/up.$s.log" 2>&1 || { cat "$C/up.$s.log"; exit 1; }
done
[ -f "$C/src.dat" ] && [ "$(stat -c %s "$C/src.dat")" = "$bytes" ] || head -c "$bytes" /dev/urandom > "$C/src.dat"
cat "$C/src.dat" > /dev/null # in the page cache, as a freshly made file would be
put() { # side label
  local s=$1 label=$2 bin=$A
  [ "$s" = b ] && bin=$B
  sync
  local t0 t1 ts
  /usr/bin/time -f "%e %U %S" -o "$C/time.tmp" env "SMARTH_HOME=$C/$s" "$bin" fs put "$C/src.dat" /f.dat > "$C/put.tmp" 2>&1 ||
    { cat "$C/put.tmp"; exit 1; }
  t0=$(date +%s.%N); sync; t1=$(date +%s.%N)
  ts=$(echo "$t1 - $t0" | bc)
  read -r wall usr sys < "$C/time.tmp"
  echo "$label $s wall=$wall user=$usr sys=$sys sync=$ts load=$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$C/runs.log" >&2
  env "SMARTH_HOME=$C/$s" "$bin" fs rm -skipTrash /f.dat > /dev/null
  sleep 3 # the next heartbeats carry the invalidations; the replicas are unlinked before the next put
  echo "$wall"
}
: > "$C/runs.log"
put a warmup > /dev/null
put b warmup > /dev/null
was=(); wbs=()
for r in $(seq 1 "$R"); do
  if [ $((r % 2)) = 1 ]; then wa=$(put a "round$r"); wb=$(put b "round$r"); else wb=$(put b "round$r"); wa=$(put a "round$r"); fi
  was+=("$wa"); wbs+=("$wb")
done
python3 - "${was[*]}" "${wbs[*]}" <<EOF
import sys
sys.path.insert(0, "$here")
from nnruns import ratio_interval
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
ratios, g, lo, hi = ratio_interval(a, b)
print("A put s:", " ".join(f"{x:.2f}" for x in a))
print("B put s:", " ".join(f"{x:.2f}" for x in b))
print("per-round B/A:", " ".join(f"{x:.3f}" for x in ratios))
print(f"B/A put time: geometric mean {g:.3f} [{lo:.3f}, {hi:.3f}] over {len(ratios)} rounds")
EOF
