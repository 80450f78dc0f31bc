#!/usr/bin/env bash
# CPU time (user + system, from /proc/PID/stat) a release `vexil-edge offline` spends per request, for
# GET /api/frontend (bench/frontend.lua) and POST /ofrep/v1/evaluate/flags (bench/ofrep.lua), alternating, over
# bench/generate_features.py documents. Steadier than req/s on a shared machine: other load slows the
# requests, not the CPU each one costs. Needs wrk and `cargo build --release -p vexil-edge --bins`.
# Usage: [EDGE_BIN=path] bench/cpu-per-request.sh FLAGS [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
FLAGS=$1; ROUNDS=${2:-3}; DURATION=${3:-5}
WORK=$(mktemp -d)
bench/generate_features.py "$FLAGS" > "$WORK/f.json"
${EDGE_BIN:-target/release/vexil-edge} offline --listen 127.0.0.1:0 --features "$WORK/f.json" --frontend-tokens default:development.bench-frontend > "$WORK/edge.log" 2>&1 &
PID=$!
trap 'kill $PID; rm -rf $WORK' EXIT
sleep 1
EDGE=$(sed -n 's/^listening on //p' "$WORK/edge.log" | head -1)
ticks() { awk '{print $14+$15}' /proc/$PID/stat; }
HZ=$(getconf CLK_TCK)
for r in $(seq "$ROUNDS"); do
  for s in frontend ofrep; do
    a=$(ticks)
    req=$(wrk -t1 -c16 -d"${DURATION}s" -s "bench/$s.lua" "http://$EDGE" | awk '/requests in/{print $1}')
    b=$(ticks)
    echo "$FLAGS $s round $r: $req requests, $(awk -v t=$((b-a)) -v hz="$HZ" -v n="$req" 'BEGIN { printf "%.1f", t * 1e6 / hz / n }') us CPU per request"
  done
done
