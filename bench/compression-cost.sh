#!/usr/bin/env bash
# What compressing the answers costs: CPU time (user + system, /proc/PID/stat) a release `vexil-edge offline`
# spends per GET /api/frontend (bench/frontend.lua) with no Accept-Encoding, then as Chromium and Firefox
# send it (zstd chosen) and as Safari sends it (gzip chosen), alternating in each round, over a
# bench/generate_features.py document of FLAGS flags; and the answer's size in each. The edge runs on CPU 0
# and wrk on CPU 1 (bench/pinned-edge.sh, as bench/cpu-per-request.sh). Ends with the medians and each one's ratio to no
# compression. The generated flags repeat more than real ones: real answers compress less, at a similar CPU
# cost per byte. Needs wrk, curl and `cargo build --release -p vexil-edge --bins`.
# Usage: [EDGE_BIN=path] [PIN=0] bench/compression-cost.sh FLAGS [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
FLAGS=$1; ROUNDS=${2:-3}; DURATION=${3:-5}
. bench/pinned-edge.sh
ENCODINGS=("" "gzip, deflate, br, zstd" "gzip, deflate, br")
name() { case $1 in "") echo none ;; *zstd) echo zstd ;; *) echo gzip ;; esac; }
for e in "${ENCODINGS[@]}"; do
  bytes=$(curl -s -H 'Authorization: default:development.bench-frontend' ${e:+-H "Accept-Encoding: $e"} \
    "http://$EDGE/api/frontend?userId=user-1&plan=pro" | wc -c)
  echo "$(name "$e"): $bytes bytes per answer"
done
for r in $(seq "$ROUNDS"); do
  for e in "${ENCODINGS[@]}"; do ACCEPT_ENCODING=$e cpu_round "$(name "$e")" "$r" frontend; done
done
none=$(awk '$2 == "none" {print $3}' "$WORK/rounds" | median)
for n in none zstd gzip; do
  m=$(awk -v n=$n '$2 == n {print $3}' "$WORK/rounds" | median)
  echo "$FLAGS flags $n: median $m us CPU per request, $(awk -v m="$m" -v b="$none" 'BEGIN { printf "%.2f", m / b }')x uncompressed"
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
