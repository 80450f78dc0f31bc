#!/usr/bin/env bash
# OFREP bulk evaluation (POST /ofrep/v1/evaluate/flags) against GET /api/frontend on the same release
# vexil-edge (offline mode), same flags, same contexts (bench/ofrep.lua, bench/frontend.lua), alternating runs.
# OFREP answers every flag of the token's projects (enabled or not, with value, variant, reason, metadata),
# /api/frontend only the enabled ones, so the bodies differ; both sizes are printed. Needs wrk and
#   cargo build --release -p vexil-edge --bins
# Usage: [FLAG_SIZES="200 2000"] bench/ofrep-load.sh [DURATION_SECONDS] [CONNECTIONS] [WRK_THREADS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-10}
CONNECTIONS=${2:-64}
THREADS=${3:-2}
RUNS=${4:-2}
TOKEN=default:development.bench-frontend
FLAG_SIZES=${FLAG_SIZES:-200 2000}
WORK=$(mktemp -d)
trap 'while read -r p; do kill "$p" 2>/dev/null || true; done < "$WORK/pids"; rm -rf "$WORK"' EXIT
: > "$WORK/pids"

start() {
  local log=$WORK/$1.log; shift
  "$@" > "$log" 2>/dev/null &
  echo $! >> "$WORK/pids"
  for _ in $(seq 100); do
    if grep -q '^listening on ' "$log"; then sed -n 's/^listening on //p' "$log" | head -1; return; fi
    sleep 0.1
  done
  echo "$* did not start" >&2; exit 1
}

for FLAGS in $FLAG_SIZES; do
  bench/generate_features.py "$FLAGS" > "$WORK/features-$FLAGS.json"
  EDGE=$(start "edge-$FLAGS" target/release/vexil-edge offline --listen 127.0.0.1:0 \
    --features "$WORK/features-$FLAGS.json" --frontend-tokens "$TOKEN")
  FRONTEND_BYTES=$(curl -s -H "Authorization: $TOKEN" "http://$EDGE/api/frontend?userId=user-7&sessionId=s-1&plan=pro" | wc -c)
  OFREP_BYTES=$(curl -s -X POST -H "Authorization: $TOKEN" -H 'Content-Type: application/json' \
    -d '{"context":{"targetingKey":"user-7","sessionId":"s-1","plan":"pro"}}' \
    "http://$EDGE/ofrep/v1/evaluate/flags" | wc -c)
  echo "== $FLAGS flags: /api/frontend body $FRONTEND_BYTES bytes, OFREP bulk body $OFREP_BYTES bytes"
  for RUN in $(seq "$RUNS"); do
    for SCRIPT in frontend ofrep; do
      echo "-- run $RUN $SCRIPT"
      wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "bench/$SCRIPT.lua" "http://$EDGE" \
        | grep -E 'Requests/sec|  99%|Non-2xx'
    done
  done
done
