#!/usr/bin/env bash
# What compressing the answers costs: CPU time (user + system, /proc/PID/stat) a release `vexil-edge offline`
# spends per GET /api/frontend (bench/frontend.lua) with no Accept-Encoding, then as Chromium and Firefox
# send it (zstd chosen) and as Safari sends it (gzip chosen), alternating in each round, over a
# bench/generate_features.py document of FLAGS flags; and the answer's size in each. The edge runs on CPU 0
# and wrk on CPU 1, as in bench/cpu-per-request.sh. Ends with the medians and each one's ratio to no
# compression. The generated flags repeat more than real ones: real answers compress less, at a similar CPU
# cost per byte. Needs wrk, curl and `cargo build --release -p vexil-edge --bins`.
# Usage: [EDGE_BIN=path] bench/compression-cost.sh FLAGS [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
FLAGS=$1; ROUNDS=${2:-3}; DURATION=${3:-5}
EDGE_CPU=(); WRK_CPU=()
if [ "$(nproc)" -ge 2 ]; then EDGE_CPU=(taskset -c 0); WRK_CPU=(taskset -c 1); fi
WORK=$(mktemp -d)
bench/generate_features.py "$FLAGS" > "$WORK/f.json"
"${EDGE_CPU[@]}" "${EDGE_BIN:-target/release/vexil-edge}" offline --listen 127.0.0.1:0 --features "$WORK/f.json" \
  --frontend-tokens default:development.bench-frontend > "$WORK/edge.log" 2>&1 &
PID=$!
trap 'kill $PID; rm -rf $WORK' EXIT
sleep 1
EDGE=$(sed -n 's/^listening on //p' "$WORK/edge.log" | head -1)
ticks() { awk '{print $14+$15}' /proc/$PID/stat; }
HZ=$(getconf CLK_TCK)
ENCODINGS=("" "gzip, deflate, br, zstd" "gzip, deflate, br")
name() { case $1 in "") echo none ;; *zstd) echo zstd ;; *) echo gzip ;; esac; }
echo "$FLAGS flags, ${EDGE_CPU[*]:-unpinned} edge, ${WRK_CPU[*]:-unpinned} wrk, load $(cut -d' ' -f1-3 /proc/loadavg)"
for e in "${ENCODINGS[@]}"; do
  bytes=$(curl -s -H 'Authorization: default:development.bench-frontend' ${e:+-H "Accept-Encoding: $e"} \
    "http://$EDGE/api/frontend?userId=user-1&plan=pro" | wc -c)
  echo "$(name "$e"): $bytes bytes per answer"
done
for r in $(seq "$ROUNDS"); do
  for e in "${ENCODINGS[@]}"; do
    a=$(ticks)
    req=$(ACCEPT_ENCODING=$e "${WRK_CPU[@]}" wrk -t1 -c16 -d"${DURATION}s" -s bench/frontend.lua "http://$EDGE" \
      | awk '/requests in/{print $1}')
    b=$(ticks)
    us=$(awk -v t=$((b-a)) -v hz="$HZ" -v n="$req" 'BEGIN { printf "%.2f", t * 1e6 / hz / n }')
    echo "round $r $(name "$e"): $req requests, $us us CPU per request"
    echo "$r $(name "$e") $us" >> "$WORK/rounds"
  done
done
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2)}'; }
none=$(awk '$2 == "none" {print $3}' "$WORK/rounds" | median)
for n in none zstd gzip; do
  m=$(awk -v n=$n '$2 == n {print $3}' "$WORK/rounds" | median)
  echo "$FLAGS flags $n: median $m us CPU per request, $(awk -v m="$m" -v b="$none" 'BEGIN { printf "%.2f", m / b }')x uncompressed"
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
