#!/usr/bin/env bash
# A local Vexil stack in one command: builds the release binaries, starts a control plane on SQLite
# (deploy/local/data/vexil.db, kept between runs) and one edge subscribed to it over gRPC, creates the demo data
# through the admin API when it is absent, prints the URLs, the tokens and a curl to try, and stops both on Ctrl-C.
#
# The four tokens below are DEMO-ONLY secrets, fixed so that every run can print them: never use them, or this
# script, for anything reachable by others. Ports: VEXIL_LOCAL_HTTP_PORT (4242), VEXIL_LOCAL_GRPC_PORT (4243),
# VEXIL_LOCAL_EDGE_PORT (3063); everything listens on 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/../.."

HTTP_PORT=${VEXIL_LOCAL_HTTP_PORT:-4242}
GRPC_PORT=${VEXIL_LOCAL_GRPC_PORT:-4243}
EDGE_PORT=${VEXIL_LOCAL_EDGE_PORT:-3063}
DATA_DIR=deploy/local/data
ADMIN_TOKEN='*:*.local-demo-admin-secret'
CLIENT_TOKEN='*:development.local-demo-client-secret'
FRONTEND_TOKEN='*:development.local-demo-frontend-secret'
# The edge's token for the control plane's gRPC channel (every environment).
EDGE_TOKEN='*:*.local-demo-edge-secret'
CONTROL_PLANE="http://127.0.0.1:$HTTP_PORT"
EDGE="http://127.0.0.1:$EDGE_PORT"

for tool in cargo curl; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is required" >&2; exit 1; }
done

# Each port must be free: otherwise another program would answer in place of ours.
for entry in "HTTP_PORT:VEXIL_LOCAL_HTTP_PORT" "GRPC_PORT:VEXIL_LOCAL_GRPC_PORT" "EDGE_PORT:VEXIL_LOCAL_EDGE_PORT"; do
  name=${entry%%:*}
  port=${!name}
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "run.sh: port $port is already in use by another program; stop it, or choose another port with" \
      "${entry#*:}=<port> ./deploy/local/run.sh" >&2
    exit 1
  fi
done

# The Debian packages the build needs (libxmlsec1 for SAML sign-in, libclang for its bindings).
scripts/build-deps
echo "building the release binaries (cargo build --release)…"
cargo build --release --quiet -p vexil-control-plane -p vexil-edge
# Where cargo put them (CARGO_TARGET_DIR or a configured target directory move them from ./target).
target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
[ -x "$target_dir/release/vexil-control-plane" ] ||
  { echo "run.sh: cannot find the built binaries under $target_dir/release" >&2; exit 1; }

mkdir -p "$DATA_DIR"
pids=()
stop() {
  trap - INT TERM EXIT
  if [ "${#pids[@]}" -gt 0 ]; then
    echo
    echo "stopping the edge and the control plane…"
    # The edge first, then the control plane; each finishes its in-flight requests on SIGTERM.
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
      kill -TERM "${pids[$i]}" 2>/dev/null || true
      wait "${pids[$i]}" 2>/dev/null || true
    done
    echo "stopped; the data stays in $DATA_DIR (delete it to start over)"
  fi
}
trap stop EXIT
trap 'exit 130' INT TERM

# Waits until the process PID has said `listening on` in LOG (so what answers is ours) and URL answers 2xx, or
# fails naming the log when the process has died or 30 s passed.
wait_ready() {
  local url=$1 pid=$2 log=$3
  for _ in $(seq 300); do
    if grep -q '^listening on' "$log" && curl -fs -o /dev/null "$url"; then return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "run.sh: it stopped; the end of $log:" >&2
      tail -n 20 "$log" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "run.sh: $url not ready after 30 s; see $log" >&2
  exit 1
}

"$target_dir/release/vexil-control-plane" \
  --listen "127.0.0.1:$HTTP_PORT" \
  --grpc-listen "127.0.0.1:$GRPC_PORT" \
  --database-url "sqlite://$DATA_DIR/vexil.db" \
  --init-admin-tokens "$ADMIN_TOKEN" \
  --init-client-tokens "$CLIENT_TOKEN" \
  --init-frontend-tokens "$FRONTEND_TOKEN" \
  --init-edge-tokens "$EDGE_TOKEN" \
  >"$DATA_DIR/control-plane.log" 2>&1 &
pids+=($!)
wait_ready "$CONTROL_PLANE/ready" "${pids[0]}" "$DATA_DIR/control-plane.log"

"$target_dir/release/vexil-edge" serve \
  --listen "127.0.0.1:$EDGE_PORT" \
  --upstream "http://127.0.0.1:$GRPC_PORT" \
  --token "$EDGE_TOKEN" \
  --snapshot-cache "$DATA_DIR/edge-snapshot.bin" \
  >"$DATA_DIR/edge.log" 2>&1 &
pids+=($!)

# Admin API call: prints the body, fails on a status outside 2xx unless it is listed in ALLOWED.
admin() {
  local method=$1 path=$2 body=${3:-} allowed=${4:-} out status
  out=$(mktemp)
  status=$(curl -s -o "$out" -w '%{http_code}' -X "$method" -H "Authorization: $ADMIN_TOKEN" \
    -H 'Content-Type: application/json' ${body:+--data "$body"} "$CONTROL_PLANE$path")
  if [[ $status != 2* && " $allowed " != *" $status "* ]]; then
    echo "run.sh: $method $path answered $status: $(cat "$out")" >&2
    rm -f "$out"
    exit 1
  fi
  cat "$out"
  rm -f "$out"
}

# Creates flag NAME in project demo with the given strategies and turns it on in development, unless the flag
# exists (so a rerun changes nothing). STRATEGIES are JSON bodies, one per argument.
demo_flag() {
  local name=$1 description=$2
  shift 2
  if [ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: $ADMIN_TOKEN" \
    "$CONTROL_PLANE/api/admin/projects/demo/features/$name")" = 200 ]; then
    return 0
  fi
  admin POST /api/admin/projects/demo/features "{\"name\":\"$name\",\"description\":\"$description\"}" >/dev/null
  for strategy in "$@"; do
    admin POST "/api/admin/projects/demo/features/$name/environments/development/strategies" "$strategy" >/dev/null
  done
  admin POST "/api/admin/projects/demo/features/$name/environments/development/on" >/dev/null
  created=1
}

created=0
admin POST /api/admin/projects '{"id":"demo","name":"Demo","description":"Created by deploy/local/run.sh"}' 409 >/dev/null
segments=$(admin GET /api/admin/segments)
if [[ $segments != *'"name":"beta-testers"'* ]]; then
  admin POST /api/admin/segments '{"name":"beta-testers","description":"Emails at example.com","project":"demo",
    "constraints":[{"contextName":"email","operator":"STR_ENDS_WITH","values":["@example.com"],"caseInsensitive":true}]}' \
    >/dev/null
  segments=$(admin GET /api/admin/segments)
fi
segment_id=$(sed -E 's/.*"id":([0-9]+),"name":"beta-testers".*/\1/' <<<"$segments")
[[ $segment_id =~ ^[0-9]+$ ]] || { echo "run.sh: cannot find segment beta-testers in $segments" >&2; exit 1; }

demo_flag welcome-banner "On for everyone" '{"name":"default"}'
demo_flag new-checkout "Half of the users in Norway and Sweden, in two variants" \
  '{"name":"flexibleRollout","parameters":{"rollout":"50","stickiness":"userId","groupId":"new-checkout"},
    "constraints":[{"contextName":"country","operator":"IN","values":["NO","SE"]}],
    "variants":[{"name":"blue","weight":500,"weightType":"variable","stickiness":"userId",
                 "payload":{"type":"json","value":"{\"color\":\"blue\"}"}},
                {"name":"green","weight":500,"weightType":"variable","stickiness":"userId",
                 "payload":{"type":"string","value":"green"}}]}'
demo_flag beta-dashboard "The beta-testers segment" "{\"name\":\"default\",\"segments\":[$segment_id]}"
demo_flag dark-mode "App versions above 2.0.0" \
  '{"name":"flexibleRollout","parameters":{"rollout":"100","stickiness":"default","groupId":"dark-mode"},
    "constraints":[{"contextName":"appVersion","operator":"SEMVER_GT","value":"2.0.0"}]}'
if [ "$created" = 1 ]; then
  admin PUT /api/admin/projects/demo/features/welcome-banner/environments/development/variants \
    '[{"name":"hello","weight":700,"weightType":"fix","stickiness":"default","payload":{"type":"string","value":"Hello!"}},
      {"name":"welcome","weight":300,"weightType":"variable","stickiness":"default","payload":{"type":"string","value":"Welcome!"},
       "overrides":[{"contextName":"userId","values":["alice"]}]}]' >/dev/null
  echo "created the demo data (project demo: 4 flags, segment beta-testers)"
else
  echo "the demo data is already there ($DATA_DIR/vexil.db)"
fi

wait_ready "$EDGE/ready" "${pids[1]}" "$DATA_DIR/edge.log"

cat <<EOF

Vexil is running. Ctrl-C stops both.
  web UI         $CONTROL_PLANE/projects/demo   (sign in with the admin token below; once users exist, "Sign in with an admin token")
  control plane  $CONTROL_PLANE   admin API, OpenAPI at $CONTROL_PLANE/docs/openapi.json
                 gRPC for edges on 127.0.0.1:$GRPC_PORT; log: $DATA_DIR/control-plane.log
  edge           $EDGE   /api/frontend, /api/client/features; log: $DATA_DIR/edge.log

Tokens (demo-only secrets, fixed by this script):
  admin     $ADMIN_TOKEN
  client    $CLIENT_TOKEN
  frontend  $FRONTEND_TOKEN
  edge      $EDGE_TOKEN   (the edge's, for the gRPC channel only)

Try:
  curl -H 'Authorization: $FRONTEND_TOKEN' '$EDGE/api/frontend?userId=alice&country=NO&email=alice@example.com&appVersion=2.1.0'
EOF

# Until Ctrl-C, or until one of them stops on its own.
set +e
wait -n "${pids[@]}"
echo "run.sh: a process stopped on its own; see the logs in $DATA_DIR" >&2
exit 1
