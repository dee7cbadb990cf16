#!/usr/bin/env bash
# Namespace ops/s with HA: a smarth group of 3 namenodes against Apache HDFS 3.4.1 HA (QJM with 3
# JournalNodes, an active and a standby; bench/nnjava serve-ha), and the same smarth binary's single
# namenode with TLS (as the group's members have) and without (today's default local cluster),
# interleaved rounds (docs/benchmarks.md, "Namespace ops/s with HA").
#   bench/nn-ha-compare.sh SMARTH_BINARY OUT_DIR [ROUNDS]
# HDFS's variants need bench/nnjava built: (cd bench/nnjava && mvn -o -q -B package -DskipTests).
# VARIANTS (default "hdfsha ha single plain"; add hdfs for HDFS's single NameNode, bench/nnjava serve)
# picks which run; THREADS (default "8 64"), N (5000); HA_EXTRA, lines added to each group member's
# config (e.g. HA_EXTRA='pprof: true' to profile them). Variant ha2 is a second group of 3 run by
# the binary B2 (servers and client; default the same binary), e.g. VARIANTS="ha ha2" B2=NEW_BINARY
# to compare two builds of smarth HA side by side, interleaved (the tables then add ha2 against ha,
# CPU included); HA2_EXTRA adds lines to ha2's members only (e.g. HA2_EXTRA='ha_group_commit: plain').
# Writes OUT_DIR/runs.log (one line per invocation: each op's ops/s, the servers' CPU seconds and
# context switches, and the load average), then the tables. Every process it starts is stopped on
# exit. Creating OUT_DIR/stop ends the run after the round in progress (the tables cover the rounds
# done). Needs bench/nnjava built only for the HDFS variants. HOLD=1 keeps a group up for profiling
# instead (see below).
set -u
B=${1:?usage: nn-ha-compare.sh SMARTH_BINARY OUT_DIR [ROUNDS]}; C=${2:?out dir}; R=${3:-5}
B=$(realpath "$B")
VARIANTS=${VARIANTS:-hdfsha ha single plain}; THREADS=${THREADS:-8 64}; N=${N:-5000}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$HERE/nnjava
CP="$W/target/nnjava-1.0.jar:$W/target/lib/*"
rm -rf "$C"; mkdir -p "$C/ha"
C=$(realpath "$C")
HAPIDS=(); JPID=; SPID=
declare -A GPIDS GADDRS GBIN # per group of 3 (ha, ha2): its pids, its members' RPC addresses, its binary
cleanup() {
  [ -n "$JPID" ] && kill "$JPID" 2>/dev/null && wait "$JPID" 2>/dev/null
  [ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
  for p in "${HAPIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${HAPIDS[@]}"; do wait "$p" 2>/dev/null; done
  for h in single plain; do [ -d "$C/$h" ] && "$B" cluster down --home "$C/$h" > /dev/null 2>&1; done
}
trap cleanup EXIT
want() { [[ " $VARIANTS " == *" $1 "* ]]; }
if want hdfsha || want hdfs; then
  [ -f "$W/target/nnjava-1.0.jar" ] || { echo "build bench/nnjava first" >&2; exit 2; }
fi

# HDFS HA: 3 JournalNodes and 2 NameNodes, each its own JVM, nn1 made active by hand.
# serve-ha picks free ports before its daemons bind them; on a busy machine another process can
# take one in between (a BindException), so a start that fails is tried again, up to 3 times.
HDFSHA_TRIES=0
start_hdfsha() {
  HDFSHA_TRIES=$((HDFSHA_TRIES + 1))
  rm -rf "$C/hdfsha"
  java -Xmx1g -cp "$CP" smarth.nnbench.Main serve-ha --dir "$C/hdfsha" --conf-file "$C/hdfsha.xml" > "$C/hdfsha.serve.log" 2>&1 &
  JPID=$!
}
want hdfsha && start_hdfsha
if want hdfs; then
  java -Xmx4g -cp "$CP" smarth.nnbench.Main serve --dir "$C/hdfs" --addr-file "$C/hdfs.addr" > "$C/hdfs.serve.log" 2>&1 &
  SPID=$!
fi
# The single namenodes: local clusters of one datanode, one with TLS on every connection (as an HA
# group must have), one as `cluster up` makes it by default.
if want single || want ha || want ha2; then
  "$B" cluster up --tls --home "$C/single" --datanodes 1 --nodemanagers=false \
    --namenode-addr 127.0.0.1:0 --namenode-http 127.0.0.1:0 > "$C/up.single.log" 2>&1 || { cat "$C/up.single.log"; exit 1; }
fi
if want plain; then
  "$B" cluster up --home "$C/plain" --datanodes 1 --nodemanagers=false \
    --namenode-addr 127.0.0.1:0 --namenode-http 127.0.0.1:0 > "$C/up.plain.log" 2>&1 || { cat "$C/up.plain.log"; exit 1; }
fi
# The group: three `smarth namenode` processes with the TLS cluster's keys, CA and certificate
# (the certificate names 127.0.0.1, so it serves every member's raft and RPC ports), ha_* keys,
# raft timeouts at their defaults. nn0 bootstraps the group; no datanodes (the benchmark's files
# are empty; the HDFS side has none either).
# start_group NAME BINARY: the members of one group under $C/NAME.
start_group() {
  local g=$1 bin=$2 i addrs=
  mkdir -p "$C/$g"
  read -r -a PORTS <<< "$(python3 -c '
import socket
ss = [socket.socket() for _ in range(6)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')"
  for i in 0 1 2; do
    python3 - "$C/single/conf/namenode.yaml" "$C/$g" "$i" "${PORTS[@]}" > "$C/$g/nn$i.yaml" <<'PY'
import sys
base, d, me, ports = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
keep = ('auth:', 'auth_secret_file:', 'datanode_key_file:', 'tls:', 'tls_ca_file:', 'tls_cert_file:', 'tls_key_file:', 'trash_interval:')
for line in open(base):
    if line.startswith(keep):
        print(line.rstrip())
print(f'rpc_addr: 127.0.0.1:{ports[2 * me]}\nhttp_addr: 127.0.0.1:0\nmeta_dir: {d}/meta{me}\nreplication: 1')
print(f'ha_id: nn{me}\nha_bootstrap: {"true" if me == 0 else "false"}\nha_peers:')
for i in range(3):
    print(f'  nn{i}: {{rpc: "127.0.0.1:{ports[2 * i]}", raft: "127.0.0.1:{ports[2 * i + 1]}"}}')
PY
    [ -n "${HA_EXTRA:-}" ] && printf '%b\n' "$HA_EXTRA" >> "$C/$g/nn$i.yaml"
    [ "$g" = ha2 ] && [ -n "${HA2_EXTRA:-}" ] && printf '%b\n' "$HA2_EXTRA" >> "$C/$g/nn$i.yaml"
    "$bin" namenode --config "$C/$g/nn$i.yaml" --ready-file "$C/$g/nn$i.ready" --log-file "$C/$g/nn$i.log" 2> "$C/$g/nn$i.err" &
    HAPIDS+=($!)
    GPIDS[$g]+="${GPIDS[$g]:+ }$!"
    addrs+="${addrs:+,}127.0.0.1:${PORTS[2 * i]}"
  done
  GADDRS[$g]=$addrs
  GBIN[$g]=$bin
}
want ha && start_group ha "$B"
if want ha2; then
  B2=${B2:-$B}
  [ -x "$B2" ] || { echo "variant ha2 needs B2=SMARTH_BINARY" >&2; exit 2; }
  start_group ha2 "$(realpath "$B2")"
fi
deadline=$((SECONDS + 300))
while want hdfsha && [ ! -s "$C/hdfsha.xml" ]; do
  if ! kill -0 "$JPID" 2>/dev/null; then
    [ $HDFSHA_TRIES -lt 3 ] || { cat "$C/hdfsha.serve.log"; exit 1; }
    cp "$C/hdfsha.serve.log" "$C/hdfsha.serve.$HDFSHA_TRIES.log"; start_hdfsha
  fi
  [ $SECONDS -lt $deadline ] || { echo "HDFS HA did not come up in 5 minutes" >&2; exit 1; }
  sleep 1
done
while want hdfs && [ ! -s "$C/hdfs.addr" ]; do
  kill -0 "$SPID" 2>/dev/null || { cat "$C/hdfs.serve.log"; exit 1; }
  [ $SECONDS -lt $deadline ] || { echo "HDFS did not come up in 5 minutes" >&2; exit 1; }
  sleep 1
done
TOKEN=$C/single/tokens/$(id -un).token
CA=$C/single/tls/ca.pem
# A group is ready when a client that names all three members gets an answer (from the active).
for g in "${!GADDRS[@]}"; do
  while ! SMARTH_TOKEN_FILE=$TOKEN SMARTH_TLS_CA_FILE=$CA SMARTH_NAMENODE=${GADDRS[$g]} "${GBIN[$g]}" fs -ls / > /dev/null 2>&1; do
    for p in ${GPIDS[$g]}; do kill -0 "$p" 2>/dev/null || { cat "$C/$g"/nn*.err; exit 1; }; done
    [ $SECONDS -lt $deadline ] || { echo "the smarth group $g has no active namenode after 5 minutes" >&2; exit 1; }
    sleep 1
  done
done

pidsof() { # the server processes of a variant
  case $1 in
    hdfsha) awk '{print $2}' "$C/hdfsha/pids" ;;
    hdfs) echo "$SPID" ;;
    ha|ha2) echo "${GPIDS[$1]}" ;;
    *) python3 -c "import json;print([d['pid'] for d in json.load(open('$C/$1/cluster.json'))['daemons'] if d['kind']=='namenode'][0])" ;;
  esac
}
cpu() { local s=0; for p in $(pidsof "$1"); do s=$((s + $(awk '{print $14 + $15}' /proc/$p/stat))); done; echo $s; }
# Context switches of every thread of the servers: how often their threads went to sleep and were
# woken (voluntary) or were preempted (involuntary), summed.
csw() { local p; for p in $(pidsof "$1"); do cat /proc/$p/task/*/status 2>/dev/null; done | awk '/ctxt_switches/{s += $2} END {print s + 0}'; }
runone() { # variant threads
  case $1 in
    hdfsha) java -cp "$CP" smarth.nnbench.Main bench --nn hans --conf "$C/hdfsha.xml" --threads "$2" --n "$N" --rounds 1 ;;
    hdfs) java -cp "$CP" smarth.nnbench.Main bench --nn "$(cat "$C/hdfs.addr")" --threads "$2" --n "$N" --rounds 1 ;;
    ha|ha2) SMARTH_TOKEN_FILE=$TOKEN SMARTH_TLS_CA_FILE=$CA SMARTH_NAMENODE=${GADDRS[$1]} "${GBIN[$1]}" bench nn --threads "$2" --n "$N" --rounds 1 ;;
    *) SMARTH_HOME="$C/$1" "$B" bench nn --threads "$2" --n "$N" --rounds 1 ;;
  esac
}
HZ=$(getconf CLK_TCK)
# HOLD=1: keep the variant ha's group up for profiling instead of running rounds. OUT_DIR/env.sh
# then sets SMARTH_TOKEN_FILE, SMARTH_TLS_CA_FILE and SMARTH_NAMENODE for clients, H0..H2 (the
# members' web ports: /debug/pprof with HA_EXTRA='pprof: true') and PIDS (for bench/nn-phase-cpu.py);
# creating OUT_DIR/stop stops it.
if [ -n "${HOLD:-}" ]; then
  # Written whole, then renamed: whoever waits for env.sh never reads half of it.
  echo "export SMARTH_TOKEN_FILE=$TOKEN SMARTH_TLS_CA_FILE=$CA SMARTH_NAMENODE=${GADDRS[ha]}" > "$C/env.sh.tmp"
  for i in 0 1 2; do echo "H$i=$(python3 -c "import json;print(json.load(open('$C/ha/nn$i.ready'))['http'])")" >> "$C/env.sh.tmp"; done
  echo "PIDS=\"${GPIDS[ha]}\"" >> "$C/env.sh.tmp"
  mv "$C/env.sh.tmp" "$C/env.sh"
  echo "holding the group; env in $C/env.sh; touch $C/stop to end"
  while [ ! -e "$C/stop" ]; do sleep 1; done
  exit 0
fi
# One untimed invocation per variant first: the clients warm up within each invocation, but HDFS's
# five server JVMs compile their paths only once, during the first (in the run of 2026-11-28 it
# took 129 s against 53-64 s for the later ones), which would favour the other sides in round 1.
for v in $VARIANTS; do
  runone "$v" "${THREADS%% *}" > "$C/warm.$v.out" 2>&1 || { echo "$v warm-up failed:"; cat "$C/warm.$v.out"; exit 1; }
done
for r in $(seq 1 "$R"); do for T in $THREADS; do for v in $VARIANTS; do
  # settle: let the previous invocation's processes finish exiting before the next one starts.
  sleep "${SETTLE:-2}"
  a=$(cpu "$v"); ca=$(csw "$v"); t0=$(date +%s.%N)
  out=$(runone "$v" "$T" 2>&1) || { echo "$v T=$T failed:"; echo "$out"; exit 1; }
  b=$(cpu "$v"); cb=$(csw "$v")
  if [ "$v" = hdfsha ] || [ "$v" = hdfs ]; then
    ops=$(echo "$out" | awk '/^round 1 /{printf "%s=%d ", $3, $(NF-1)}')
  else
    ops=$(echo "$out" | awk '/^ *(mkdir|create|stat|rename|delete) +[0-9]+ +[0-9]+ /{printf "%s=%s ", $1, $5}')
  fi
  echo "$v T=$T $ops server_cpu=$(echo "($b - $a) / $HZ" | bc -l | xargs printf '%.2f') server_csw=$((cb - ca)) wall=$(echo "$(date +%s.%N) - $t0" | bc | xargs printf '%.1f') load=$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$C/runs.log"
done; done
  [ -e "$C/stop" ] && { echo "stopped after round $r (OUT_DIR/stop)"; break; }
done
python3 "$HERE/nnruns.py" ha "$C/runs.log" "$VARIANTS"
