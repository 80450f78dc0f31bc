#!/usr/bin/env bash
# Load test of GET /api/frontend: the release vexil-edge (offline mode) against Unleash Edge (offline mode,
# same features file and token, when UNLEASH_EDGE names its binary) and a fixed-body axum server answering
# a body of the same size, with 200 and 2,000 flags (FLAG_SIZES). Prints each server's resident memory
# after its run. Needs wrk (apt-get install wrk) and
#   cargo build --release -p vexil-edge -p vexil-bench --bins
#   cargo install unleash-edge --version 20.1.0 --locked     # optional, for the Unleash Edge column
# Usage: [UNLEASH_EDGE=~/.cargo/bin/unleash-edge] [FLAG_SIZES="200 2000"] \
#        bench/frontend-load.sh [DURATION_SECONDS] [CONNECTIONS] [WRK_THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-15}
CONNECTIONS=${2:-64}
THREADS=${3:-2}
TOKEN=default:development.bench-frontend
FLAG_SIZES=${FLAG_SIZES:-200 2000}
UNLEASH_EDGE=${UNLEASH_EDGE:-}
WORK=$(mktemp -d)
# Servers are started inside $(…) subshells, so their pids go to a file the exit trap reads.
trap 'while read -r p; do kill "$p" 2>/dev/null || true; done < "$WORK/pids"; rm -rf "$WORK"' EXIT
: > "$WORK/pids"

# Starts a server in the background; prints its address once it printed `listening on ADDR`.
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

# Starts Unleash Edge on a free port (it prints no address); prints its address once it answers.
start_unleash_edge() {
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$UNLEASH_EDGE" --interface 127.0.0.1 --port "$port" offline --bootstrap-file "$1" --client-tokens "$TOKEN" \
    --frontend-tokens "$TOKEN" > "$WORK/unleash-edge.log" 2>&1 &
  echo $! >> "$WORK/pids"
  for _ in $(seq 100); do
    if curl -sf -o /dev/null -H "Authorization: $TOKEN" "http://127.0.0.1:$port/api/frontend"; then
      echo "127.0.0.1:$port"; return
    fi
    sleep 0.1
  done
  echo "unleash-edge did not start: $(tail -5 "$WORK/unleash-edge.log")" >&2; exit 1
}

# Resident memory of the process listening on ADDR's port.
rss_of() {
  local pid
  pid=$(ss -ltnpH "sport = :${1##*:}" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
  awk '/VmRSS/ {printf "%.1f MiB", $2 / 1024}' "/proc/$pid/status"
}

for FLAGS in $FLAG_SIZES; do
  bench/generate_features.py "$FLAGS" > "$WORK/features-$FLAGS.json"
  EDGE=$(start "edge-$FLAGS" target/release/vexil-edge offline --listen 127.0.0.1:0 \
    --features "$WORK/features-$FLAGS.json" --frontend-tokens "$TOKEN")
  curl -s -H "Authorization: $TOKEN" "http://$EDGE/api/frontend?userId=user-7&sessionId=s-1&plan=pro" \
    > "$WORK/body-$FLAGS.json"
  FIXED=$(start "fixed-$FLAGS" target/release/fixed-body-server "$WORK/body-$FLAGS.json")
  echo "== $FLAGS flags: response body $(wc -c < "$WORK/body-$FLAGS.json") bytes, $(grep -o '"name"' "$WORK/body-$FLAGS.json" | wc -l) names"
  TARGETS=("vexil-edge $EDGE" "fixed-body $FIXED")
  if [ -n "$UNLEASH_EDGE" ]; then
    TARGETS+=("unleash-edge $(start_unleash_edge "$WORK/features-$FLAGS.json")")
  fi
  for TARGET in "${TARGETS[@]}"; do
    set -- $TARGET
    echo "-- $1"
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s bench/frontend.lua "http://$2" \
      | grep -E 'Requests/sec|Latency  |  50%|  99%|requests in|Non-2xx'
    echo "   RSS after the run: $(rss_of "$2")"
  done
done
