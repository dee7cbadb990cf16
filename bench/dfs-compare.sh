#!/usr/bin/env bash
# Whole commands against Apache HDFS 3.4.1 on this machine (issue 27; docs/benchmarks.md, "Whole
# commands against HDFS 3.4.1"): `smarth fs put/cat/get` against FsShell's -put/-cat/-get (a fresh
# process or JVM per command, as users type them), and `cp` of the same local file, interleaved.
#   bench/dfs-compare.sh SMARTH_BINARY OUT_DIR [ROUNDS]
# Needs bench/nnjava built: (cd bench/nnjava && mvn -o -q -B package -DskipTests).
# SIZE (default 1GiB) is the file's size, BLOCK (default 64MiB, smarth's default) the block size of
# both clusters. Both clusters run 3 datanodes on 127.0.0.1, replication 3, checksums on, reads over
# TCP (HDFS's short-circuit reads are off by default; smarth's client has none).
# Each round, per command (put, cat, get), the two sides run one after the other, order flipped
# every round; in the get step `cp` of the local file runs between the two gets. Before every
# timed command an untimed `sync` flushes earlier writes; the command is timed alone (wall and CPU
# by /usr/bin/time), then a timed `sync` (its writeback) is logged beside it, not added. The
# written files are removed after each round on both sides, untimed.
# Writes OUT_DIR/runs.log (one line per command: seconds, client CPU, the daemons' CPU, the sync
# after it, the load average), then the tables (bench/dfsruns.py). Every process it starts is
# stopped on exit. Creating OUT_DIR/stop ends the run after the round in progress.
set -u
B=${1:?usage: dfs-compare.sh SMARTH_BINARY OUT_DIR [ROUNDS]}; C=${2:?out dir}; R=${3:-5}
B=$(realpath "$B")
SIZE=${SIZE:-1GiB}; BLOCK=${BLOCK:-64MiB}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$HERE/nnjava
CP="$W/target/nnjava-1.0.jar:$W/target/lib/*"
[ -f "$W/target/nnjava-1.0.jar" ] || { echo "build bench/nnjava first" >&2; exit 2; }
bytes() { # 64MiB, 1GiB or a number of bytes
  case $1 in *[KMGT]iB) numfmt --from=iec-i "${1%B}" ;; *[!0-9]*|'') return 1 ;; *) echo "$1" ;; esac
}
NBYTES=$(bytes "$SIZE") || { echo "SIZE=$SIZE: not a size (e.g. 1GiB, 64MiB)" >&2; exit 2; }
NBLOCK=$(bytes "$BLOCK") || { echo "BLOCK=$BLOCK: not a size (e.g. 64MiB)" >&2; exit 2; }
rm -rf "$C"; mkdir -p "$C"
C=$(realpath "$C")
JPID=
cleanup() {
  [ -n "$JPID" ] && kill "$JPID" 2>/dev/null && wait "$JPID" 2>/dev/null
  # serve-dfs stops its DataNodes from a shutdown hook; these are for a serve-dfs that died first.
  [ -s "$C/hdfs/pids" ] && for p in $(awk '$1 != "nn" {print $2}' "$C/hdfs/pids"); do kill "$p" 2>/dev/null; done
  [ -d "$C/smarth" ] && "$B" cluster down --home "$C/smarth" > /dev/null 2>&1
}
trap cleanup EXIT

# The local file: random bytes (nothing compresses or dedupes), written once, read once more so it
# is in the page cache for every put and cp.
head -c "$NBYTES" /dev/urandom > "$C/src.dat"
cat "$C/src.dat" > /dev/null

java -Xmx1g -cp "$CP" smarth.nnbench.Main serve-dfs --dir "$C/hdfs" --conf-file "$C/hdfs.xml" \
  --block-size "$NBLOCK" > "$C/hdfs.serve.log" 2>&1 &
JPID=$!
"$B" cluster up --home "$C/smarth" --datanodes 3 --nodemanagers=false --block-size "$BLOCK" \
  --namenode-addr 127.0.0.1:0 --namenode-http 127.0.0.1:0 > "$C/up.smarth.log" 2>&1 || { cat "$C/up.smarth.log"; exit 1; }
deadline=$((SECONDS + 300))
while [ ! -s "$C/hdfs.xml" ]; do
  kill -0 "$JPID" 2>/dev/null || { cat "$C/hdfs.serve.log"; exit 1; }
  [ $SECONDS -lt $deadline ] || { echo "HDFS did not come up in 5 minutes" >&2; exit 1; }
  sleep 1
done

# The commands as a user types them: `hdfs dfs` is FsShell in a fresh JVM (the hdfs script adds
# -Djava.net.preferIPv4Stack=true and no heap size by default) and finds the cluster's address in
# the configuration directory at the head of its class path ($HADOOP_CONF_DIR): fs.defaultFS in
# core-site.xml, dfs.blocksize in hdfs-site.xml (hdfs-default.xml, loaded after core-site.xml,
# would override it there). They are argv arrays, not shell functions, so /usr/bin/time runs
# (and times) the very process.
mkdir -p "$C/hdfsconf" && cp "$C/hdfs.xml" "$C/hdfsconf/core-site.xml" && cp "$C/hdfs.xml" "$C/hdfsconf/hdfs-site.xml"
HDFS=(java -Djava.net.preferIPv4Stack=true -cp "$C/hdfsconf:$CP" org.apache.hadoop.fs.FsShell)
SMARTH=(env "SMARTH_HOME=$C/smarth" "$B" fs)
hdfs() { "${HDFS[@]}" "$@"; }
smarth() { "${SMARTH[@]}" "$@"; }
setcmd() { # side cmd: CMDV is the command's argv
  case $1/$2 in
    hdfs/put) CMDV=("${HDFS[@]}" -put "$C/src.dat" /f.dat) ;;
    hdfs/cat) CMDV=("${HDFS[@]}" -cat /f.dat) ;;
    hdfs/get) CMDV=("${HDFS[@]}" -get /f.dat "$C/out.hdfs") ;;
    smarth/put) CMDV=("${SMARTH[@]}" put "$C/src.dat" /f.dat) ;;
    smarth/cat) CMDV=("${SMARTH[@]}" cat /f.dat) ;;
    # Short-circuit local reads off: every byte over the data port, as HDFS's cat here (its
    # short-circuit reads need libhadoop.so, which the jars from Maven do not carry).
    smarth/cat_tcp) CMDV=(env SMARTH_SHORT_CIRCUIT_READS=false "${SMARTH[@]}" cat /f.dat) ;;
    smarth/get) CMDV=("${SMARTH[@]}" get /f.dat "$C/out.smarth") ;;
    local/cp) CMDV=(cp "$C/src.dat" "$C/out.cp") ;;
  esac
}
clean() { # side: the round's files, untimed
  case $1 in
    hdfs) hdfs -rm -skipTrash /f.dat > /dev/null 2>&1; rm -f "$C/out.hdfs" ;;
    smarth) smarth rm -skipTrash /f.dat > /dev/null 2>&1; rm -f "$C/out.smarth" ;;
    local) rm -f "$C/out.cp" ;;
  esac
}
pidsof() { # the daemons of a side
  case $1 in
    hdfs) awk '{print $2}' "$C/hdfs/pids" ;;
    smarth) python3 -c "import json;print(' '.join(str(d['pid']) for d in json.load(open('$C/smarth/cluster.json'))['daemons']))" ;;
  esac
}
HZ=$(getconf CLK_TCK)
ticks() { local s=0 p; for p in $(pidsof "$1"); do s=$((s + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo $s; }
# DROP_CACHES=1 (root): before every put and cp, the page cache is emptied and then refilled with
# what a command needs to start (the source file, the smarth binary, HDFS's jars and the JDK's
# modules), so every write starts from the same memory: with the cache full of earlier rounds'
# files, the kernel reclaims pages during the write, and `cp` of 1 GiB took 1.9-3.1 s against
# 0.33 s with drops (session 17, docs/benchmarks.md). It is for the puts and cp only: the drop before a round's
# second put also evicts the first side's file, whose cat and get then read the disk.
JDK=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
dropcaches() {
  echo 1 > /proc/sys/vm/drop_caches
  cat "$C/src.dat" "$B" "$W"/target/*.jar "$W"/target/lib/* "$JDK/lib/modules" > /dev/null 2>&1
}
runone() { # side cmd round (0 = warm-up, not logged)
  local a b out t0 sy
  sync
  case $2 in put|cp) [ "${DROP_CACHES:-0}" = 1 ] && dropcaches ;; esac
  a=$(ticks "$1")
  setcmd "$1" "$2"
  /usr/bin/time -f "%e %U %S" -o "$C/time.tmp" "${CMDV[@]}" > /dev/null 2> "$C/err.tmp" || { echo "$1 $2 failed (round $3):"; cat "$C/err.tmp" "$C/time.tmp"; exit 1; }
  b=$(ticks "$1")
  t0=$(date +%s.%N); sync; sy=$(echo "$(date +%s.%N) - $t0" | bc)
  [ "$3" = 0 ] && return
  # The output file's size is checked, so a command that wrote nothing cannot pass as fast.
  case $2 in
    get|cp) out=$C/out.$1; [ "$1" = local ] && out=$C/out.cp
      [ "$(stat -c %s "$out")" = "$NBYTES" ] || { echo "$1 $2 wrote $(stat -c %s "$out") bytes, not $NBYTES" >&2; exit 1; } ;;
  esac
  read -r wall u s < <(tail -1 "$C/time.tmp")
  echo "$1 $2 round=$3 wall=$wall cpu=$(echo "$u + $s" | bc) server_cpu=$(echo "($b - $a) / $HZ" | bc -l | xargs printf '%.2f') sync=$(printf '%.2f' "$sy") load=$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$C/runs.log"
}
# cat is checked once per side (the warm-up): the bytes read back are the bytes put.
check_cat() { # side [cmd, default cat]
  local want got
  want=$(md5sum < "$C/src.dat"); setcmd "$1" "${2:-cat}"; got=$("${CMDV[@]}" 2> "$C/err.tmp" | md5sum)
  [ "$want" = "$got" ] || { echo "$1 cat returned other bytes than were put" >&2; exit 1; }
}

# And once per side, after the warm-up's put: the file has 3 replicas requested and BLOCK-sized
# blocks, so both sides store the same thing.
check_stat() {
  local got
  if [ "$1" = hdfs ]; then got=$(hdfs -stat "%r %o" /f.dat 2> "$C/err.tmp"); else got=$(smarth stat "%r %o" /f.dat 2> "$C/err.tmp"); fi
  [ "$got" = "3 $NBLOCK" ] || { echo "$1 stat %r %o of /f.dat: $got, want 3 $NBLOCK" >&2; cat "$C/err.tmp" >&2; exit 1; }
}

# One untimed round per side first: HDFS's DataNode JVMs compile their data paths during the
# first transfers, which would favour smarth in round 1.
for side in hdfs smarth; do
  for cmd in put cat get; do runone $side $cmd 0; done
  check_stat $side; check_cat $side; clean $side
done
runone smarth put 0; runone smarth cat_tcp 0; check_cat smarth cat_tcp; clean smarth
runone local cp 0; clean local
for r in $(seq 1 "$R"); do
  if [ $((r % 2)) = 1 ]; then A=hdfs; Z=smarth; else A=smarth; Z=hdfs; fi
  for cmd in put cat; do runone $A $cmd "$r"; runone $Z $cmd "$r"; done
  runone smarth cat_tcp "$r"
  runone $A get "$r"; runone local cp "$r"; runone $Z get "$r"
  for side in hdfs smarth local; do clean $side; done
  [ -e "$C/stop" ] && { echo "stopped after round $r (OUT_DIR/stop)"; break; }
done
echo
echo "SIZE=$SIZE ($NBYTES bytes), BLOCK=$BLOCK, replication 3, 3 datanodes per side:"
(cd "$HERE" && python3 dfsruns.py "$C/runs.log" "$NBYTES")
