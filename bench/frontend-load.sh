#!/usr/bin/env bash
# Load test of GET /api/frontend: the release vexil-edge (offline mode) against a fixed-body axum server
# answering a body of the same size, with 200 and 2,000 flags. Needs wrk (apt-get install wrk) and
#   cargo build --release -p vexil-edge -p vexil-bench --bins
# Usage: bench/frontend-load.sh [DURATION_SECONDS] [CONNECTIONS] [WRK_THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-15}
CONNECTIONS=${2:-64}
THREADS=${3:-2}
TOKEN=default:development.bench-frontend
WORK=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"' EXIT

# Starts a server in the background; prints its address once it printed `listening on ADDR`.
start() {
  local log=$WORK/$1.log; shift
  "$@" > "$log" 2>/dev/null &
  PIDS+=($!)
  for _ in $(seq 100); do
    if grep -q '^listening on ' "$log"; then sed -n 's/^listening on //p' "$log" | head -1; return; fi
    sleep 0.1
  done
  echo "$* did not start" >&2; exit 1
}

for FLAGS in 200 2000; do
  bench/generate_features.py "$FLAGS" > "$WORK/features-$FLAGS.json"
  EDGE=$(start "edge-$FLAGS" target/release/vexil-edge offline --listen 127.0.0.1:0 \
    --features "$WORK/features-$FLAGS.json" --frontend-tokens "$TOKEN")
  curl -s -H "Authorization: $TOKEN" "http://$EDGE/api/frontend?userId=user-7&sessionId=s-1&plan=pro" \
    > "$WORK/body-$FLAGS.json"
  FIXED=$(start "fixed-$FLAGS" target/release/fixed-body-server "$WORK/body-$FLAGS.json")
  echo "== $FLAGS flags: response body $(wc -c < "$WORK/body-$FLAGS.json") bytes, $(grep -o '"name"' "$WORK/body-$FLAGS.json" | wc -l) names"
  for TARGET in "vexil-edge $EDGE" "fixed-body $FIXED"; do
    set -- $TARGET
    echo "-- $1"
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s bench/frontend.lua "http://$2" \
      | grep -E 'Requests/sec|Latency  |  50%|  99%|requests in|Non-2xx'
  done
done
