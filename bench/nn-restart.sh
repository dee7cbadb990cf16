#!/usr/bin/env bash
# Restart cost of a smarth namenode on an existing meta dir (for example one
# written by internal/namenode's TestScaleImage): seconds from exec to the
# ready file (image load + edit log replay + listening) and the CPU time
# that took, then resident
# memory (VmRSS) and peak (VmHWM) once it is up. Usage: bench/nn-restart.sh SMARTH_BINARY META_DIR
set -euo pipefail
bin=$1 meta=$2
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
# No auth key: secure, the default (the first start writes
# auth.key and datanode.key, 0600, into META_DIR; nothing connects here).
printf 'meta_dir: %s\nrpc_addr: 127.0.0.1:0\nhttp_addr: 127.0.0.1:0\n' "$meta" >"$work/nn.yaml"
start=$(date +%s.%N)
"$bin" namenode --config "$work/nn.yaml" --ready-file "$work/ready" --log-file "$work/nn.log" &
pid=$!
until [ -s "$work/ready" ]; do
  kill -0 "$pid" 2>/dev/null || { tail "$work/nn.log"; exit 1; }
  sleep 0.05
done
end=$(date +%s.%N)
# CPU seconds the load took (user + system), which other work on the
# machine does not inflate the way it inflates the wall time.
cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$pid/stat")
sleep 5 # let the post-load garbage collection settle before reading RSS
echo "ready in $(echo "$end - $start" | bc) s wall, $cpu s CPU"
grep -E 'VmRSS|VmHWM' "/proc/$pid/status"
