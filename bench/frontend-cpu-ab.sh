#!/usr/bin/env bash
# CPU time (user + system, /proc/PID/stat) per GET /api/frontend request of two `vexil-edge offline` builds,
# started side by side on one bench/generate_features.py document and loaded alternately with wrk
# (bench/frontend.lua, 1 thread, 16 connections), in nanoseconds: for a change too small for req/s on a
# shared machine. Usage: bench/frontend-cpu-ab.sh BEFORE_EDGE AFTER_EDGE [FLAGS] [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE=$1; AFTER=$2; FLAGS=${3:-200}; ROUNDS=${4:-5}; DURATION=${5:-5}
WORK=$(mktemp -d)
bench/generate_features.py "$FLAGS" > "$WORK/f.json"
declare -A BIN=([before]=$BEFORE [after]=$AFTER) PID ADDR
for b in before after; do
  "${BIN[$b]}" offline --listen 127.0.0.1:0 --features "$WORK/f.json" \
    --frontend-tokens default:development.bench-frontend > "$WORK/$b.log" 2>&1 &
  PID[$b]=$!
done
trap 'kill ${PID[before]} ${PID[after]}; rm -rf $WORK' EXIT
sleep 1
for b in before after; do ADDR[$b]=$(sed -n 's/^listening on //p' "$WORK/$b.log" | head -1); done
HZ=$(getconf CLK_TCK)
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
for r in $(seq "$ROUNDS"); do
  for b in before after; do
    a=$(ticks "${PID[$b]}")
    req=$(wrk -t1 -c16 -d"${DURATION}s" -s bench/frontend.lua "http://${ADDR[$b]}" | awk '/requests in/{print $1}')
    c=$(ticks "${PID[$b]}")
    echo "$FLAGS flags, $b round $r: $req requests, $(( (c-a) * 1000000000 / HZ / req )) ns CPU per request"
  done
done
