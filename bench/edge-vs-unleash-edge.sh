#!/usr/bin/env bash
# `vexil-edge edge` beside Unleash Edge 20.x, both in front of the same real Unleash 8.2 server (npm
# unleash-server, started on its own Postgres database by edge/tests/e2e/js/unleash-server.mjs), in one run:
# Unleash gets FLAGS flags through its admin API (each a 50 % flexibleRollout constrained to plan IN
# [pro, enterprise], every third with two variants, all on in development) and a client and a frontend token;
# both edges start on free ports configured only by Unleash Edge's variables (UPSTREAM_URL, TOKENS,
# PORT, INTERFACE); once both serve every flag, wrk loads them in alternating rounds:
#   frontend: GET /api/frontend (varying userId, sessionId, plan) with the frontend token,
#   client:   GET /api/client/features with the client token.
# Prints every round (req/s, p99, RSS after it), then the medians per edge and route, the ratio and the
# machine's load average before and after. Needs node, python3, curl, wrk (apt-get install wrk),
# Postgres at TEST_DATABASE_URL, `cargo build --release -p vexil-edge`, and Unleash Edge:
#   nice cargo install --locked unleash-edge --version 20.1.0 --root .test-deps/unleash-edge
# Usage: [FLAGS=200] [ROUNDS=3] [DURATION=10] [CONNECTIONS=64] [THREADS=2] [UNLEASH_EDGE=path] \
#        [VEXIL_EDGE=path] bench/edge-vs-unleash-edge.sh
set -euo pipefail
cd "$(dirname "$0")/.."
FLAGS=${FLAGS:-200}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
UNLEASH_EDGE=${UNLEASH_EDGE:-.test-deps/unleash-edge/bin/unleash-edge}
VEXIL_EDGE=${VEXIL_EDGE:-target/release/vexil-edge}
POSTGRES=${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}
ADMIN='*:*.bench-unleash-admin'
for tool in node python3 curl wrk; do
  command -v "$tool" > /dev/null || { echo "$tool is missing" >&2; exit 1; }
done
for bin in "$UNLEASH_EDGE" "$VEXIL_EDGE"; do
  [ -x "$bin" ] || { echo "$bin is missing (see the comment at the top)" >&2; exit 1; }
done

WORK=$(mktemp -d)
: > "$WORK/pids"
cleanup() {
  while read -r p; do kill "$p" 2>/dev/null || true; done < "$WORK/pids"
  exec 3>&- 2>/dev/null || true # Unleash stops (and drops its database) when its standard input closes
  sleep 1
  rm -rf "$WORK"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Unleash 8.2, reading its standard input from a FIFO this script holds open.
mkfifo "$WORK/unleash.in"
UNLEASH_SERVER_MODULE=$PWD/.test-deps/node_modules/unleash-server/dist/lib/server-impl.js \
  node edge/tests/e2e/js/unleash-server.mjs "$POSTGRES" "vexil_bench_unleash_$$" "$ADMIN" \
  < "$WORK/unleash.in" > "$WORK/unleash.log" 2>&1 &
exec 3> "$WORK/unleash.in"
for _ in $(seq 1200); do grep -q '^unleash listening on ' "$WORK/unleash.log" && break; sleep 0.1; done
PORT=$(sed -n 's/^unleash listening on //p' "$WORK/unleash.log" | head -1)
[ -n "$PORT" ] || { echo "Unleash did not start: $(tail -5 "$WORK/unleash.log")" >&2; exit 1; }
UNLEASH=http://127.0.0.1:$PORT
echo "Unleash 8.2.0 at $UNLEASH"

# The flags and tokens, through Unleash's admin API.
python3 - "$UNLEASH" "$ADMIN" "$FLAGS" > "$WORK/tokens" <<'EOF'
import json, sys, urllib.request
base, admin, flags = sys.argv[1], sys.argv[2], int(sys.argv[3])
def post(path, body):
    request = urllib.request.Request(base + path, json.dumps(body).encode(), method="POST",
        headers={"Authorization": admin, "Content-Type": "application/json"})
    with urllib.request.urlopen(request) as answer:
        text = answer.read()
        return json.loads(text) if text else None
for i in range(flags):
    name = f"bench-flag-{i:04d}"
    post("/api/admin/projects/default/features", {"name": name, "type": "release"})
    strategy = {"name": "flexibleRollout",
        "parameters": {"rollout": "50", "stickiness": "default", "groupId": name},
        "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro", "enterprise"]}]}
    if i % 3 == 0:
        strategy["variants"] = [
            {"name": "red", "weight": 500, "weightType": "variable", "stickiness": "default"},
            {"name": "blue", "weight": 500, "weightType": "variable", "stickiness": "default"}]
    post(f"/api/admin/projects/default/features/{name}/environments/development/strategies", strategy)
    post(f"/api/admin/projects/default/features/{name}/environments/development/on", {})
for kind in ("client", "frontend"):
    token = post("/api/admin/api-tokens", {"tokenName": f"bench-{kind}", "type": kind,
        "environment": "development", "projects": ["*"]})
    print(token["secret"])
EOF
CLIENT=$(sed -n 1p "$WORK/tokens")
FRONTEND=$(sed -n 2p "$WORK/tokens")
echo "seeded $FLAGS flags"
# Unleash's /edge/validate knows a new token a few seconds later.
for _ in $(seq 300); do
  curl -sf -X POST -H 'Content-Type: application/json' -d "{\"tokens\":[\"$CLIENT\",\"$FRONTEND\"]}" \
    "$UNLEASH/edge/validate" | grep -q "$FRONTEND" && break
  sleep 0.1
done

# Both edges, configured by the same variables only.
declare -A ADDRESS
start_edge() { # NAME BINARY
  local port
  port=$(free_port)
  env -i PATH="$PATH" UPSTREAM_URL="$UNLEASH" TOKENS="$CLIENT" PORT="$port" INTERFACE=127.0.0.1 \
    "$2" edge > "$WORK/$1.log" 2>&1 &
  echo $! >> "$WORK/pids"
  ADDRESS[$1]=127.0.0.1:$port
}
start_edge vexil-edge "$VEXIL_EDGE"
start_edge unleash-edge "$UNLEASH_EDGE"
served() { # ADDRESS: how many flags its /api/client/features holds
  curl -s -H "Authorization: $CLIENT" "http://$1/api/client/features" \
    | python3 -c 'import json,sys; print(len(json.load(sys.stdin).get("features", [])))' 2>/dev/null || echo 0
}
for name in vexil-edge unleash-edge; do
  for _ in $(seq 600); do
    [ "$(served "${ADDRESS[$name]}")" = "$FLAGS" ] \
      && curl -sf -o /dev/null -H "Authorization: $FRONTEND" "http://${ADDRESS[$name]}/api/frontend?userId=u1" \
      && break
    sleep 0.1
  done
  [ "$(served "${ADDRESS[$name]}")" = "$FLAGS" ] || { echo "$name does not serve the flags: $(tail -5 "$WORK/$name.log")" >&2; exit 1; }
  echo "$name at ${ADDRESS[$name]} serves $FLAGS flags"
done
echo "$("$VEXIL_EDGE" --version 2>&1 | head -1) beside $UNLEASH_EDGE (Unleash Edge prints no version)"
for name in vexil-edge unleash-edge; do
  printf '%s /api/frontend: %s bytes, /api/client/features: %s bytes\n' "$name" \
    "$(curl -s -H "Authorization: $FRONTEND" "http://${ADDRESS[$name]}/api/frontend?userId=user-7&sessionId=s-1&plan=pro" | wc -c)" \
    "$(curl -s -H "Authorization: $CLIENT" "http://${ADDRESS[$name]}/api/client/features" | wc -c)"
done

cat > "$WORK/frontend.lua" <<'EOF'
local plans = {"free", "pro", "enterprise"}
local token = os.getenv("BENCH_TOKEN")
request = function()
  local u = math.random(1, 100000)
  local path = "/api/frontend?userId=user-" .. u .. "&sessionId=s-" .. math.random(1, 1000000)
    .. "&plan=" .. plans[(u % 3) + 1]
  return wrk.format("GET", path, {["Authorization"] = token})
end
EOF
cat > "$WORK/client.lua" <<'EOF'
local token = os.getenv("BENCH_TOKEN")
request = function()
  return wrk.format("GET", "/api/client/features", {["Authorization"] = token})
end
EOF

rss_of() { # ADDRESS → MiB of the process listening there
  local pid
  pid=$(ss -ltnpH "sport = :${1##*:}" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
  awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$pid/status"
}
# p99 from wrk's latency distribution, in ms.
p99_ms() { awk '$1 == "99%" { v = $2; if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v) } else if (v ~ /s$/) { sub(/s$/, "", v); v *= 1000 } printf "%.2f", v }'; }

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
echo "load average before: $LOAD_BEFORE ($(nproc) CPUs); wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s, $ROUNDS rounds"
: > "$WORK/results"
for round in $(seq "$ROUNDS"); do
  for route in frontend client; do
    token=$FRONTEND; [ "$route" = client ] && token=$CLIENT
    # Alternate which edge goes first, so that drift falls on both.
    order="vexil-edge unleash-edge"; [ $((round % 2)) = 0 ] && order="unleash-edge vexil-edge"
    for name in $order; do
      out=$(BENCH_TOKEN=$token wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency \
        -s "$WORK/$route.lua" "http://${ADDRESS[$name]}")
      rps=$(awk '/Requests\/sec/ {printf "%.0f", $2}' <<< "$out")
      p99=$(p99_ms <<< "$out")
      errors=$(awk '/Non-2xx|Socket errors/ {print}' <<< "$out" | tr '\n' ' ')
      rss=$(rss_of "${ADDRESS[$name]}")
      echo "round $round $route $name: $rps req/s, p99 $p99 ms, RSS $rss MiB ${errors}"
      echo "$route $name $rps $p99 $rss" >> "$WORK/results"
    done
  done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

echo
echo "medians over $ROUNDS rounds ($FLAGS flags; load average $LOAD_BEFORE before, $LOAD_AFTER after):"
python3 - "$WORK/results" <<'EOF'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
def median(route, name, column):
    return statistics.median(float(r[column]) for r in rows if r[0] == route and r[1] == name)
print("| route | edge | req/s | p99 ms | RSS MiB |")
print("|---|---|---:|---:|---:|")
for route, path in (("frontend", "/api/frontend"), ("client", "/api/client/features")):
    for name in ("vexil-edge", "unleash-edge"):
        print(f"| `{path}` | {name} | {median(route, name, 2):,.0f} | {median(route, name, 3):.2f} | {median(route, name, 4):.1f} |")
for route, path in (("frontend", "/api/frontend"), ("client", "/api/client/features")):
    rps = median(route, "vexil-edge", 2) / median(route, "unleash-edge", 2)
    p99 = median(route, "unleash-edge", 3) / median(route, "vexil-edge", 3)
    rss = median(route, "unleash-edge", 4) / median(route, "vexil-edge", 4)
    print(f"{path}: vexil-edge {rps:.2f}x the req/s, p99 {p99:.2f}x lower, RSS {rss:.2f}x smaller")
EOF
