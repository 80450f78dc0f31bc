#!/usr/bin/env bash
# CPU time (user + system, from /proc/PID/stat) a release `vexil-edge offline` spends per request, for
# GET /api/frontend (bench/frontend.lua) and POST /ofrep/v1/evaluate/flags (bench/ofrep.lua), alternating, over
# bench/generate_features.py documents. Steadier than req/s on a shared machine: other load slows the
# requests, not the CPU each one costs. On a machine of two CPUs or more the edge runs on CPU 0 and wrk on
# CPU 1 (PIN=0: both anywhere), so that the load generator's own work (OFREP's bodies and longer answers cost
# wrk more) neither takes the edge's CPU nor its caches. Ends with the medians and the median of the rounds'
# OFREP/frontend ratios. Needs wrk and `cargo build --release -p vexil-edge --bins`.
# Usage: [EDGE_BIN=path] [PIN=0] bench/cpu-per-request.sh FLAGS [ROUNDS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
FLAGS=$1; ROUNDS=${2:-3}; DURATION=${3:-5}
EDGE_CPU=(); WRK_CPU=()
if [ "${PIN:-1}" != 0 ] && [ "$(nproc)" -ge 2 ]; then
  EDGE_CPU=(taskset -c 0); WRK_CPU=(taskset -c 1)
fi
WORK=$(mktemp -d)
bench/generate_features.py "$FLAGS" > "$WORK/f.json"
"${EDGE_CPU[@]}" "${EDGE_BIN:-target/release/vexil-edge}" offline --listen 127.0.0.1:0 --features "$WORK/f.json" --frontend-tokens default:development.bench-frontend > "$WORK/edge.log" 2>&1 &
PID=$!
trap 'kill $PID; rm -rf $WORK' EXIT
sleep 1
EDGE=$(sed -n 's/^listening on //p' "$WORK/edge.log" | head -1)
ticks() { awk '{print $14+$15}' /proc/$PID/stat; }
HZ=$(getconf CLK_TCK)
echo "$FLAGS flags, ${EDGE_CPU[*]:-unpinned} edge, ${WRK_CPU[*]:-unpinned} wrk, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  for s in frontend ofrep; do
    a=$(ticks)
    req=$("${WRK_CPU[@]}" wrk -t1 -c16 -d"${DURATION}s" -s "bench/$s.lua" "http://$EDGE" | awk '/requests in/{print $1}')
    b=$(ticks)
    us=$(awk -v t=$((b-a)) -v hz="$HZ" -v n="$req" 'BEGIN { printf "%.2f", t * 1e6 / hz / n }')
    echo "$FLAGS $s round $r: $req requests, $us us CPU per request"
    echo "$r $s $us" >> "$WORK/rounds"
  done
done
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2)}'; }
fe=$(awk '$2 == "frontend" {print $3}' "$WORK/rounds" | median)
of=$(awk '$2 == "ofrep" {print $3}' "$WORK/rounds" | median)
ratio=$(awk '$2 == "frontend" {f[$1]=$3} $2 == "ofrep" {print $3 / f[$1]}' "$WORK/rounds" | median)
echo "$FLAGS flags: medians frontend $fe us, ofrep $of us; OFREP/frontend median of the rounds' ratios $(printf '%.3f' "$ratio"), load $(cut -d' ' -f1-3 /proc/loadavg)"
