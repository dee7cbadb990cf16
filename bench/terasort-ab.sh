#!/usr/bin/env bash
# TeraSort with two smarth binaries side by side (issue 23: containers and private data
# at rest must leave the built-in apps unaffected): a local cluster per binary, both up at
# once, the same TeraGen input in each, then interleaved rounds (order flipped every round)
# of one TeraSort on each. One value per round, the ratio new/old of the two wall times, so
# the rounds are the independent samples; prints each round, the median ratio and a
# distribution-free 95% interval for it (order statistics of the per-round ratios).
#   bench/terasort-ab.sh OLD_BINARY NEW_BINARY OUT_DIR [ROUNDS] [ROWS]
set -u
OLD=${1:?usage: terasort-ab.sh OLD_BINARY NEW_BINARY OUT_DIR [ROUNDS] [ROWS]}
NEW=${2:?new binary}; OUT=${3:?out dir}; R=${4:-10}; ROWS=${5:-10000000}
rm -rf "$OUT"; mkdir -p "$OUT"
bin() { [ "$1" = old ] && echo "$OLD" || echo "$NEW"; }
trap 'for m in old new; do "$(bin $m)" cluster down --home "$OUT/home.$m" > /dev/null 2>&1; done' EXIT
for m in old new; do
  "$(bin $m)" cluster up --home "$OUT/home.$m" --datanodes 3 --namenode-addr 127.0.0.1:0 \
    --namenode-http 127.0.0.1:0 > "$OUT/$m.up" 2>&1 || { cat "$OUT/$m.up"; exit 1; }
  SMARTH_HOME="$OUT/home.$m" "$(bin $m)" job run teragen --rows "$ROWS" --maps 4 --output /tera/in \
    --no-progress > "$OUT/$m.teragen" 2>&1 || { cat "$OUT/$m.teragen"; exit 1; }
done
: > "$OUT/rounds.tsv"
for r in $(seq 1 "$R"); do
  order="old new"; [ $((r % 2)) = 0 ] && order="new old"
  declare -A secs=()
  for m in $order; do
    t0=$(date +%s.%N)
    SMARTH_HOME="$OUT/home.$m" "$(bin $m)" job run terasort --input /tera/in --output "/tera/out$r" \
      --no-progress > "$OUT/$m.sort.$r" 2>&1 || { cat "$OUT/$m.sort.$r"; exit 1; }
    secs[$m]=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
    SMARTH_HOME="$OUT/home.$m" "$(bin $m)" fs rm -r -skipTrash "/tera/out$r" > /dev/null 2>&1
  done
  printf '%d\t%s\t%s\n' "$r" "${secs[old]}" "${secs[new]}" | tee -a "$OUT/rounds.tsv"
done
python3 - "$OUT/rounds.tsv" <<'PY'
import math, statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
old = [float(r[1]) for r in rows]; new = [float(r[2]) for r in rows]
ratios = sorted(n / o for o, n in zip(old, new)); n = len(ratios)
# Distribution-free interval for the median: the k-th smallest and largest ratios,
# k the largest with P(Binomial(n, 1/2) < k) <= 2.5%.
k, cum = 0, 0.0
while True:
    p = math.comb(n, k) / 2 ** n
    if cum + p > 0.025:
        break
    cum += p; k += 1
lo, hi = (ratios[k - 1], ratios[n - k]) if k > 0 else (float("nan"), float("nan"))
print(f"rounds {n}: median old {statistics.median(old):.2f} s, new {statistics.median(new):.2f} s; "
      f"median ratio new/old {statistics.median(ratios):.3f}, 95% interval [{lo:.3f}, {hi:.3f}] (coverage {1 - 2 * cum:.3f})")
PY
