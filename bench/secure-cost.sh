#!/usr/bin/env bash
# Cost of the secure default (identity and block access tokens, TLS off) against the
# pre-issue-14 behaviour (simple auth, no block tokens): two local clusters up at once,
# interleaved rounds with the order flipped every round (docs/benchmarks.md,
# "Secure by default and TLS: cost").
#   bench/secure-cost.sh SMARTH_BINARY OUT_DIR [ROUNDS] [SIZE]
# Prints medians, the Hodges-Lehmann ratio of times (today's / secure) with its 95 %
# interval, and the Mann-Whitney p value, for puts and gets.
set -u
B=${1:?usage: secure-cost.sh SMARTH_BINARY OUT_DIR [ROUNDS] [SIZE]}; OUT=${2:?out dir}
R=${3:-16}; SIZE=${4:-512MiB}
rm -rf "$OUT"; mkdir -p "$OUT"
trap 'for m in base sec; do "$B" cluster down --home "$OUT/home.$m" > /dev/null 2>&1; done' EXIT
for m in base sec; do
  f=""; [ $m = base ] && f="--auth simple --namenode-conf block_access_token_enable=false"
  # shellcheck disable=SC2086
  "$B" cluster up --home "$OUT/home.$m" --datanodes 3 --nodemanagers=false \
    --namenode-addr 127.0.0.1:0 --namenode-http 127.0.0.1:0 $f > "$OUT/$m.up" 2>&1 || { cat "$OUT/$m.up"; exit 1; }
done
for r in $(seq 1 "$R"); do
  order="base sec"; [ $((r % 2)) = 0 ] && order="sec base"
  for m in $order; do
    SMARTH_HOME="$OUT/home.$m" "$B" bench put --size "$SIZE" --runs 1 --drop-caches --json "$OUT/$m.put.$r.json" > "$OUT/$m.put.$r.out" 2>&1
    SMARTH_HOME="$OUT/home.$m" "$B" bench get --runs 2 --json "$OUT/$m.get.$r.json" > "$OUT/$m.get.$r.out" 2>&1
    echo "round $r $m done, load $(cut -d' ' -f1-3 /proc/loadavg)"
  done
done
python3 - "$OUT" "$R" <<'PY'
import json, math, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def secs(m, kind):
    v = []
    for r in range(1, rounds + 1):
        v += [x["seconds"] for x in json.load(open(f"{out}/{m}.{kind}.{r}.json"))["runs"]]
    return v
def ranks(vals):
    order = sorted(range(len(vals)), key=lambda k: vals[k]); rk = [0.0] * len(vals); i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and vals[order[j + 1]] == vals[order[i]]:
            j += 1
        for k in range(i, j + 1):
            rk[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return rk
def mann_whitney_p(a, b):
    rk = ranks(a + b); m, n = len(a), len(b)
    u = sum(rk[:m]) - m * (m + 1) / 2
    z = (abs(u - m * n / 2) - 0.5) / math.sqrt(m * n * (m + n + 1) / 12)
    return math.erfc(z / math.sqrt(2))
def hodges_lehmann(a, b):
    d = sorted(math.log(x) - math.log(y) for x in a for y in b); m, n = len(a), len(b)
    k = int(math.floor(m * n / 2 - 1.96 * math.sqrt(m * n * (m + n + 1) / 12)))
    return [math.exp(x) for x in (statistics.median(d), d[max(k, 0)], d[min(m * n - k - 1, len(d) - 1)])]
for kind in ("put", "get"):
    b, s = secs("base", kind), secs("sec", kind)
    e, lo, hi = hodges_lehmann(b, s)
    print(f"{kind}: n={len(b)}+{len(s)} median today's {statistics.median(b):.3f} s, secure {statistics.median(s):.3f} s, "
          f"HL ratio (today's/secure time) {e:.3f} [{lo:.3f}, {hi:.3f}], p={mann_whitney_p(b, s):.2f}")
PY
