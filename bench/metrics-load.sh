#!/usr/bin/env bash
# Usage metrics under load (BENCHMARKS.md): a release control plane with FLAGS flags on (a 100% rollout each,
# so every flag is counted on every request: the worst case for evaluation counting) and two release edges
# subscribed to it, one counting evaluations and one not (`--count-evaluations false`). wrk runs against
# them in turn, ROUNDS times (interleaved, as the machine is shared), then posts SDK metrics to the counting
# edge and checks that the control plane counted every accepted post.
# Needs wrk and: cargo build --release -p vexil-edge -p vexil-control-plane (or their binaries in VEXIL_BIN_DIR)
# Usage: bench/metrics-load.sh [DURATION_SECONDS] [CONNECTIONS] [WRK_THREADS] [ROUNDS] [FLAGS]
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-10}
CONNECTIONS=${2:-64}
THREADS=${3:-2}
ROUNDS=${4:-3}
FLAGS=${5:-200}
BIN=${VEXIL_BIN_DIR:-target/release}
ADMIN='*:*.bench-admin'
CLIENT=default:development.bench-client
FRONTEND=default:development.bench-frontend
EDGE_TOKEN='*:*.bench-edge'
WORK=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"' EXIT

# Starts a server in the background; prints the address it printed after PREFIX.
start() {
  local log=$WORK/$1.log prefix=$2; shift 2
  "$@" > "$log" 2>/dev/null &
  PIDS+=($!)
  for _ in $(seq 100); do
    if grep -q "^$prefix" "$log"; then sed -n "s/^$prefix//p" "$log" | head -1; return; fi
    sleep 0.1
  done
  echo "$* did not start" >&2; exit 1
}

CP_ARGS=(--listen 127.0.0.1:0 --grpc-listen 127.0.0.1:0 --database-url "sqlite://$WORK/cp.db"
  --init-admin-tokens "$ADMIN" --init-client-tokens "$CLIENT" --init-frontend-tokens "$FRONTEND"
  --init-edge-tokens "$EDGE_TOKEN")
CP=$(start cp 'listening on ' "$BIN"/vexil-control-plane "${CP_ARGS[@]}")
GRPC=$(sed -n 's/^grpc listening on //p' "$WORK/cp.log" | head -1)
for i in $(seq 1 "$FLAGS"); do
  curl -sf -o /dev/null -H "Authorization: $ADMIN" -H 'Content-Type: application/json' \
    -d "{\"name\":\"flag-$i\"}" "http://$CP/api/admin/projects/default/features"
  curl -sf -o /dev/null -X POST -H "Authorization: $ADMIN" \
    "http://$CP/api/admin/projects/default/features/flag-$i/environments/development/on"
done
ON=$(start edge-on 'listening on ' "$BIN"/vexil-edge serve --listen 127.0.0.1:0 \
  --upstream "http://$GRPC" --token "$EDGE_TOKEN" --edge-id bench-on --metrics-interval 1s --count-evaluations true)
OFF=$(start edge-off 'listening on ' "$BIN"/vexil-edge serve --listen 127.0.0.1:0 \
  --upstream "http://$GRPC" --token "$EDGE_TOKEN" --edge-id bench-off --metrics-interval 1s --count-evaluations false)
for EDGE in "$ON" "$OFF"; do
  for _ in $(seq 300); do
    N=$(curl -s -H "Authorization: $FRONTEND" "http://$EDGE/api/frontend?userId=u" | grep -o '"name"' | wc -l)
    [ "$N" -ge "$FLAGS" ] && break
    sleep 0.1
  done
done
echo "== GET /api/frontend, $FLAGS flags all on; ${DURATION}s runs, $CONNECTIONS connections, $THREADS wrk threads"
for ROUND in $(seq "$ROUNDS"); do
  # Odd rounds start with the counting edge, even rounds with the other.
  ORDER=("counting $ON" "not-counting $OFF")
  [ $((ROUND % 2)) = 0 ] && ORDER=("not-counting $OFF" "counting $ON")
  for TARGET in "${ORDER[@]}"; do
    set -- $TARGET
    printf 'round %s %-13s ' "$ROUND" "$1"
    nice -n 15 wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" -s bench/frontend.lua "http://$2" \
      | awk '/Requests\/sec/ {printf "%s req/s", $2} /Non-2xx/ {printf " (%s non-2xx)", $4} END {print ""}'
  done
done

echo "== POST /api/client/metrics (10 flags per post) to the counting edge"
OUT=$(nice -n 15 wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" -s bench/client-metrics.lua "http://$ON")
echo "$OUT" | grep -E 'Requests/sec|requests in|Non-2xx' || true
SENT=$(echo "$OUT" | awk '/requests in/ {print $1}')
BAD=$(echo "$OUT" | awk '/Non-2xx/ {print $4}')
sleep 3
COUNTED=$(curl -s -H "Authorization: $ADMIN" "http://$CP/api/admin/metrics/feature-toggles/bench-0" \
  | sed -n 's/.*"lastHour":{"yes":\([0-9]*\).*/\1/p')
echo "posts answered 2xx: $((SENT - ${BAD:-0})); yes counted for bench-0 by the control plane: $COUNTED"
curl -s "http://$ON/internal-backstage/prometheus" | grep -E '^usage_dropped_total' || true
