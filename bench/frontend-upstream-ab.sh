#!/usr/bin/env bash
# A/B load test of GET /api/frontend on an edge that is subscribed to a control plane (serve mode), as in
# production, rather than reading a file. For each build directory given (e.g. a worktree at an older commit and
# this one, both built with `cargo build --release -p vexil-control-plane -p vexil-edge`), in alternating
# rounds: start its control plane (SQLite, fresh file), create FLAGS flags over the admin API (each with a
# constrained 50 % flexibleRollout, every third with two variants, all on in development), start its edge
# against the gRPC port (with an edge token when the build knows `--init-edge-tokens`), wait until the edge
# serves them all, and load it with wrk. Prints "build req/s p99" per run. Needs wrk.
# Usage: [FLAGS=200] [DURATION=8] [ROUNDS=3] bench/frontend-upstream-ab.sh BUILD_DIR…
#   (BUILD_DIR holds release/vexil-control-plane and release/vexil-edge, i.e. a cargo target directory)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR…" >&2; exit 2; }
FLAGS=${FLAGS:-200}
WORK=$(mktemp -d)
trap 'for p in $(cat "$WORK/pids" 2>/dev/null); do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"' EXIT
: > "$WORK/pids"
ADMIN='*:*.bench-admin'
FRONTEND='default:development.bench-frontend'
EDGE_TOKEN='*:*.bench-edge'

# address LOG PREFIX: waits for "PREFIX ADDR" in LOG and prints ADDR.
address() {
  for _ in $(seq 300); do
    if grep -q "^$2 " "$1"; then sed -n "s/^$2 //p" "$1" | head -1; return; fi
    sleep 0.1
  done
  echo "no '$2' line in $1" >&2; exit 1
}

admin() { curl -sf -o /dev/null -X "$1" -H "Authorization: $ADMIN" -H 'Content-Type: application/json' \
  "http://$CP/api/admin/projects/default/features$2" ${3:+-d "$3"}; }

run() {
  local build=$1 edge_args=() cp_args=()
  rm -f "$WORK/cp.db"*
  if "$build/release/vexil-control-plane" --help | grep -q -- '--init-edge-tokens'; then
    cp_args=(--init-edge-tokens "$EDGE_TOKEN"); edge_args=(--token "$EDGE_TOKEN")
  fi
  "$build/release/vexil-control-plane" --listen 127.0.0.1:0 --grpc-listen 127.0.0.1:0 \
    --database-url "sqlite://$WORK/cp.db" --init-admin-tokens "$ADMIN" --init-frontend-tokens "$FRONTEND" \
    --limit-feature-flags $((FLAGS + 1)) "${cp_args[@]}" > "$WORK/cp.log" 2>/dev/null &
  echo $! >> "$WORK/pids"; local cp_pid=$!
  CP=$(address "$WORK/cp.log" 'listening on')
  local grpc; grpc=$(address "$WORK/cp.log" 'grpc listening on')
  for i in $(seq "$FLAGS"); do
    local name="flag-$i"
    admin POST "" "{\"name\":\"$name\"}"
    admin POST "/$name/environments/development/strategies" "{\"name\":\"flexibleRollout\",
      \"parameters\":{\"rollout\":\"50\",\"stickiness\":\"default\",\"groupId\":\"$name\"},
      \"constraints\":[{\"contextName\":\"plan\",\"operator\":\"IN\",\"values\":[\"pro\",\"team\"]}]}"
    if [ $((i % 3)) = 0 ]; then
      admin PUT "/$name/environments/development/variants" \
        '[{"name":"a","weight":500,"weightType":"variable","stickiness":"default"},
          {"name":"b","weight":500,"weightType":"variable","stickiness":"default"}]'
    fi
    admin POST "/$name/environments/development/on"
  done
  "$build/release/vexil-edge" serve --listen 127.0.0.1:0 --upstream "http://$grpc" "${edge_args[@]}" \
    > "$WORK/edge.log" 2>/dev/null &
  echo $! >> "$WORK/pids"; local edge_pid=$!
  local edge; edge=$(address "$WORK/edge.log" 'listening on')
  local query='userId=user-7&sessionId=s-1&plan=pro'
  for _ in $(seq 100); do
    [ "$(curl -s -H "Authorization: $FRONTEND" "http://$edge/api/frontend?$query" | grep -o '"name"' | wc -l)" \
      -ge $((FLAGS / 4)) ] && break
    sleep 0.1
  done
  local out; out=$(wrk -t2 -c64 -d"${DURATION:-8}s" --latency -s bench/frontend.lua "http://$edge")
  echo "$build $(awk '/Requests\/sec/ {print $2}' <<< "$out") p99=$(awk '$1 == "99%" {print $2}' <<< "$out")"
  kill "$edge_pid" "$cp_pid"; wait "$edge_pid" "$cp_pid" 2>/dev/null || true
}

for _ in $(seq "${ROUNDS:-3}"); do
  for build in "$@"; do run "$build"; done
done
