#!/usr/bin/env bash
# A/B load test of GET /api/frontend: two or more vexil-edge binaries (e.g. a copy of target/release/vexil-edge
# built before a change, and one after) take turns in offline mode on the same generated document, each
# round ending with the fixed-body server on one of their answers. Alternating rounds spread the machine's
# drift over all of them. Prints "binary req/s" per run. FIXED_BODY names the fixed-body servers of each
# round (default target/release/fixed-body-server; several, space-separated, e.g. built with and without a change).
# Usage: [FLAGS=200] [DURATION=8] [ROUNDS=3] [FIXED_BODY=…] bench/frontend-ab.sh EDGE_BINARY…
#   (after cargo build --release -p vexil-bench --bins; needs wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 EDGE_BINARY…" >&2; exit 2; }
source bench/server-turns.sh
TOKEN=default:development.bench-frontend
bench/generate_features.py "${FLAGS:-200}" > "$WORK/features.json"

# run LABEL COMMAND…: starts the server, loads it, stops it.
run() {
  local label=$1; shift
  start "$@"
  curl -s -H "Authorization: $TOKEN" "http://$ADDRESS/api/frontend?userId=user-7&sessionId=s-1&plan=pro" \
    > "$WORK/body.json"
  echo "$label $(wrk -t2 -c64 -d"${DURATION:-8}s" -s bench/frontend.lua "http://$ADDRESS" \
    | awk '/Requests\/sec/ {print $2}')"
  stop
}

# Each round starts with the next binary (A B, then B A, …): the first of a round measured a few percent low
# on this machine (BENCHMARKS.md), which a fixed order would charge to one binary.
edges=("$@")
for round in $(seq 0 $((${ROUNDS:-3} - 1))); do
  for i in $(seq 0 $((${#edges[@]} - 1))); do
    edge=${edges[$(((round + i) % ${#edges[@]}))]}
    run "$edge" "$edge" offline --listen 127.0.0.1:0 --features "$WORK/features.json" --frontend-tokens "$TOKEN"
  done
  for fixed in ${FIXED_BODY:-target/release/fixed-body-server}; do
    run "$fixed" "$fixed" "$WORK/body.json"
  done
done
