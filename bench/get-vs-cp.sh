#!/usr/bin/env bash
# `smarth fs get` of a file against a local copy of the same bytes (issue 27: "fs get to a
# file within 20% of cp of a local 1 GiB file"), whole commands, interleaved: every round
# runs A and B once, the order flipped each round, and gives one ratio B/A; the summary is
# the geometric mean of the ratios with a 95% t interval over rounds (docs/benchmarks.md,
# "fs get against cp").
#
#   bench/get-vs-cp.sh A B [ROUNDS]
#
# A and B are each one of
#   cp          cp LOCAL OUT        (coreutils 9: tries a reflink, then copy_file_range)
#   cp-never    cp --reflink=never LOCAL OUT
#   dd          dd if=LOCAL of=OUT bs=4M
#   get:BINARY  BINARY fs get REMOTE OUT   (with SMARTH_HOME as exported)
#   get-tcp:BINARY  the same with SMARTH_SHORT_CIRCUIT_READS=false: every block over the
#               data port even where the cluster has short-circuit sockets
# Environment: LOCAL (a local file, default /tmp/getcp/local1g), REMOTE (the same bytes in
# the cluster, default /f1g), DIR (where the copies go; the same filesystem as LOCAL),
# TIMED_SYNC=1 to time `cmd && sync` instead of the command alone.
#
# Sync: by default the time stops when the command exits (what a user waits for), and a
# `sync` runs, untimed, after every copy is removed, so neither side starts with the
# other's dirty pages still being written back. With TIMED_SYNC=1 both sides also pay for
# writing their copy back to the disk.
set -u
A=${1:?usage: get-vs-cp.sh A B [ROUNDS]}; B=${2:?usage: get-vs-cp.sh A B [ROUNDS]}; R=${3:-6}
LOCAL=${LOCAL:-/tmp/getcp/local1g}; REMOTE=${REMOTE:-/f1g}; DIR=${DIR:-/tmp/getcp/out}
TIMED_SYNC=${TIMED_SYNC:-0}
mkdir -p "$DIR"
cmd() { # cmd KIND OUT: the command line of one side
  case $1 in
  cp) echo "cp $LOCAL $2" ;;
  cp-never) echo "cp --reflink=never $LOCAL $2" ;;
  dd) echo "dd if=$LOCAL of=$2 bs=4M status=none" ;;
  get:*) echo "${1#get:} fs get $REMOTE $2" ;;
  get-tcp:*) echo "SMARTH_SHORT_CIRCUIT_READS=false ${1#get-tcp:} fs get $REMOTE $2" ;;
  *) echo "unknown side $1" >&2; exit 2 ;;
  esac
}
run() { # run KIND OUT: prints "elapsed user sys" of the whole command
  local c; c=$(cmd "$1" "$2")
  [ "$TIMED_SYNC" = 1 ] && c="$c && sync"
  /usr/bin/time -f "%e %U %S" -o "$DIR/time" sh -c "$c" > "$DIR/out" 2>&1 || { cat "$DIR/out"; exit 1; }
  cat "$DIR/time"
}
echo "A = $(cmd "$A" OUT)"; echo "B = $(cmd "$B" OUT)"; echo "timed sync: $TIMED_SYNC"
rm -f "$DIR/a" "$DIR/b"; sync
ratios=()
for r in $(seq 1 "$R"); do
  order="A B"; [ $((r % 2)) = 0 ] && order="B A"
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  for s in $order; do
    if [ "$s" = A ]; then ta=$(run "$A" "$DIR/a"); else tb=$(run "$B" "$DIR/b"); fi
    rm -f "$DIR/a" "$DIR/b"; sync
  done
  ratio=$(awk -v a="${ta%% *}" -v b="${tb%% *}" 'BEGIN { printf "%.3f", b / a }')
  ratios+=("$ratio")
  echo "round $r ($order) load $load: A ${ta} | B ${tb} (elapsed user sys) | B/A $ratio"
done
python3 - "${ratios[@]}" <<'PY'
import math, statistics, sys
x = [math.log(float(v)) for v in sys.argv[1:]]
n = len(x)
# two-sided 95% t quantiles for n-1 degrees of freedom (1..30)
T = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
     2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
     2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
m = statistics.mean(x)
if n < 2:
    print(f"B/A geometric mean {math.exp(m):.3f} (one round: no interval)")
    sys.exit()
h = T[min(n - 1, 30) - 1] * statistics.stdev(x) / math.sqrt(n)
print(f"B/A geometric mean {math.exp(m):.3f}, 95% interval {math.exp(m - h):.3f}-{math.exp(m + h):.3f}, {n} rounds")
PY
