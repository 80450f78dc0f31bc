#!/usr/bin/env bash
# User-space instructions a release `vexil-edge offline` executes per request, counted by callgrind (whatever
# else the machine does): GET /api/frontend (bench/frontend.lua) or POST /ofrep/v1/evaluate/flags
# (bench/ofrep.lua) over a bench/generate_features.py document of FLAGS flags. The edge runs under
# `valgrind --tool=callgrind --separate-threads=yes`; after a 3 s warm-up the counts are zeroed, wrk -t1 -c4
# runs SECONDS, the counts are dumped, and every thread's total is divided by wrk's requests. Needs valgrind
# (callgrind_control), wrk and `cargo build --release -p vexil-edge --bins`. Keeps the profiles in OUT (a
# temporary directory otherwise) for callgrind_annotate. CACHE_SIM=1 also simulates the caches and prints the
# first-level data cache misses (reads + writes) per request.
# Usage: [EDGE_BIN=path] [OUT=dir] [CACHE_SIM=1] bench/callgrind-per-request.sh FLAGS frontend|ofrep [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
FLAGS=$1; SCRIPT=$2; DURATION=${3:-10}
case $SCRIPT in frontend|ofrep) ;; *) echo "usage: $0 FLAGS frontend|ofrep [SECONDS]" >&2; exit 2 ;; esac
EDGE_BIN=$(realpath "${EDGE_BIN:-target/release/vexil-edge}")
WORK=$(mktemp -d)
OUT=${OUT:-$WORK}; mkdir -p "$OUT"
bench/generate_features.py "$FLAGS" > "$WORK/f.json"
CACHE=(); [ "${CACHE_SIM:-0}" = 1 ] && CACHE=(--cache-sim=yes)
valgrind --tool=callgrind --separate-threads=yes "${CACHE[@]}" --callgrind-out-file="$OUT/callgrind.out" \
  "$EDGE_BIN" offline --listen 127.0.0.1:0 --features "$WORK/f.json" \
  --frontend-tokens default:development.bench-frontend > "$WORK/edge.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; rm -rf "$WORK"' EXIT
EDGE=
for _ in $(seq 120); do
  EDGE=$(sed -n 's/^listening on //p' "$WORK/edge.log" | head -1)
  [ -n "$EDGE" ] && break
  sleep 0.5
done
[ -n "$EDGE" ] || { echo "the edge did not start under valgrind:" >&2; cat "$WORK/edge.log" >&2; exit 1; }
wrk -t1 -c4 -d3s -s "bench/$SCRIPT.lua" "http://$EDGE" > /dev/null
callgrind_control -z "$PID" > /dev/null 2>&1
REQUESTS=$(wrk -t1 -c4 -d"${DURATION}s" -s "bench/$SCRIPT.lua" "http://$EDGE" | awk '/requests in/{print $1}')
callgrind_control -d "$PID" > /dev/null 2>&1
sleep 1
INSTRUCTIONS=$(cat "$OUT"/callgrind.out* | awk '/^summary:/ {s += $2} END {print s}')
echo "$FLAGS flags $SCRIPT: $REQUESTS requests, $INSTRUCTIONS instructions, $((INSTRUCTIONS / REQUESTS)) per request"
if [ "${CACHE_SIM:-0}" = 1 ]; then
  # events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
  MISSES=$(cat "$OUT"/callgrind.out* | awk '/^summary:/ {s += $6 + $7} END {print s}')
  echo "$FLAGS flags $SCRIPT: $((MISSES / REQUESTS)) first-level data cache misses per request"
fi
