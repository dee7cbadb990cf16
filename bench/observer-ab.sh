#!/bin/bash
# Observer reads A/B on a group held by bench/nn-ha-compare.sh (HOLD=1; default
# config, or HA_EXTRA for another read mode): `smarth bench nn --ops stat` at 8
# and 64 threads, reads on the active vs on the standbys
# (SMARTH_OBSERVER_READS=true), interleaved rounds; server CPU (all three
# members, /proc ticks) per run.
set -e
BIN=$1; OUT=$2; R=${3:-4}
. $OUT/group/env.sh
ticks() { for p in $PIDS; do awk '{print $14+$15}' /proc/$p/stat; done | paste -sd+ | bc; }
for r in $(seq 1 $R); do for T in 8 64; do for mode in active observer; do
  obs=false; [ $mode = observer ] && obs=true
  a=$(ticks)
  SMARTH_OBSERVER_READS=$obs $BIN bench nn --ops stat --n 40000 --threads $T --rounds 1 --warmup=false > $OUT/r$r.$T.$mode.out 2>&1
  b=$(ticks)
  rate=$(awk '$1=="stat"{print $5}' $OUT/r$r.$T.$mode.out | tail -1)
  echo "$r $T $mode $rate $((b-a))" | tee -a $OUT/rates.txt
done; done; done
